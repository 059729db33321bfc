"""Figures for Chapter 4 (EKFAC) and appendix A. Here: Fig 4.1, a cartoon drawn from its caption, Fig 4.2
(gradient correlations in the KFE; KFAC vs EKFAC error against the exact empirical Fisher), and Figs 4.3-4.4
(the auto-encoder trained by KFAC, EKFAC, EKFAC-ra and first-order baselines; recompute frequency and spectra),
Figs 4.5-4.6 and A.1-A.5 (the CIFAR networks: VGG11, and ResNet34 without BatchNorm; batch sizes; schedule)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Ellipse

from ...analysis.george_thesis.ch3 import model_label
from ...analysis.george_thesis.ch4 import (
    CURVATURE_METHODS,
    METHOD_LABELS,
    OPTIMISER_LABELS,
    batch_size_settings,
    best_validation_runs,
    envelope,
    error_summary,
    final_losses,
    layer_numbers,
    main_settings,
    mean_off_diagonal,
    read_correlations,
    read_errors,
    read_runs,
    run_name,
    selected_run,
    selection_batch_size,
    setting_envelopes,
    theorem_margins,
    time_envelope,
)
from ...manifests.jobs import FigureJob
from ..style import apply_style, save_figure

# The cartoon's exact Fisher: a 2-D covariance whose eigenbasis is tilted off the parameter axes.
FISHER_ANGLE_DEG = 30.0
FISHER_EIGENVALUES = np.array([4.0, 0.5])
# The Kronecker-factored eigenbasis approximates the eigenbasis: close to it, not equal.
KFE_ANGLE_DEG = 42.0
# KFAC's scales are a Kronecker product S_A ⊗ S_B, not the variances along the KFE: one too short, one too long.
KFAC_STDS = np.array([1.5, 1.1])

ELLIPSE_GREEN, DIAGONAL_ORANGE, KFAC_BLUE, EKFAC_PURPLE = "#2ca02c", "#ff7f0e", "#1f77b4", "#9467bd"


def rotation(angle_deg: float) -> np.ndarray:
    """Columns: the unit vectors of a basis turned by ``angle_deg`` from the parameter axes."""
    angle = np.deg2rad(angle_deg)
    return np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])


def fisher_covariance() -> np.ndarray:
    eigenbasis = rotation(FISHER_ANGLE_DEG)
    return eigenbasis @ np.diag(FISHER_EIGENVALUES) @ eigenbasis.T


def std_along(basis: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """The standard deviation along each basis vector: sqrt(uᵀ C u), the half-width of the ellipse there."""
    return np.sqrt(np.einsum("ij,ik,kj->j", basis, covariance, basis))


def rescaling_panel(ax, basis: np.ndarray, stds: np.ndarray, colour: str, title: str, subtitle: str) -> None:
    """The Fisher ellipse, and per basis vector an arrow as long as the scale used along it. The dotted line
    through the arrow's tip is perpendicular to it: it touches the ellipse only when the scale is the true
    standard deviation along that direction."""
    ax.add_patch(Ellipse((0, 0), *(2 * np.sqrt(FISHER_EIGENVALUES)), angle=FISHER_ANGLE_DEG, facecolor="#2ca02c22",
                         edgecolor=ELLIPSE_GREEN, linewidth=1.8))
    for direction, std in zip(basis.T, stds):
        normal = np.array([-direction[1], direction[0]])
        for sign in (1, -1):
            tip = sign * std * direction
            ax.annotate("", xy=tip, xytext=(0, 0), arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 1.8,
                                                               "shrinkA": 0, "shrinkB": 0})
            ax.plot(*np.stack([tip - 0.7 * normal, tip + 0.7 * normal]).T, color=colour, linestyle=":", lw=1.1)
    ax.axhline(0, color="0.75", lw=0.8, zorder=0)
    ax.axvline(0, color="0.75", lw=0.8, zorder=0)
    ax.text(2.6, -0.1, r"$w_1$", fontsize=9, color="0.45", ha="right", va="top")
    ax.text(0.1, 2.1, r"$w_2$", fontsize=9, color="0.45", va="top")
    ax.set(xlim=(-2.7, 2.7), ylim=(-2.2, 2.2), aspect="equal", xticks=[], yticks=[])
    ax.grid(False)
    ax.set_title(title, fontsize=11, color=colour, fontweight="bold")
    ax.set_xlabel(subtitle, fontsize=8.5)


def draw_fig_4_1(png_path) -> None:
    """Fig 4.1: rescaling by the exact Fisher, its diagonal, KFAC and EKFAC, on one 2-D covariance."""
    apply_style()
    covariance = fisher_covariance()
    eigenbasis, parameter_basis, kfe = rotation(FISHER_ANGLE_DEG), np.eye(2), rotation(KFE_ANGLE_DEG)
    panels = [
        (eigenbasis, np.sqrt(FISHER_EIGENVALUES), ELLIPSE_GREEN, "exact Fisher",
         "eigenbasis of F,\ntrue variances"),
        (parameter_basis, std_along(parameter_basis, covariance), DIAGONAL_ORANGE, "diagonal",
         "parameter axes,\ntrue variances along them"),
        (kfe, KFAC_STDS, KFAC_BLUE, "KFAC", "Kronecker-factored eigenbasis,\n"
         r"scales $S_A \otimes S_B$ (not the variances)"),
        (kfe, std_along(kfe, covariance), EKFAC_PURPLE, "EKFAC",
         "Kronecker-factored eigenbasis,\n" r"variances re-estimated ($s^*$)"),
    ]
    fig, axes = plt.subplots(1, 4, figsize=(12, 3.7), layout="constrained")
    for ax, panel in zip(axes, panels):
        rescaling_panel(ax, *panel)
    caption = ("Fig 4.1: cartoon of the rescaling done by different preconditioners. Each rescales the gradient "
               "along a basis; arrow length = square root of the downscaling. The exact Fisher uses the "
               "eigenvectors of the covariance (green ellipse); the diagonal uses the parameter axes with the "
               "variances measured along them (arrows reach the ellipse's tangent); KFAC uses directions close "
               "to the eigenvectors but scales that miss the ellipse; EKFAC keeps KFAC's basis and re-estimates "
               "the variances along it. Drawn from the caption on one chosen 2-D covariance and basis angles (the "
               "thesis's own ellipse and angles are not in its text); the dotted lines perpendicular to each "
               "arrow are added here to show whether its scale touches the ellipse.")
    save_figure(fig, png_path, caption, "a drawing (no data)")


# --- Fig 4.2: gradient correlations in the KFE; KFAC vs EKFAC against the exact empirical Fisher ---

METHOD_STYLES = {"kfac": {"color": "#1f77b4", "linewidth": 1.8},
                 "ekfac": {"color": "#9467bd", "linewidth": 1.8},
                 "ekfac_probe": {"color": "0.55", "linewidth": 1.0, "linestyle": "--"}}
# Our paper-scale setup (the thesis gives none of these: 'a small 4 sigmoid layer MLP classifier
# trained on MNIST'), to name what a quick run departs from.
SPEC_CLASSIFIER = {"hidden": [50, 50, 50], "iterations": 3000, "batch_size": 128, "probe_size": 1000}


def _correlation_panel(ax, correlation: np.ndarray, title: str):
    image = ax.imshow(np.abs(correlation), cmap="magma", vmin=0, vmax=1, interpolation="nearest")
    ax.set_title(f"{title}\nmean off-diagonal |corr| {mean_off_diagonal(correlation):.3f}", fontsize=10)
    ax.set(xticks=[], yticks=[])
    ax.grid(False)
    return image


def _error_panel(ax, frame, spec: dict) -> None:
    for method, label in METHOD_LABELS.items():
        ax.plot(frame["step"], frame[f"{method}_error"], label=label, **METHOD_STYLES[method])
    for step in sorted(frame["recomputed_at"].unique()):
        ax.axvline(step, color="0.8", linewidth=0.8, linestyle=":", zorder=0)
    highest = max(frame[f"{method}_error"].max() for method in METHOD_LABELS)
    ax.set(xlabel="iteration", ylabel=r"$\|F - \hat F\|_F \,/\, \|F\|_F$ (block diagonal)",
           ylim=(0, 1.4 * highest),  # room for the legend above the curves
           title=f"KFE and KFAC factors recomputed every {spec['recompute_every']} iterations (dotted)")
    ax.legend(fontsize=8.5, loc="upper left")


def _optimiser(optimiser: dict) -> str:
    settings = ", ".join(f"{key} {value:g}" if isinstance(value, (int, float)) else f"{key} {value}"
                         for key, value in optimiser.items() if key != "name")
    return f"{optimiser['name'].upper()} ({settings})"


def _departures(spec: dict) -> str:
    changed = [f"{key} {spec[key]} (spec default {value})" for key, value in SPEC_CLASSIFIER.items()
               if spec[key] != value]
    return "; ".join(changed) if changed else "none"


def plot_fig_4_2(job: FigureJob) -> None:
    """Fig 4.2: (left) |corr| of per-example loss gradients over a block of the second layer, in the parameter
    basis and in the KFE; (right) relative Frobenius error of amortised KFAC and EKFAC against the exact
    empirical Fisher over iterations."""
    spec = job.params
    frame = read_errors(job.inputs["errors"][0])
    run = read_correlations(job.inputs["correlations"][0])
    summary = error_summary(frame)
    margins = theorem_margins(frame)
    apply_style()
    fig = plt.figure(figsize=(14, 4.4), layout="constrained")
    grid = fig.add_gridspec(1, 3, width_ratios=[1, 1, 1.9])
    image = _correlation_panel(fig.add_subplot(grid[0]), run["parameter_basis"], "parameter basis")
    kfe_ax = fig.add_subplot(grid[1])
    _correlation_panel(kfe_ax, run["kfe"], "Kronecker-factored eigenbasis")
    fig.colorbar(image, ax=kfe_ax, fraction=0.046, pad=0.04, label="|corr|")
    _error_panel(fig.add_subplot(grid[2]), frame, spec)
    block = (f"the first {int(run['units'])} of {int(run['out'])} rows and {int(run['inputs'])} of {int(run['width'])} "
             f"columns of layer {int(run['layer'])}'s W̃ = [W, b] ({run['parameter_basis'].shape[0]} parameters), "
             f"the KFE's rows and columns ordered by decreasing eigenvalue of B and A")
    caption = (
        f"{job.caption} Network: {spec['activation']} MLP with hidden widths {spec['hidden']} "
        f"({int(run['parameters']):,} parameters), cross-entropy, {_optimiser(spec['optimiser'])}, batch "
        f"{spec['batch_size']}, "
        f"{spec['iterations']} iterations, seed {spec['seed']}; final train / test accuracy "
        f"{float(run['train_accuracy']):.3f} / {float(run['test_accuracy']):.3f}. F: the exact empirical Fisher "
        f"(observed labels, per-example loss gradients; trap T-EK-1) on a fixed class-balanced probe of "
        f"{spec['probe_size']} training examples at the current parameters, every {spec['error_every']} iterations. "
        f"KFAC: A ⊗ B from the minibatch of the last recompute (Algorithm 1); EKFAC: that recompute's KFE with s* "
        f"re-estimated on the current minibatch; dashed: the same KFE with s* from F's own probe examples. Errors "
        f"over the block diagonal of the {len(layer_numbers(frame))} Linear layers "
        f"(KFAC and EKFAC are block diagonal; F's off-diagonal blocks hold "
        f"{frame['off_block_share'].mean():.0%} of ‖F‖ on average; against the full F the time averages are "
        f"KFAC {summary.loc['kfac', 'time_average_full']:.3f}, EKFAC {summary.loc['ekfac', 'time_average_full']:.3f}). "
        f"Time-averaged error: KFAC {summary.loc['kfac', 'time_average']:.3f}, EKFAC "
        f"{summary.loc['ekfac', 'time_average']:.3f}, EKFAC with probe s* {summary.loc['ekfac_probe', 'time_average']:.3f}; "
        f"mean rise over a recompute interval KFAC {summary.loc['kfac', 'drift']:+.3f}, EKFAC "
        f"{summary.loc['ekfac', 'drift']:+.3f}. Theorem A.2.1 (same KFE, s* from F's examples): largest ratio of "
        f"EKFAC's to KFAC's error {margins.to_numpy().max():.3f} over all steps and layers. Left: |corr_ij| = "
        f"|C_ij|/√(C_ii C_jj) of the gradients' second moment C at the last iteration on the probe, over {block}; "
        f"the KFE here is that of the probe's own factors. Departures from the spec's MNIST setup "
        f"(14×14, {'-'.join(str(w) for w in [196, *SPEC_CLASSIFIER['hidden'], 10])}; the thesis states no sizes): "
        f"{_departures(spec)}.")
    save_figure(fig, job.png_path, caption, f"{job.data_source}; network: {spec['activation']} MLP, hidden widths "
                f"{spec['hidden']} (the thesis's small 4-layer sigmoid MLP, its sizes not stated)")


# --- Figs 4.3-4.4: the auto-encoder ---

OPTIMISER_COLOURS = {"ekfac": "#d62728", "ekfac_ra": "#9467bd", "kfac": "#1f77b4", "sgd_bn": "#2ca02c",
                     "sgd": "#8c564b", "adam_bn": "#ff7f0e"}
TIMING_NOTE = ("seconds of training (evaluations excluded) on the machine that ran the jobs, every run on one "
               "such machine; CPU timings at quick scale are not comparable with the thesis's GPU ones (T-EK-9)")


# The thesis's network each quick model stands in for, by the model's zoo name (named on the image).
THESIS_NETWORKS = {"autoencoder": "the 784-1000-500-250-30 auto-encoder", "vgg": "VGG11", "resnet": "ResNet34"}


def _with_network(job: FigureJob) -> str:
    """The figure's data source and its network, a stand-in where the thesis's is not the one trained."""
    model = job.params["model"]
    thesis = THESIS_NETWORKS.get(model["name"])
    return f"{job.data_source}; network: {model_label(model)}" + (f", stand-in for {thesis}" if thesis else "")


def _label(optimiser: str) -> str:
    return OPTIMISER_LABELS.get(optimiser, optimiser)


def _epoch_rows(frame):
    return frame.dropna(subset=["train_loss"])


def _envelope_panels(ax_epochs, ax_seconds, frame) -> None:
    """(a) the best run at each epoch; (b) the best run at each time, every run on its own clock."""
    timed = time_envelope(_epoch_rows(frame))
    for optimiser, rows in envelope(_epoch_rows(frame)).groupby("optimiser", sort=False):
        style = {"color": OPTIMISER_COLOURS.get(optimiser), "label": _label(optimiser)}
        ax_epochs.plot(rows["epoch"], rows["train_loss"], **style)
        by_time = timed[timed["optimiser"] == optimiser]
        ax_seconds.step(by_time["seconds"], by_time["train_loss"], where="post", **style)
    ax_epochs.set(xlabel="epoch", ylabel="training loss (best run at each epoch)", yscale="log",
                  title="(a) training loss per epoch")
    ax_seconds.set(xlabel="training time (s)", ylabel="training loss (best run at each time)", yscale="log",
                   xscale="log", title="(b) training loss per second")
    ax_seconds.xaxis.set_minor_formatter(plt.NullFormatter())
    ax_epochs.legend(fontsize=8)


def _sensitivity_panels(axes, frame, spec: dict):
    """(d) Final training loss over (η, ε) of each curvature optimiser at the selection batch size, one colour
    scale for all; × a diverged run. Returns the scatter that carries the colour scale."""
    finals = final_losses(_epoch_rows(frame)).reset_index()
    finals = finals[(finals["batch_size"] == selection_batch_size(spec)) & finals["optimiser"].isin(CURVATURE_METHODS)]
    finished = finals[finals["ended"] == "finished"]
    norm = plt.matplotlib.colors.LogNorm(finished["train_loss"].min(), finished["train_loss"].max())
    image = None
    for ax, method in zip(axes, [m for m in spec["optimisers"] if m in CURVATURE_METHODS]):
        rows = finals[finals["optimiser"] == method]
        done = rows[rows["ended"] == "finished"]
        image = ax.scatter(done["lr"], done["damping"], c=done["train_loss"], cmap="viridis_r", norm=norm, s=70)
        failed = rows[rows["ended"] != "finished"]
        ax.scatter(failed["lr"], failed["damping"], marker="x", color="k", s=50, label="diverged")
        ax.set(xscale="log", yscale="log", xlabel="η", ylabel="ε",
               title=f"(d) {_label(method)}: final training loss, batch {selection_batch_size(spec)}")
        ax.margins(0.15)
        if len(failed):
            ax.legend(fontsize=7, loc="lower left")
    return image


def plot_fig_4_3(job: FigureJob) -> None:
    """Fig 4.3: (a) the per-epoch envelope of the training loss, (b) its envelope over time; (c) validation loss
    of each optimiser's best-validation run; (d) sensitivity of the curvature methods to (η, ε)."""
    spec = job.params
    frame = read_runs(job.inputs["runs"])
    apply_style()
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.6), layout="constrained")
    _envelope_panels(axes[0, 0], axes[0, 1], frame)
    ax = axes[0, 2]
    validation = best_validation_runs(_epoch_rows(frame))
    for optimiser, rows in validation.groupby("optimiser", sort=False):
        ax.plot(rows["epoch"], rows["val_loss"], color=OPTIMISER_COLOURS.get(optimiser), label=rows["run"].iloc[0])
    ax.set(xlabel="epoch", ylabel="validation loss", yscale="log", title="(c) validation (best-validation run)")
    ax.legend(fontsize=6)
    image = _sensitivity_panels(axes[1], frame, spec)
    fig.colorbar(image, ax=axes[1].tolist(), label="final training loss", shrink=0.9)
    save_figure(fig, job.png_path, f"{job.caption} {_training_setup(spec, frame)}", _with_network(job))


def _batch_sizes(frame) -> str:
    """The batch sizes the runs used: one for all, or each optimiser's."""
    sizes = frame.groupby("optimiser", sort=False)["batch_size"].unique()
    if len({int(b) for values in sizes for b in values}) == 1:
        return f"batch size {int(sizes.iloc[0][0])}"
    return "batch sizes " + "; ".join(f"{_label(o)} {', '.join(str(int(b)) for b in sorted(v))}"
                                      for o, v in sizes.items())


def _training_setup(spec: dict, frame) -> str:
    curvature = {name: settings for name, settings in spec["optimisers"].items() if "method" in settings}
    runs = frame["run"].nunique()
    diverged = frame.groupby("run")["ended"].last().ne("finished").sum()
    freqs = sorted({settings["freq"] for settings in curvature.values()})
    damping = sorted({settings.get("damping_mode", "kfe") for settings in curvature.values()})
    model = ", ".join(f"{key} {value}" for key, value in spec["model"].items() if key != "name")
    return (f"Model: {spec['model']['name']} ({model}), {spec['epochs']} epochs, seed {spec['seed']}; "
            f"{runs} runs searched (η ∈ {spec['grid']['lr']}, ε ∈ {spec['grid']['damping']} for the curvature "
            f"methods, η alone for the others, {spec.get('random_points', 0)} random points around each grid point, "
            f"{_batch_sizes(frame)}), {diverged} of them diverged. KFAC/EKFAC recompute every "
            f"{' or '.join(map(str, freqs))} steps on the current minibatch; empirical Fisher (observed targets); "
            f"damping added in the KFE as {' and '.join(damping)} ('kfe': s + ε, Algorithm 1; 'factors': App. A.4). "
            f"Training loss: the objective on the whole training set at each epoch's end. Time: {TIMING_NOTE}.")


def plot_fig_4_4(job: FigureJob) -> None:
    """Fig 4.4: (a, b) the selected KFAC and EKFAC runs at every recompute frequency, per epoch and per second;
    (c) ℓ2 distance of KFAC's, EKFAC's and EKFAC-ra's eigenvalues to the empirical Fisher's, KFE fixed."""
    spec = job.params
    search = read_runs(job.inputs["runs"])
    curves = [_epoch_rows(read_runs(job.inputs["frequency"]))] if job.inputs["frequency"] else []
    for optimiser in spec.get("frequencies", {}):
        chosen = run_name(selected_run(search, spec, optimiser))
        curves.append(_epoch_rows(search[search["run"] == chosen]))
    apply_style()
    fig, (ax_epochs, ax_seconds, ax_spectrum) = plt.subplots(1, 3, figsize=(15, 4.4), layout="constrained")
    for (optimiser, freq), rows in pd.concat(curves).groupby(["optimiser", "freq"]):
        style = {"color": OPTIMISER_COLOURS.get(optimiser), "alpha": 0.35 + 0.65 * (1 / freq) ** 0.25,
                 "label": f"{_label(optimiser)} freq {freq:g}", "linestyle": "-" if optimiser == "ekfac" else "--"}
        ax_epochs.plot(rows["epoch"], rows["train_loss"], **style)
        ax_seconds.plot(rows["seconds"], rows["train_loss"], **style)
    ax_epochs.set(xlabel="epoch", ylabel="training loss", yscale="log", title="(a) per epoch")
    ax_seconds.set(xlabel="training time (s)", ylabel="training loss", yscale="log", xscale="log",
                   title="(b) per second")
    ax_epochs.legend(fontsize=7)
    tracked = pd.read_csv(job.inputs["spectrum"][0]).dropna(subset=["kfac_distance"])
    for method in ("kfac", "ekfac", "ekfac_ra"):
        ax_spectrum.plot(tracked["step"], tracked[f"{method}_distance"], color=OPTIMISER_COLOURS[method],
                         label=_label(method))
    ax_spectrum.plot(tracked["step"], tracked["spectrum_norm"], color="0.5", linestyle=":", label="‖λ(G)‖ (scale)")
    settings = spec["spectrum"]
    ax_spectrum.set(xlabel="iteration", ylabel="‖λ(G) − λ(Ĝ)‖₂", yscale="log",
                    title=f"(c) spectrum distance, layer {settings['layer']}, KFE fixed at t = 0")
    ax_spectrum.legend(fontsize=7)
    caption = (f"{job.caption} (a, b): the (η, ε) each optimiser's search selected (lowest final training loss at "
               f"batch {selection_batch_size(spec)}), retrained at the frequencies {spec.get('frequencies')} "
               f"(freq 1: KFAC re-estimated and inverted at every update, the strong baseline) beside its searched "
               f"frequency. (c): along the selected {_label(settings['optimiser'])} run, G the exact empirical Fisher "
               f"block of Linear layer {settings['layer']} on a fixed class-balanced probe of {settings['probe_size']} "
               f"training examples every {settings['every']} iterations; the KFE and KFAC's S_A ⊗ S_B from the "
               f"probe's factors at θ₀, kept; EKFAC's s* re-estimated on the current minibatch in that KFE; "
               f"EKFAC-ra's s* the running average (α = 0.75) of the squared minibatch-mean gradient × batch size in "
               f"that KFE, updated at every step. Time: {TIMING_NOTE}. {_training_setup(spec, search)}")
    save_figure(fig, job.png_path, caption, _with_network(job))


# --- Figs 4.5-4.6, A.1-A.5: the CIFAR networks ---

SETTING_STYLES = ("-", "--", ":", "-.")


def _setting_style(optimiser: str, batch_size: int, sizes: list[int]) -> dict:
    """A setting's line in every panel of a figure: coloured by optimiser, dashed by batch size."""
    return {"color": OPTIMISER_COLOURS.get(optimiser), "label": f"{_label(optimiser)}, batch {batch_size}",
            "linestyle": SETTING_STYLES[sizes.index(batch_size) % len(SETTING_STYLES)]}


def _setting_panels(axes, frame, settings: list[tuple[str, int]], x_columns=("epoch", "seconds"),
                    scheduled: bool = False) -> None:
    """One curve per setting (optimiser and batch size), coloured by optimiser, dashed by batch size: the best
    run at each epoch (or its iteration), or at each time with every run on its own clock."""
    sizes = sorted({size for _, size in settings})
    for ax, x in zip(axes, x_columns):
        envelopes = setting_envelopes(frame, settings, scheduled=scheduled, over_time=x == "seconds")
        for setting, rows in envelopes.groupby("setting", sort=False):
            style = _setting_style(rows["optimiser"].iloc[0], rows["batch_size"].iloc[0], sizes)
            if x == "seconds":
                ax.step(rows[x], rows["train_loss"], where="post", **style)
            else:
                ax.plot(rows[x], rows["train_loss"], **style)
    labels = {"epoch": "epoch", "seconds": "training time (s)", "step": "iteration"}
    for ax, x in zip(axes, x_columns):
        ax.set(xlabel=labels[x], ylabel=f"training loss (best run at each {'time' if x == 'seconds' else x})",
               yscale="log", xscale="log" if x == "seconds" else "linear")
        ax.xaxis.set_minor_formatter(plt.NullFormatter())  # log-time minor labels overlap
    axes[0].legend(fontsize=7)


def _cnn_setup(spec: dict, frame) -> str:
    return (f"{_training_setup(spec, frame)} Convolutions: {spec.get('conv_factors', 'kfc').upper()} factors "
            f"(sua: the thesis's SUA). Curves are per-epoch envelopes over the searched (η, ε) of each optimiser "
            f"and batch size (per-second panels: the lowest loss any of its runs has at each time, every run on its own "
            f"clock); a validation panel shows the run with the best overall validation error.")


# The optimisers a figure's thesis version compares, where it shows fewer than its group ran (§4.4.2: "We
# compare EKFAC-ra with KFAC, and SGD with momentum and BN"; the group's EKFAC runs serve Figs A.3 and A.5).
THESIS_OPTIMISERS = {"fig_4_6": ("ekfac_ra", "kfac", "sgd_bn")}


def plot_main_cifar(job: FigureJob) -> None:
    """Figs 4.5 and 4.6: (a) per-epoch and (b) per-second envelopes of each optimiser at its batch size; (c)
    validation error of each setting's best-validation run."""
    spec = job.params
    frame = _epoch_rows(read_runs(job.inputs["runs"]))
    apply_style()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), layout="constrained")
    settings = [s for s in main_settings(spec) if s[0] in THESIS_OPTIMISERS.get(job.figure, spec["optimisers"])]
    sizes = sorted({size for _, size in settings})
    _setting_panels(axes[:2], frame, settings)
    axes[0].set_title("(a) training loss per epoch")
    axes[1].set_title("(b) training loss per second")
    constant = frame[frame["halve_every"].isna()] if "halve_every" in frame else frame
    for optimiser, batch_size in settings:
        runs = constant[(constant["optimiser"] == optimiser) & (constant["batch_size"] == batch_size)]
        if runs.empty:
            continue
        best = best_validation_runs(runs, column="val_error")
        axes[2].plot(best["epoch"], best["val_error"], **_setting_style(optimiser, batch_size, sizes))
    axes[2].set(xlabel="epoch", ylabel="validation error", title="(c) validation error (best-validation run)")
    axes[2].legend(fontsize=7)
    save_figure(fig, job.png_path, f"{job.caption} {_cnn_setup(spec, frame)}", _with_network(job))


plot_fig_4_5 = plot_main_cifar
plot_fig_4_6 = plot_main_cifar


def steps_per_epoch(frame: pd.DataFrame, batch_size: int) -> int:
    """The optimiser steps an epoch takes at ``batch_size``, read from the runs' logged steps."""
    rows = frame[(frame["batch_size"] == batch_size) & (frame["epoch"] >= 1)]
    return int(round((rows["step"] / rows["epoch"]).iloc[0]))


def plot_batch_sizes(job: FigureJob) -> None:
    """Figs A.1 and A.3: KFAC and EKFAC per epoch at each batch size, one panel per batch size."""
    spec = job.params
    frame = _epoch_rows(read_runs(job.inputs["runs"]))
    settings = batch_size_settings(spec)
    sizes = sorted({size for _, size in settings})
    freq = spec["optimisers"]["kfac"]["freq"]
    apply_style()
    # one y-axis: EKFAC's gain over KFAC is compared across the batch sizes
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.6 * len(sizes), 4.2), layout="constrained", squeeze=False,
                             sharey=True)
    for ax, size in zip(axes[0], sizes):
        _setting_panels([ax], frame, [s for s in settings if s[1] == size], ("epoch",))
        steps = steps_per_epoch(frame, size)
        ax.set_title(f"batch {size}: {steps} steps an epoch, KFE and KFAC\nrecomputed every {freq / steps:.3g} "
                     f"epochs", fontsize=10)
    save_figure(fig, job.png_path, f"{job.caption} {_cnn_setup(spec, frame)}", _with_network(job))


plot_fig_A_1 = plot_batch_sizes
plot_fig_A_3 = plot_batch_sizes


def _two_panel_figure(job: FigureJob, settings: list[tuple[str, int]], x_columns: tuple[str, str],
                      titles: tuple[str, str], scheduled: bool = False) -> None:
    spec = job.params
    frame = _epoch_rows(read_runs(job.inputs["runs"]))
    apply_style()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained")
    _setting_panels(axes, frame, settings, x_columns, scheduled)
    for ax, title in zip(axes, titles):
        ax.set_title(title)
    save_figure(fig, job.png_path, f"{job.caption} {_cnn_setup(spec, frame)}", _with_network(job))


def plot_fig_A_2(job: FigureJob) -> None:
    """Fig A.2: KFAC and EKFAC at every batch size, (a) per iteration and (b) per second."""
    _two_panel_figure(job, batch_size_settings(job.params), ("step", "seconds"),
                      ("(a) training loss per iteration", "(b) training loss per second"))


def plot_schedule(job: FigureJob) -> None:
    """Figs A.4 and A.5: each optimiser at its first batch size with η halved every ``halve_every`` epochs,
    (a) per epoch and (b) per second."""
    spec = job.params
    settings = [s for s in main_settings(spec) if s not in [tuple(p) for p in spec.get("also_show", [])]]
    _two_panel_figure(job, settings, ("epoch", "seconds"),
                      (f"(a) per epoch, η halved every {spec['halve_every']} epochs", "(b) per second"), scheduled=True)


plot_fig_A_4 = plot_schedule
plot_fig_A_5 = plot_schedule
