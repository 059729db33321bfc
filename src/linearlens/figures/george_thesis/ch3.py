"""Figures for Chapter 3 (NNGeometry): Fig 3.1 (the code listing, typeset) and Fig 3.2 (the schematic of
NNGeometry's components), both drawn; Figs 3.3-3.6 (quality of the diagonal, quasi-diagonal, KFAC and EKFAC
Fisher approximations: solve, mv, vTMv, trace) and Fig 3.7 (two-class NTK Gram and its kernel PCA over
training), plotted from the showcase's runs."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from ...analysis.george_thesis.ch3 import (
    REPRESENTATION_NAMES,
    checkpoint_label,
    kernel_pca,
    mean_metric,
    metric_summary,
    model_label,
    normalised_gram,
    pair_summary,
    quality_frame,
    read_pairs,
    read_quality,
    solve_score,
)
from ...manifests.jobs import FigureJob
from ..style import apply_style, save_figure

# Fig 3.1 as the thesis prints it: the same lines for two representations of the FIM. Line 3, the
# representation, is the one difference that changes the computation.
LISTING_COLUMNS = {
    "PMatKFAC": ("# using a KFAC Fisher", "F_kfac"),
    "PMatDense": ("# using implicit computation", "F_full"),
}
REPRESENTATION_LINE = 3


def listing_lines(representation: str, name: str) -> list[str]:
    indent = " " * (len(name) + 7)
    return [f"{name} = FIM(model=model,", f"{indent}loader=loader,", f"{indent}representation={representation},",
            f"{indent}n_output=10)", "", "v = PVector.from_model(model)", "", f"vTMv = {name}.vTMv(v)"]


LISTING_LINE_HEIGHT, LISTING_TOP, LISTING_WIDTH = 0.1, 0.86, 0.465  # in axes fractions


def draw_listing_column(ax, x: float, comment: str, lines: list[str]) -> None:
    """One column of the listing: a comment header, then numbered lines in a grey frame."""
    frame_height = len(lines) * LISTING_LINE_HEIGHT + 0.1
    ax.add_patch(FancyBboxPatch((x - 0.01, LISTING_TOP + 0.08 - frame_height), LISTING_WIDTH, frame_height,
                                boxstyle="round,pad=0.01", facecolor="0.97", edgecolor="0.8"))
    ax.text(x + 0.04, LISTING_TOP + 0.04, comment, family="monospace", fontsize=10, color="#2e7d32", va="center")
    for number, line in enumerate(lines, start=1):
        y = LISTING_TOP - number * LISTING_LINE_HEIGHT + 0.04
        if number == REPRESENTATION_LINE:
            ax.add_patch(plt.Rectangle((x + 0.03, y - LISTING_LINE_HEIGHT / 2), LISTING_WIDTH - 0.05,
                                       LISTING_LINE_HEIGHT, facecolor="#fff2b3", edgecolor="none"))
        ax.text(x, y, f"{number}", family="monospace", fontsize=9, color="0.55", va="center")
        ax.text(x + 0.04, y, line, family="monospace", fontsize=10, va="center")


def draw_fig_3_1(png_path) -> None:
    """Fig 3.1: vᵀFv with NNGeometry, the same code for a KFAC and a dense (implicit) FIM."""
    apply_style()
    fig = plt.figure(figsize=(10, 3.2))
    ax = fig.add_axes((0.01, 0.0, 0.98, 1.0))
    ax.set(xlim=(0, 1), ylim=(0.0, 1))
    ax.axis("off")
    for x, (representation, (comment, name)) in zip((0.015, 0.515), LISTING_COLUMNS.items()):
        draw_listing_column(ax, x, comment, listing_lines(representation, name))
    caption = ("Fig 3.1: computing the vector-Fisher-vector product vᵀFv for a 10-class model with NNGeometry: "
               "the same code serves two representations of the FIM (KFAC, left; dense, computed implicitly, "
               "right) although they compute very differently. Typeset from the thesis's listing, with the one "
               "line that differs in substance (the representation) highlighted; 'v =' on line 6 of the right "
               "column, lost in the thesis's text extraction, is restored. The drawing does not run the code; the "
               "test suite does: the same computation with linearlens.curvature (a doctest of "
               "linearlens.experiments.george_thesis.ch3) and the listing itself with NNGeometry 0.4, whose FIM "
               "takes no n_output (it reads the output size from the model).")
    save_figure(fig, png_path, caption, "a drawing (no data)")


# Fig 3.2: three groups, left to right: generators populate representations, which implement abstract objects.
JACOBIAN_GENERATOR = "Jacobian generator\nper-example gradients from\nPyTorch hooks (Ds, a → bmm)"
REPRESENTATIONS = ["PMatDense / FMatDense", "PMatDiag", "PMatBlockDiag", "PMatQuasiDiag", "PMatKFAC",
                   "PMatEKFAC", "PMatLowRank", "PMatImplicit"]
ABSTRACT_OBJECTS = [r"PVector: $\delta\mathbf{w}$ (parameter space)",
                    r"FVector: $\delta f(X)$ (function space)",
                    r"PMat: $F_\mathbf{w}$, metrics on parameters",
                    r"FMat: $K_\mathbf{w}$, NTK Gram matrices",
                    r"PushForward: $J$ (parameters → functions)",
                    r"PullBack: $J^\top$ (functions → parameters)",
                    "LayerCollection: which layers\nspan the parameter space"]
GROUP_COLOURS = {"generators": "#fde2c8", "representations": "#d6e6f5", "abstract": "#dcefd9"}


def draw_box(ax, x: float, y: float, width: float, height: float, text: str, colour: str, fontsize=9.5) -> None:
    ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height, boxstyle="round,pad=0.05",
                                facecolor=colour, edgecolor="0.45", linewidth=0.9))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, linespacing=1.3)


def draw_arrow(ax, start, end, label: str = "") -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=16, color="0.3", linewidth=1.4))
    ax.text((start[0] + end[0]) / 2, start[1] + 0.25, label, ha="center", fontsize=9, style="italic", color="0.3")


def draw_column(ax, x: float, width: float, labels: list[str], colour: str, spacing: float, top: float,
                height: float) -> None:
    for row, label in enumerate(labels):
        draw_box(ax, x, top - row * spacing, width, height, label, colour)


def draw_fig_3_2(png_path) -> None:
    """Fig 3.2: NNGeometry's components: generators populate concrete representations of abstract objects."""
    apply_style()
    fig = plt.figure(figsize=(12, 5.6))
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set(xlim=(0, 12), ylim=(-0.1, 7.6))
    ax.axis("off")
    for x, title in [(1.6, "Generators"), (5.3, "Concrete representations"), (9.6, "Abstract objects")]:
        ax.text(x, 7.3, title, ha="center", fontsize=12, fontweight="bold")
    draw_box(ax, 1.6, 5.0, 2.6, 0.7, "model (torch.nn.Module)\n+ data loader", "0.93")
    draw_arrow(ax, (1.6, 4.55), (1.6, 4.0))
    draw_box(ax, 1.6, 3.35, 2.8, 1.0, JACOBIAN_GENERATOR, GROUP_COLOURS["generators"])
    draw_column(ax, 5.3, 2.6, REPRESENTATIONS, GROUP_COLOURS["representations"], 0.78, 6.55, 0.5)
    draw_column(ax, 9.6, 3.6, ABSTRACT_OBJECTS, GROUP_COLOURS["abstract"], 0.9, 6.55, 0.58)
    draw_arrow(ax, (3.1, 3.35), (3.85, 3.35), "populate")
    draw_arrow(ax, (6.75, 3.35), (7.6, 3.35), "implement")
    ax.text(7.45, 0.3, "one interface for every representation:\nmv, vTMv, solve, trace, frobenius_norm, "
            "get_dense_tensor, get_diag", ha="center", va="center", fontsize=9.5, family="monospace", color="0.25")
    caption = ("Fig 3.2: schematic of NNGeometry's main components: abstract mathematical objects (parameter- and "
               "function-space vectors, the FIM and other parameter-space metrics, NTK Gram matrices, "
               "push-forwards and pull-backs) are stored by concrete representations (dense, diagonal, "
               "block-diagonal, quasi-diagonal, KFAC, EKFAC, low-rank, implicit), which generators populate from "
               "a model and a data set. Laid out from the text of §3.3.2; the thesis's own diagram is not in its "
               "text, so its layout and any components it shows beyond §3.3.2 are not reproduced.")
    save_figure(fig, png_path, caption, "a drawing (no data)")


# --- Figs 3.3-3.6: quality of the FIM approximations ----------------------------------------------

REPRESENTATION_COLOURS = {"diag": "#1b9e77", "quasi_diag": "#7570b3", "kfac": "#d95f02", "ekfac": "#e7298a",
                          "block_diag": "#66a61e", "low_rank": "#a6761d", "dense": "0.3"}


def _with_network(job: FigureJob) -> str:
    """The figure's data source and its network, the stand-in for the thesis's ResNet50 (named on the image)."""
    return f"{job.data_source}; network: {model_label(job.params['model'])}, stand-in for ResNet50"


def _showcase_setup(records: list[dict], spec: dict) -> str:
    """What every figure of the showcase states: the network, the Fisher, the directions, and the
    choices the thesis leaves open."""
    first = records[0]
    fisher = spec["fisher"]
    draws = ("the approximations are built from the same Monte-Carlo labels as F, so only their structure "
             "differs (the thesis's remaining Monte-Carlo fluctuation is absent by design)"
             if fisher["approximation_draws"] == "same" else
             "the approximations are built from a second, independent draw of Monte-Carlo labels")
    dense_blocks = (f" {len(first['dense_block_layers'])} non-Linear/conv layers ({first['dense_block_parameters']:,} "
                    f"parameters, e.g. BatchNorm) are exact dense blocks in every structured representation (the "
                    f"diagonal for PMatDiag)." if first["dense_block_layers"] else "")
    checks = [r["dense_check"] for r in records if r.get("dense_check")]
    dense = (f" The dense F ({first['n_params']:,}² entries) agrees with the implicit one to "
             f"{max(max(c.values()) for c in checks):.1e} (largest relative difference of Fv, vᵀFv, tr F)."
             if checks else "")
    return (f" Network {model_label(spec['model'])} ({first['n_params']:,} parameters; a dense float32 F would take "
            f"{first['dense_float32_bytes'] / 1e6:,.1f} MB), checkpoints: "
            f"{'; '.join(checkpoint_label(r) for r in records)}. F = the Monte-Carlo FIM, {fisher['samples']} labels "
            f"ŷ ~ softmax(f(x)) per example on {first['n_examples']} fixed {fisher['split']} examples, accessed "
            f"implicitly (never stored); {draws}.{dense_blocks}{dense} v: {first['directions']} draws uniform on the "
            f"unit sphere (mean ± s.d.). Thesis: a 24M-parameter ResNet50 trained on Tiny ImageNet, 5 Monte-Carlo "
            f"labels per example.")


def _quality(job: FigureJob) -> tuple[list[dict], pd.DataFrame]:
    records = read_quality(job.inputs["runs"])
    return records, quality_frame(records)


def _representations(frame: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(frame["representation"]))


def _legend_name(name: str) -> str:
    return REPRESENTATION_NAMES.get(name, name)


def plot_fig_3_3(job: FigureJob) -> None:
    """Fig 3.3: cos(v, v') and ‖v − v'‖/‖v'‖ with v' = (F_a + λI)⁻¹(F + λI)v against λ, one column
    per checkpoint, one line per representation."""
    apply_style()
    records, frame = _quality(job)
    names = _representations(frame)
    fig, axes = plt.subplots(2, len(records), figsize=(3.6 * len(records) + 0.6, 6.0), squeeze=False,
                             sharex=True, layout="constrained")
    for column, record in enumerate(records):
        for row, metric in enumerate(("solve_cos", "solve_residual")):
            ax = axes[row, column]
            summary = metric_summary(frame[frame["epoch"] == record["epoch"]], metric)
            for name in names:
                part = summary[summary["representation"] == name]
                ax.plot(part["relative_damping"], part["mean"], marker="o", markersize=3,
                        color=REPRESENTATION_COLOURS.get(name), label=_legend_name(name))
                ax.fill_between(part["relative_damping"], part["mean"] - part["std"].fillna(0),
                                part["mean"] + part["std"].fillna(0), color=REPRESENTATION_COLOURS.get(name),
                                alpha=0.2, linewidth=0)
            ax.set_xscale("log")
            if metric == "solve_residual":
                ax.set_yscale("log")
                ax.set_xlabel("λ / (tr F / d)")
            else:
                ax.set_title(checkpoint_label(record), fontsize=9)
        axes[0, column].set_ylim(top=1.02)
    axes[0, 0].set_ylabel("cos(v, v′)  (higher is better)")
    axes[1, 0].set_ylabel("‖v − v′‖ / ‖v′‖  (lower is better)")
    axes[0, -1].legend(fontsize=8, loc="lower right")
    scores = solve_score(frame)
    caption = (f"{job.caption} cos(v, v′) and residual ‖v − v′‖/‖v′‖ with v′ = (F_approx + λI)⁻¹(F + λI)v against the "
               f"damping λ, relative to tr F/d (the mean eigenvalue), for each approximation, each solved as NNGeometry "
               f"solves it: KFAC damped factor-wise, (A + π√λI)⁻¹ ⊗ (B + √λ/π I)⁻¹ with π² = (tr A/dim A)/(tr B/dim B) "
               f"(PMatKFAC.solve); EKFAC adds λ to s* in its eigenbasis; the diagonal ones add λ. cos averaged over the "
               f"λ grid: " + "; ".join(f"{checkpoint_label(r)}: " + ", ".join(
                   f"{_legend_name(n)} {scores.loc[r['epoch'], n]:.3f}" for n in names) for r in records) + "."
               + _showcase_setup(records, job.params))
    save_figure(fig, job.png_path, caption, _with_network(job))


def _grouped_bars(ax, records: list[dict], frame: pd.DataFrame, metric: str, names: list[str]) -> None:
    """One group of bars per checkpoint, one bar per representation: mean ± s.d. over the directions."""
    summary = metric_summary(frame, metric)
    width = 0.8 / len(names)
    for k, name in enumerate(names):
        part = summary[summary["representation"] == name].set_index("epoch").loc[[r["epoch"] for r in records]]
        positions = np.arange(len(records)) + (k - (len(names) - 1) / 2) * width
        ax.bar(positions, part["mean"], width, yerr=part["std"].fillna(0), capsize=2,
               color=REPRESENTATION_COLOURS.get(name), label=_legend_name(name))
    ax.set_xticks(np.arange(len(records)), [checkpoint_label(r).replace(" (", "\n(") for r in records], fontsize=8)


def _legend_above(fig, ax) -> None:
    """One legend row above the panels: inside an axes it hides the bars of a checkpoint."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncols=len(labels), fontsize=8, frameon=False)


def _values(frame: pd.DataFrame, metric: str, records: list[dict], names: list[str]) -> str:
    table = mean_metric(frame, metric)
    return "; ".join(f"{checkpoint_label(r)}: " + ", ".join(
        f"{_legend_name(n)} {table.loc[r['epoch'], n]:.3g}" for n in names) for r in records)


def plot_fig_3_4(job: FigureJob) -> None:
    """Fig 3.4: ‖F_a v − Fv‖/‖Fv‖ and cos(Fv, F_a v) per representation and checkpoint."""
    apply_style()
    records, frame = _quality(job)
    names = _representations(frame)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.0), layout="constrained")
    _grouped_bars(left, records, frame, "mv_residual", names)
    left.set(yscale="log", ylabel="‖F_approx v − Fv‖ / ‖Fv‖  (lower is better)")
    _grouped_bars(right, records, frame, "mv_cos", names)
    right.set(ylim=(0, 1.02), ylabel="cos(Fv, F_approx v)  (higher is better)")
    _legend_above(fig, left)
    caption = (f"{job.caption} Residual ‖F_approx v − Fv‖/‖Fv‖ (left) and cos(Fv, F_approx v) (right). Mean cos: "
               f"{_values(frame, 'mv_cos', records, names)}. Mean residual: "
               f"{_values(frame, 'mv_residual', records, names)}." + _showcase_setup(records, job.params))
    save_figure(fig, job.png_path, caption, _with_network(job))


def plot_fig_3_5(job: FigureJob) -> None:
    """Fig 3.5: |vᵀF_a v − vᵀFv| / |vᵀFv| per representation and checkpoint."""
    apply_style()
    records, frame = _quality(job)
    names = _representations(frame)
    fig, ax = plt.subplots(figsize=(7, 4.0), layout="constrained")
    _grouped_bars(ax, records, frame, "vTMv_error", names)
    ax.set(yscale="log", ylabel="|vᵀF_approx v − vᵀFv| / |vᵀFv|  (lower is better)")
    _legend_above(fig, ax)
    caption = (f"{job.caption} Relative difference |vᵀF_approx v − vᵀFv|/|vᵀFv|; lower is better (the thesis's "
               f"caption says higher, a slip). Mean: {_values(frame, 'vTMv_error', records, names)}."
               + _showcase_setup(records, job.params))
    save_figure(fig, job.png_path, caption, _with_network(job))


ROUND_OFF_FLOOR = 1e-17  # the trace errors at round-off drawn at least this tall on the log axis


def plot_fig_3_6(job: FigureJob) -> None:
    """Fig 3.6: |tr F_a − tr F| / |tr F| per representation and checkpoint."""
    apply_style()
    records, frame = _quality(job)
    names = _representations(frame)
    floored = frame.assign(value=frame["value"].clip(lower=ROUND_OFF_FLOOR))
    fig, ax = plt.subplots(figsize=(7, 4.0), layout="constrained")
    _grouped_bars(ax, records, floored, "trace_error", names)
    ax.set(yscale="log", ylabel="|tr F_approx − tr F| / |tr F|  (lower is better)")
    ax.legend(fontsize=8)
    caption = (f"{job.caption} Relative difference of the trace, |tr F_approx − tr F|/|tr F| (lower is better; "
               f"values below {ROUND_OFF_FLOOR:g} drawn at it): {_values(frame, 'trace_error', records, names)}. "
               f"PMatDiag, PMatQuasiDiag and PMatEKFAC keep F's diagonal (EKFAC: Σ s* = tr F per layer), so their "
               f"error is Monte-Carlo noise only, or round-off when they share F's labels; PMatKFAC's tr A · tr B "
               f"is not F's trace." + _showcase_setup(records, job.params))
    save_figure(fig, job.png_path, caption, _with_network(job))


# --- Fig 3.7: the NTK of a two-class function ---------------------------------------------------

CLASS_COLOURS = ("#1f77b4", "#d62728")


def _pair_label(run: dict) -> str:
    return checkpoint_label({"epoch": int(run["epoch"]), "test_accuracy": float(run["test_accuracy"])})


def plot_fig_3_7(job: FigureJob) -> None:
    """Fig 3.7: the normalised Gram of f[c2] − f[c1] (top row) and the examples on the top two
    kernel principal components (bottom row), one column per checkpoint."""
    apply_style()
    spec = job.params
    runs = read_pairs(job.inputs["runs"])
    summary = pair_summary(runs, spec["ntk"]["centred"])
    fig, axes = plt.subplots(2, len(runs), figsize=(3.2 * len(runs), 6.4), squeeze=False, layout="constrained")
    classes = runs[0]["classes"].tolist()
    lowest = min(normalised_gram(run["gram"]).min() for run in runs)  # one colour scale for every checkpoint
    for column, (run, row) in enumerate(zip(runs, summary.itertuples())):
        label = _pair_label(run)
        image = axes[0, column].imshow(normalised_gram(run["gram"]), cmap="viridis", vmin=lowest, vmax=1)
        axes[0, column].set(title=label, xticks=[], yticks=[])
        axes[0, column].grid(False)
        points, _ = kernel_pca(run["gram"], spec["ntk"]["centred"])
        for value, colour in enumerate(CLASS_COLOURS):
            chosen = run["labels"] == value
            axes[1, column].scatter(points[chosen, 0], points[chosen, 1], s=14, color=colour,
                                    label=f"class {classes[value]}")
        axes[1, column].set(xlabel="PC 1", ylabel="PC 2" if column == 0 else None,
                            title=f"{'separable' if row.separable else 'not linearly separable'}, "
                                  f"contrast {row.block_contrast:.2f}", )
        axes[1, column].title.set_fontsize(8)
    fig.colorbar(image, ax=axes[0, -1], shrink=0.8, label="G_ij / sqrt(G_ii G_jj)")
    axes[1, 0].legend(fontsize=8)
    per_class = spec["ntk"]["per_class"]
    caption = (f"{job.caption} NTK of f_{{c1,c2}} = f[c2] − f[c1] for c1 = {classes[0]}, c2 = {classes[1]} on "
               f"{per_class} {spec['ntk']['split']} examples of each (class {classes[0]} first). Top: the Gram, rows "
               f"and columns scaled by 1/sqrt(diag G). Bottom: the examples on the first two principal components "
               f"of the {'centred ' if spec['ntk']['centred'] else ''}Gram (kernel PCA, coordinates sqrt(λ_j) u_j). "
               f"Intra-class minus inter-class mean of the normalised Gram (block contrast): "
               + ", ".join(f"{c:.2f}" for c in summary["block_contrast"]) + "; linearly separable on the two "
               "components: " + ", ".join("yes" if s else "no" for s in summary["separable"])
               + f" (checkpoints: {'; '.join(_pair_label(run) for run in runs)}). Network "
               f"{model_label(spec['model'])}. Thesis: ResNet50 on Tiny ImageNet, 50 + 50 validation images.")
    save_figure(fig, job.png_path, caption, _with_network(job))
