"""Figures for Chapter 6 (NTK alignment) and appendix B. The plots of Figs 6.1-6.6 and B.1-B.8 (tangent-kernel
spectrum, alignment with the labels, SuperNat, complexity measures); Fig 6.5's left half is an algorithm
box, drawn with its curves."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.patches import Circle

from ...analysis.george_thesis.ch6 import (
    COMPLEXITY_MEASURES,
    DISK_RATIO_INDEX,
    FOURIER_RANGE,
    RANDOM,
    RBF_CURVES,
    SPECTRAL_RATIO_INDEX,
    SUPERNAT_METHODS,
    TOP,
    disk_rows,
    example_mean_shares,
    frequency_trend,
    min_max,
    network_name,
    ordered_panels,
    panel_curves,
    percent,
    perturbation_summary,
    rbf_capacity_curves,
    read_complexity_finals,
    read_kernel_runs,
    read_npz,
    read_perturbation_runs,
    read_rbf_capacity,
    read_supernat,
    run_title,
    still_rising,
    supernat_curves,
    supernat_final_errors,
)
from ...data.synthetic import DISK_RADIUS
from ...manifests.jobs import FigureJob
from ..style import apply_style, save_figure

# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and label alignment over training ---

TRAIN_STYLE, TEST_STYLE = "-", "--"


def _log_steps(ax) -> None:
    """Iterations on a log axis that still shows step 0 (linear below 1)."""
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlim(left=0)


def _label_grid(axes, ylabels) -> None:
    """Rows of curves over training: each row's label, log iterations everywhere."""
    for ax, ylabel in zip(axes[:, 0], ylabels):
        ax.set_ylabel(ylabel)
    for ax in axes.flat:
        _log_steps(ax)
    for ax in axes[-1]:
        ax.set_xlabel("SGD iterations")


def _named_families(job: FigureJob) -> str:
    """Each family as the thesis names it, with its stand-in at this scale."""
    families = job.params["families"]
    return "; ".join(network_name(families[f]) for f in dict.fromkeys(run["family"] for run in job.params["runs"]))


def _data_source(job: FigureJob) -> str:
    """The data, and the networks as the thesis names them with their stand-ins, on the image."""
    return f"{job.data_source}; network: {_named_families(job)}"


def _setup_note(job: FigureJob, what: str = "Networks") -> str:
    seeds = sorted({run["seed"] for run in job.params["runs"]})
    centring = ("over the examples for each output" if job.params["centring"] == "per_output"
                else "over all n·c indices")
    return f" {what}: {_named_families(job)}. Seeds {', '.join(map(str, seeds))}; CKA centred {centring}."


def plot_fig_6_2(job: FigureJob) -> None:
    """Columns = label-noise levels; rows: accuracy, max/mean/median eigenvalue, effective rank, trace
    ratios T_k (train probe kernel; T_40, T_80, T_160 in red)."""
    _spectrum_figure(job, "Fig 6.2")


def plot_fig_B_8(job: FigureJob) -> None:
    """As Fig 6.2 for the learning rate of the appendix runs."""
    _spectrum_figure(job, "Fig B.8")


def _spectrum_figure(job: FigureJob, label: str) -> None:
    apply_style()
    runs = job.params["runs"]
    rows = read_kernel_runs(job.inputs["rows"], runs)
    spectra = read_kernel_runs(job.inputs["spectra"], runs)
    fig, axes = plt.subplots(4, len(runs), figsize=(4.2 * len(runs), 11), sharex=True, squeeze=False)
    for column, (run, ratios_path) in enumerate(zip(runs, job.inputs["trace_ratios"])):
        mine = rows[(rows.setting == run["setting"]) & (rows.seed == run["seed"])]
        spectrum = spectra[(spectra.setting == run["setting"]) & (spectra.seed == run["seed"])]
        ax = axes[0, column]
        ax.plot(mine.step, mine.train_accuracy, TRAIN_STYLE, color="C0", label="train")
        ax.plot(mine.step, mine.test_accuracy, TEST_STYLE, color="C0", label="test")
        ax.set_title(run_title(run, job.params["families"]), fontsize=10)
        for probe, style in (("train", TRAIN_STYLE), ("test", TEST_STYLE)):
            part = spectrum[spectrum.probe == probe]
            for statistic, colour in (("max", "C3"), ("mean", "C1"), ("median", "C2")):
                axes[1, column].plot(part.step, part[f"eigenvalue_{statistic}"], style, color=colour,
                                     label=f"{statistic} ({probe})")
            axes[2, column].plot(part.step, part.effective_rank, style, color="C4", label=probe)
        _trace_ratio_lines(axes[3, column], ratios_path)
        axes[1, column].set_yscale("log")
    _label_grid(axes, ("accuracy", "eigenvalue", "effective rank", "trace ratio $T_k$ (train)"))
    axes[0, 0].legend(fontsize=8)
    axes[1, 0].legend(fontsize=7, ncol=2)
    axes[2, 0].legend(fontsize=8)
    fig.tight_layout()
    caption = (f"{job.caption} {label}: train (solid) and test (dashed) probe kernels over all outputs, centred "
               f"features; T_k = share of the trace in the k largest eigenvalues (viridis: all k; red: k = 40, 80, "
               f"160).{_setup_note(job)}")
    save_figure(fig, job.png_path, caption, _data_source(job))


def _trace_ratio_lines(ax, ratios_path: str) -> None:
    with np.load(ratios_path) as saved:
        steps, ratios = saved["steps"], saved["trace_ratios_train"]
    ranks = ratios.shape[1]
    colours = sns.color_palette("viridis", ranks)
    for k in range(0, ranks, max(1, ranks // 60)):  # about 60 of the r curves: the rest adds ink, not information
        ax.plot(steps, ratios[:, k], color=colours[k], linewidth=0.6)
    for k in (40, 80, 160):
        if k <= ranks:
            ax.plot(steps, ratios[:, k - 1], color="red", linewidth=1.2)
            ax.annotate(f"$T_{{{k}}}$", (steps[-1], ratios[-1, k - 1]), fontsize=7, color="red")
    ax.set_ylim(0, 1.02)


def plot_fig_6_3(job: FigureJob) -> None:
    """Columns = label-noise levels; rows: accuracy, CKA with the labels (train and test kernels),
    per-layer CKA of the train kernels, per-layer CKA of the test kernels."""
    apply_style()
    runs = job.params["runs"]
    rows = read_kernel_runs(job.inputs["rows"], runs)
    layers = read_kernel_runs(job.inputs["layers"], runs)
    fig, axes = plt.subplots(4, len(runs), figsize=(4.2 * len(runs), 11), sharex=True, squeeze=False)
    depth = int(layers.layer_index.max()) + 1
    colours = sns.color_palette("viridis", depth)
    for column, run in enumerate(runs):
        mine = rows[(rows.setting == run["setting"]) & (rows.seed == run["seed"])]
        per_layer = layers[(layers.setting == run["setting"]) & (layers.seed == run["seed"])]
        axes[0, column].plot(mine.step, mine.train_accuracy, TRAIN_STYLE, color="C0", label="train")
        axes[0, column].plot(mine.step, mine.test_accuracy, TEST_STYLE, color="C0", label="test")
        axes[0, column].set_title(run_title(run, job.params["families"]), fontsize=10)
        axes[1, column].plot(mine.step, mine.train_cka, TRAIN_STYLE, color="C3", label="train kernel")
        axes[1, column].plot(mine.step, mine.test_cka, TEST_STYLE, color="C3", label="test kernel")
        for row, probe in ((2, "train"), (3, "test")):
            for index, layer in per_layer[per_layer.probe == probe].groupby("layer_index"):
                axes[row, column].plot(layer.step, layer.cka, color=colours[int(index)],
                                       label=f"layer {int(index) + 1}" if column == 0 else None)
    _label_grid(axes, ("accuracy", "CKA(K, K_Y)", "layer CKA, train kernels", "layer CKA, test kernels"))
    for row in (0, 1):
        axes[row, 0].legend(fontsize=8)
    axes[2, 0].legend(fontsize=7, ncol=2, title="input → output", title_fontsize=7)
    fig.tight_layout()
    caption = (f"{job.caption} Fig 6.3: CKA of the tangent kernel with the labels' kernel (train probe: the labels "
               f"trained on, random ones included; test probe: clean labels), and of each layer's kernel "
               f"(a layer = one module's weight and bias; viridis from input to output).{_setup_note(job)}")
    save_figure(fig, job.png_path, caption, _data_source(job))


def plot_fig_B_5(job: FigureJob) -> None:
    """CKA of the test probe kernel with the labels over training, one panel per network."""
    runs = job.params["runs"]
    rows = read_kernel_runs(job.inputs["rows"], runs)
    _architecture_figure(job, rows, "test_cka", "centred alignment CKA(K, K_Y)", "Fig B.5")


def plot_fig_B_6(job: FigureJob) -> None:
    """As Fig B.5 with the uncentred alignment, derived from the saved Grams."""
    runs = job.params["runs"]
    spectra = read_kernel_runs(job.inputs["spectra"], runs)
    test = spectra[spectra.probe == "test"]
    _architecture_figure(job, test, "cka_uncentred", "uncentred alignment", "Fig B.6", _uncentred_note(job, test))


def _uncentred_note(job: FigureJob, test: pd.DataFrame) -> str:
    """What B.6 shows per network (first → last alignment) and why the uncentred alignment can fall
    where the centred one rises: the share of the uncentred kernel that is the example-mean tangent
    feature's part, which centring removes."""
    families, parts = job.params["families"], []
    for run, grams in zip(job.params["runs"], job.inputs["grams"]):
        curve = test[(test.family == run["family"]) & (test.seed == run["seed"])].cka_uncentred
        shares = example_mean_shares(grams)["share"]
        parts.append(f"{network_name(families[run['family']])}: {curve.iloc[0]:.3f} → {curve.iloc[-1]:.3f}, "
                     f"example-mean part {shares.min():.1%}–{shares.max():.1%} of ‖K‖_F")
    return (" Uncentred alignment of the test probe's tangent kernel K with K_Y = YYᵀ (one-hot labels), neither "
            "centred, from the saved Grams; first → last value per network, with the share of ‖K‖_F that is the "
            "example-mean tangent feature's part (what centring removes) over the run: " + "; ".join(parts) + ". "
            "The thesis's uncentred alignment rises. Where it falls here, that part dominates K and training turns "
            "its class block towards a sum-to-zero matrix, which is orthogonal to K_Y on a class-balanced probe, "
            "while the centred alignment (Fig B.5) rises: a property of these networks, not of the measure.")


def _architecture_figure(job: FigureJob, frame, column: str, ylabel: str, label: str, note: str = "") -> None:
    apply_style()
    runs, families = job.params["runs"], job.params["families"]
    panels = list(dict.fromkeys(run["family"] for run in runs))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False)
    for ax, family in zip(axes[0], panels):
        for seed, curve in frame[frame.family == family].groupby("seed"):
            ax.plot(curve.step, curve[column], color="C3", label=f"seed {seed}")
            _mark_divergence(ax, curve, column)
        ax.set_title(network_name(families[family]).replace(" (stand-in", "\n(stand-in"), fontsize=9)
        ax.set_xlabel("SGD iterations")
        _log_steps(ax)
    axes[0, 0].set_ylabel(ylabel)
    fig.tight_layout()
    caption = f"{job.caption} {label}: test probe kernel (clean labels), noise-free runs.{note}{_setup_note(job)}"
    save_figure(fig, job.png_path, caption, _data_source(job))


def _mark_divergence(ax, curve: pd.DataFrame, column: str) -> None:
    """A run whose values stop being numbers (it diverged) is marked where its curve ends."""
    lost = curve[curve[column].isna()]
    if len(lost):
        ax.text(0.5, 0.5, f"diverged by step {int(lost.step.iloc[0]):,}", transform=ax.transAxes, ha="center",
                color="C3", fontsize=9)


# --- Figs 6.4, B.7: alignment on easy vs difficult examples ---

# The thesis's networks (Fig 6.4's caption, Fig B.7's): MLPs on 28×28 MNIST with hidden layers of this width.
# A family's label names its difficult examples; the network is read from its model spec.
THESIS_EASY_DIFFICULT_WIDTH = {"fig_6_4": 80, "fig_B_7": 60}
MNIST_PIXELS = 784


def _easy_difficult_network(job: FigureJob) -> str:
    """The MLPs that ran, and the thesis's network they stand in for where they differ from it."""
    width = THESIS_EASY_DIFFICULT_WIDTH[job.figure]
    models = [job.params["models"][f"{run['family']}/{run['setting']}"] for run in job.params["runs"]]
    shapes = dict.fromkeys("MLP " + "-".join(str(n) for n in [m["in_features"], *m["hidden"], m["out_features"]])
                           for m in models)
    thesis = all(m["in_features"] == MNIST_PIXELS and set(m["hidden"]) == {width} for m in models)
    kind = f"the thesis's MLP{'s' if len(shapes) > 1 else ''} of hidden width {width} on 28×28 MNIST"
    return ", ".join(shapes) + ("" if thesis else f" (stand-in for {kind})")

EASY_STYLE, DIFFICULT_STYLE = ("C0", "-"), ("C3", "--")


def _easy_difficult_axes(ax, curve, legend: bool) -> None:
    ax.plot(curve.step, curve.easy_cka, EASY_STYLE[1], color=EASY_STYLE[0],
            label="easy examples" if legend else None)
    ax.plot(curve.step, curve.difficult_cka, DIFFICULT_STYLE[1], color=DIFFICULT_STYLE[0],
            label="difficult examples" if legend else None)
    _log_steps(ax)


def plot_fig_6_4(job: FigureJob) -> None:
    """One column per kind of difficult examples: CKA on easy vs difficult training examples (top)
    and accuracy (bottom) over training."""
    apply_style()
    runs, families = job.params["runs"], job.params["families"]
    rows = read_kernel_runs(job.inputs["rows"], runs)
    panels = list(dict.fromkeys(run["family"] for run in runs))
    fig, axes = plt.subplots(2, len(panels), figsize=(4.6 * len(panels), 6.2), sharex=True, squeeze=False)
    for column, family in enumerate(panels):
        for seed, curve in rows[rows.family == family].groupby("seed"):
            _easy_difficult_axes(axes[0, column], curve, legend=seed == rows.seed.min())
            axes[1, column].plot(curve.step, curve.train_accuracy, "-", color="0.3", label="train (all)")
            axes[1, column].plot(curve.step, curve.test_accuracy, "--", color="0.3", label="test")
            _log_steps(axes[1, column])
        axes[0, column].set_title("difficult: " + network_name(families[family]).replace(" (stand-in", "\n(stand-in"),
                                  fontsize=10)
        axes[1, column].set_xlabel("SGD iterations")
    axes[0, 0].set_ylabel("CKA(K, K_Y)")
    axes[1, 0].set_ylabel("accuracy")
    axes[0, 0].legend(fontsize=8)
    axes[1, 0].legend(fontsize=8)
    fig.tight_layout()
    caption = (f"{job.caption} Fig 6.4: alignment measured on probe sets of easy and of difficult training examples."
               f"{_setup_note(job, 'Difficult examples')} Network: {_easy_difficult_network(job)}.")
    save_figure(fig, job.png_path, caption, f"{job.data_source}; network: {_easy_difficult_network(job)}")


def plot_fig_B_7(job: FigureJob) -> None:
    """Rows = depths, columns = seeds: CKA on easy vs difficult training examples."""
    apply_style()
    runs = job.params["runs"]
    rows = read_kernel_runs(job.inputs["rows"], runs)
    settings = list(dict.fromkeys(run["setting"] for run in runs))
    seeds = sorted({run["seed"] for run in runs})
    fig, axes = plt.subplots(len(settings), len(seeds), figsize=(3.8 * len(seeds), 2.6 * len(settings)),
                             sharex=True, sharey=True, squeeze=False)
    for i, setting in enumerate(settings):
        for j, seed in enumerate(seeds):
            curve = rows[(rows.setting == setting) & (rows.seed == seed)]
            _easy_difficult_axes(axes[i, j], curve, legend=i == j == 0)
            cut = " (still aligning when training stops)" if still_rising(curve.easy_cka) else ""
            axes[i, j].set_title(f"{setting}, seed {seed}{cut}", fontsize=9)
        axes[i, 0].set_ylabel("CKA(K, K_Y)")
    for ax in axes[-1]:
        ax.set_xlabel("SGD iterations")
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    caption = (f"{job.caption} Fig B.7: depth = number of linear layers; a panel marked 'still aligning' ends with "
               f"the easy examples' CKA above all its earlier values.{_setup_note(job, 'Difficult examples')} "
               f"Networks: {_easy_difficult_network(job)}.")
    save_figure(fig, job.png_path, caption, f"{job.data_source}; network: {_easy_difficult_network(job)}")


# --- Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task ---

# The thesis's setup (App. B.3.1) and our defaults where it is silent: what a caption compares against.
DISK_THESIS = {"depth": 6, "width": 256, "n_train": 500, "grid": 50, "iterations": 2000, "lr": 0.05,
               "rows": [0, 100, 500, 2000], "activation": "relu", "centred": True}
LABEL_COLOURS = {1: "#c0392b", 0: "#2c6fbb"}


def _boundary(ax) -> None:
    """The class boundary ‖x‖ = sqrt(2/π), drawn lightly."""
    ax.add_patch(Circle((0, 0), DISK_RADIUS, fill=False, linestyle="--", linewidth=0.7, color="0.15", alpha=0.45))


def _disk_departures(spec: dict, n_train: int, side: int) -> str:
    """The configured values that differ from the thesis (sizes) or from our defaults for
    what the thesis leaves out (lr, iterations, rows, centring)."""
    ran = {**spec, "n_train": n_train, "grid": side}
    changed = [f"{key} {ran[key]} (thesis {value})" for key, value in DISK_THESIS.items() if ran.get(key) != value]
    return "; ".join(changed) if changed else "none"


def _disk_setup(spec: dict, n_train: int, side: int) -> str:
    features = "centred tangent features Φ(x) − E_x Φ(x)" if spec["centred"] else "uncentred tangent features"
    return (f" Setup: MLP of {spec['depth']} Linear layers ({spec['depth'] - 1} hidden × {spec['width']}, "
            f"{spec['activation']}, PyTorch default init), full-batch GD on the binary cross-entropy, lr {spec['lr']:g}, "
            f"{spec['iterations']:,} iterations, n = {n_train:,} training points; eigenfunctions = eigenvectors of the "
            f"scalar tangent Gram of {features} on the {side}×{side} grid (layer-wise route, float64), each signed "
            f"to a positive sum. Not in the thesis (spec defaults): ReLU, default init, lr 0.05, 2,000 iterations, "
            f"rows at iterations 0, 100, 500, 2,000; centred features as the thesis's reported kernels (spec §1.5). "
            f"Departures from the thesis: "
            f"{_disk_departures(spec, n_train, side)}.")


def plot_fig_6_1(job: FigureJob) -> None:
    """Fig 6.1: eigenfunctions j = 1..k of the tangent kernel (columns, non-increasing eigenvalue)
    at the run's snapshot iterations (rows), the class boundary overlaid; each row labelled with
    λ20/λ1. The first run is drawn; the caption gives every run's ratios."""
    apply_style()
    spec, runs = job.params, [read_npz(path) for path in job.inputs["runs"]]
    run = runs[0]
    side, (n_rows, _, k) = int(run["grid_side"]), run["eigenvectors"].shape
    fig, axes = plt.subplots(n_rows, k, figsize=(1.25 * k + 1.4, 1.25 * n_rows + 0.5), squeeze=False,
                             layout="constrained")
    for row, (iteration, vectors, ratios) in enumerate(zip(run["rows"], run["eigenvectors"], run["ratios"])):
        for j, ax in enumerate(axes[row]):
            image = vectors[:, j].reshape(side, side)
            limit = np.abs(image).max()
            ax.imshow(image, origin="lower", extent=(-1, 1, -1, 1), cmap="RdBu_r", vmin=-limit, vmax=limit)
            _boundary(ax)
            ax.set(xticks=[], yticks=[])
            ax.grid(False)
            if row == 0:
                ax.set_title(f"j = {j + 1}", fontsize=9)
        axes[row, 0].set_ylabel(f"iteration {iteration:,}\nλ{DISK_RATIO_INDEX}/λ1 = {percent(ratios[DISK_RATIO_INDEX - 1])}",
                                fontsize=8)
    summary = [disk_rows(r) for r in runs]
    ratios = "; ".join(f"seed {int(r['seed'].iloc[0])}: " + " → ".join(
        f"{percent(v)} at {i:,}" for i, v in zip(r["iteration"], r["ratio"])) for r in summary)
    first, last = summary[0].iloc[0], summary[0].iloc[-1]
    caption = (f"{job.caption} Eigenfunctions of the tangent kernel ranked by non-increasing eigenvalue (columns) at "
               f"iterations of training (rows), red/blue = sign, dashed circle = class boundary ‖x‖ = sqrt(2/π); "
               f"seed {int(run['seed'])} shown. Spectrum anisotropy λ{DISK_RATIO_INDEX}/λ1: {ratios} (thesis: 1.5% "
               f"at iteration 0 → 0.2% at 2,000). Largest |correlation| of the top {k} eigenfunctions with the grid "
               f"labels: {first['label_correlation']:.2f} at iteration {int(first['iteration']):,} → "
               f"{last['label_correlation']:.2f} at {int(last['iteration']):,}."
               + _disk_setup(spec, int(run["n_train"]), side))
    save_figure(fig, job.png_path, caption, job.data_source)


def _label_scatter(ax, x: np.ndarray, y: np.ndarray, size: float) -> None:
    for label, name in ((1, "inside: y = +1"), (0, "outside: y = −1")):
        chosen = y == label
        ax.scatter(x[chosen, 0], x[chosen, 1], s=size, color=LABEL_COLOURS[label], label=name, linewidths=0)
    _boundary(ax)
    ax.set(xlim=(-1.05, 1.05), ylim=(-1.05, 1.05), aspect="equal", xlabel="x₁", ylabel="x₂")


def plot_fig_B_4(job: FigureJob) -> None:
    """Fig B.4: the Disk dataset, training points (left) and the test grid (right) by label."""
    apply_style()
    data = read_npz(job.inputs["data"][0])
    n_train, n_grid = len(data["y_train"]), len(data["y_test"])
    side = int(round(n_grid ** 0.5))
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 4.2), layout="constrained")
    _label_scatter(left, data["x_train"], data["y_train"], 9)
    _label_scatter(right, data["x_test"], data["y_test"], max(2.0, 3000 / n_grid))
    left.set_title(f"training set, n = {n_train:,}")
    right.set_title(f"test grid, {side}×{side} = {n_grid:,} points")
    left.legend(fontsize=7, loc="upper right", framealpha=0.9)
    share = float(np.mean(data["y_train"]))
    sizes = [f"{n_train:,} training points (thesis 500)" if n_train != 500 else "",
             f"a {side}×{side} grid (thesis 50×50)" if side != 50 else ""]
    departures = ", ".join(part for part in sizes if part) or "none"
    caption = (f"{job.caption} Left: training set (x_i, y_i), x ~ U[−1, 1]², y_i = +1 if ‖x_i‖ ≤ r = sqrt(2/π) "
               f"(the disk holds half of the square) and −1 otherwise; {share:.0%} of these points are inside. Right: the "
               f"test grid used to evaluate the tangent kernel (Fig 6.1). Departures from the thesis: {departures}.")
    save_figure(fig, job.png_path, caption, job.data_source)


# --- Fig B.2: spectral bias of a random MLP's tangent kernel ---

SPECTRAL_THESIS = {"depth": 6, "width": 256, "n_points": 50, "low": 0.0, "high": 1.0, "seed": 0, "centred": True}
SHOWN_EIGENVECTORS = (0, 5, 20)  # the thesis's middle panel (indices from 0)
NULL_EIGENVALUE = 1e-12  # eigenvalues below this share of λ1 are numerically zero


def plot_fig_B_2(job: FigureJob) -> None:
    """Fig B.2: (left) |DFT| of each eigenvector (x = eigen-index j, y = frequency); (middle)
    eigenvectors j ∈ {0, 5, 20}; (right) the eigenvalues, log scale, with λ10/λ1."""
    apply_style()
    spec, run = job.params, read_npz(job.inputs["run"][0])
    values, vectors, fourier = run["eigenvalues"], run["eigenvectors"], run["fourier"]
    ratio = float(run["ratios"][SPECTRAL_RATIO_INDEX - 1])
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(13.5, 3.8), layout="constrained")
    image = left.imshow(fourier, origin="lower", aspect="auto", cmap="viridis", interpolation="nearest",
                        extent=(-0.5, fourier.shape[1] - 0.5, -0.5, fourier.shape[0] - 0.5))
    left.plot(np.arange(fourier.shape[1]), run["dominant_frequency"], ".", color="white", markersize=3,
              label="dominant frequency")
    left.grid(False)
    left.legend(fontsize=7, loc="upper left")
    fig.colorbar(image, ax=left, label="|DFT|")
    left.set(xlabel="eigenvector j (non-increasing eigenvalue)", ylabel="frequency (cycles over [0, 1])",
             title="Fourier decomposition of each eigenvector")
    for j in (j for j in SHOWN_EIGENVECTORS if j < vectors.shape[1]):
        middle.plot(run["x"], vectors[:, j], marker=".", markersize=3, label=f"j = {j}")
    middle.set(xlabel="x", ylabel="eigenvector entry", title="eigenvectors")
    middle.legend(fontsize=7)
    # Centring leaves the constant direction with a (numerically) zero eigenvalue: not on a log axis.
    index = np.arange(1, len(values) + 1)
    positive = values > NULL_EIGENVALUE * values[0]
    right.semilogy(index[positive], values[positive], ".-", color="0.2", markersize=4)
    right.semilogy([SPECTRAL_RATIO_INDEX], [values[SPECTRAL_RATIO_INDEX - 1]], "o", color="#c0392b",
                   label=f"λ{SPECTRAL_RATIO_INDEX}/λ1 = {percent(ratio)}")
    right.set(xlabel="index (eigenvalues numbered from 1)", ylabel="eigenvalue (log scale)", title="eigenvalues")
    right.legend(fontsize=8)
    trend = frequency_trend(run["dominant_frequency"])
    ran = {**spec, "n_points": len(run["x"])}
    departures = "; ".join(f"{key} {ran[key]} (thesis/spec default {value})" for key, value in SPECTRAL_THESIS.items()
                           if ran.get(key) != value) or "none"
    features = "centred tangent features" if spec["centred"] else "uncentred tangent features"
    caption = (f"{job.caption} Scalar tangent Gram ({len(values)}×{len(values)}, {features}, float64) of a random "
               f"MLP of {spec['depth']} Linear layers ({spec['depth'] - 1} hidden × {spec['width']}, "
               f"{spec['activation']}, PyTorch default init, seed {int(run['seed'])}, {int(run['parameters']):,} "
               f"parameters) on {len(run['x'])} equally spaced points of [{spec['low']:g}, {spec['high']:g}]; "
               f"eigenvectors signed to a positive sum; {int((~positive).sum())} numerically zero eigenvalue(s) "
               f"(below 1e-12 λ1: the constant direction centring removes) left off the right panel. "
               f"λ{SPECTRAL_RATIO_INDEX}/λ1 = {percent(ratio)} (thesis ≈ 4%). "
               f"Dominant frequency against j for j < {FOURIER_RANGE}: Spearman ρ = {trend['spearman']:.2f}, "
               f"{trend['monotone_share']:.0%} of steps non-decreasing. Not in the thesis (spec defaults): ReLU, default "
               f"init, seed 0; centred features as the thesis's reported kernels (spec §1.5); departures: {departures}.")
    save_figure(fig, job.png_path, caption, job.data_source)


# --- Fig 6.5: SuperNat vs gradient descent on noisy linear regression ---

SUPERNAT_COLOURS = {"gd": "#2c6fbb", "supernat": "#c0392b"}
SUPERNAT_BOX = "\n".join([
    r"$\bf{SuperNat}$",
    r"Input: features $\Phi_0=\Phi$ ($n\times P$), $w=0$, step $\eta$",
    r"for $t = 0, 1, \ldots$:",
    r"  1. SVD  $\Phi_t=\sum_j \sqrt{\lambda_{jt}}\,u_j v_j^\top$",
    r"  2. $\nu^*_j=\kappa\,/\,|u_j^\top\nabla_f L|$   (Prop 6.4.2, 6.4.9)",
    r"      minimises $\|\delta w_{GD}\|_{\tilde A_\nu}\,\|\tilde A_\nu^{-1}\Phi_t^\top\|_F$",
    r"      over $\tilde A_\nu=\sum_j\sqrt{\nu_j}\,v_j v_j^\top+\mathrm{Id}_\perp$   (6.4.8)",
    r"  3. rescale: $\Phi_{t+1}=\Phi_t\tilde A_{\nu^*}^{-1}$,",
    r"      $\lambda_{j,t+1}=|u_j^\top\nabla_f L|\,\lambda_{jt}/\kappa$   (6.4.10)",
    r"  4. GD step in the rescaled model:",
    r"      $\delta\tilde w=-\eta\,\Phi_{t+1}^\top\nabla_f L$",
])
KAPPA_NOTES = {"trace_preserving": r"$\kappa$: $\sum_j\lambda_{jt}$ kept constant (trace-preserving)",
               "max_residual": r"$\kappa=\max_j|u_j^\top\nabla_f L|$ (the rescaling only contracts)",
               "literal": r"$\kappa=1$ (eq. 6.4.10 with no isotropic rescaling)"}


def plot_fig_6_5(job: FigureJob) -> None:
    """Fig 6.5: (left) the SuperNat algorithm box; (right) test error of GD and SuperNat over iterations
    on the noisy linear-regression toy, mean ± std over seeds, log-log axes from iteration 1."""
    spec = job.params
    record = read_supernat(job.inputs["runs"][0])
    curves = supernat_curves(record)
    final = supernat_final_errors(record)
    apply_style()
    fig, (box, ax) = plt.subplots(1, 2, figsize=(12, 4.6), gridspec_kw={"width_ratios": [1.05, 1]})
    box.axis("off")
    box.text(0.0, 0.98, SUPERNAT_BOX + "\n" + KAPPA_NOTES[spec["kappa"]], transform=box.transAxes, va="top",
             ha="left", fontsize=10, linespacing=2.0,
             bbox={"boxstyle": "round,pad=0.6", "facecolor": "#f7f7f7", "edgecolor": "0.6"})
    for method, label in SUPERNAT_METHODS.items():
        curve = curves[(curves["method"] == method) & (curves["iteration"] >= 1)]
        ax.plot(curve["iteration"], curve["mean"], color=SUPERNAT_COLOURS[method], label=label, linewidth=1.8)
        lower = np.maximum(curve["mean"] - curve["std"], curve["mean"] / 10)
        ax.fill_between(curve["iteration"], lower, curve["mean"] + curve["std"], color=SUPERNAT_COLOURS[method],
                        alpha=0.2, linewidth=0)
    ax.set(xscale="log", yscale="log", xlabel="iteration", ylabel="test error (MSE, noise-free targets)",
           title="noisy linear regression")
    ax.legend()
    seeds = len(record["seeds"])
    caption = (f"{job.caption} Setup: Φ = [φ, φ_noise] with φ ~ N(0, 1) and d = {spec['d']} noise features "
               f"~ N(0, I_d/d); y = φ + P_noise ε, P_noise = φ_noise φ_noiseᵀ as written (not an orthogonal "
               f"projector), σ² = {spec['noise_variance']:g}, n = {spec['n_train']}; test set: {spec['n_test']} fresh "
               f"points with noise-free targets y = φ (not stated in the thesis). Loss ‖f − y‖²/(2n) from w = 0, "
               f"η = {spec['lr_factor']:g}/λ_max(ΦΦᵀ/n), {spec['iterations']} iterations, κ {spec['kappa']} "
               f"(thesis: 'up to isotropic rescaling'; trap T-NTK-10); learning rate, iterations, test set and κ "
               f"are our choices. The 50 × {spec['d'] + 1} feature matrix has {spec['d'] + 1} singular modes (the "
               f"thesis's sums run to n). Curves: mean ± std over {seeds} seeds, from iteration 1 (log axes). "
               f"Final test MSE: GD {final['gd'].mean():.4f}, SuperNat {final['supernat'].mean():.4f}; any run "
               f"that converges ends at the unique least-squares interpolator (P < n, y in the span of Φ).")
    save_figure(fig, job.png_path, caption, job.data_source)


# --- Fig B.3: which norm measures capacity (random RBF features) ---

RBF_COLOURS = {"test_error": "0.15", "bound_identity": "#2c6fbb", "bound_optimised": "#c0392b"}


def _plot_interpolator_clouds(fig, cell, record: dict) -> None:
    scatter_c = record["scatter_c"]
    grid = cell.subgridspec(2, (len(scatter_c) + 1) // 2, hspace=0.45, wspace=0.35)
    colours = sns.color_palette("viridis", len(scatter_c))
    i, j = (int(mode) for mode in record["projection_modes"])
    for k, c in enumerate(scatter_c):
        ax = fig.add_subplot(grid[k // grid.ncols, k % grid.ncols])
        points = record["projections"][k]
        limit = 1.1 * np.abs(points).max() or 1.0
        ax.scatter(points[:, 0], points[:, 1], s=8, color=colours[k], alpha=0.8)
        ax.set(xlim=(-limit, limit), ylim=(-limit, limit), aspect="equal", title=f"c = {c:g}")
        ax.tick_params(labelsize=6.5)
        ax.set_xlabel(f"on φ$_{{{i}}}$", fontsize=8, labelpad=1)
        ax.set_ylabel(f"on φ$_{{{j}}}$", fontsize=8, labelpad=1)


def _plot_bounds_against_c(ax, curves, margin: float) -> None:
    """Curves on a log axis sized by the points where the solution interpolates; a point where it does
    not (numerical rank < n) is an open marker, and one above the axis is written at the top edge."""
    interpolates = curves["max_train_residual"] <= 1e-6
    shown = [curves.loc[interpolates, f"{key}_mean"] + curves.loc[interpolates, f"{key}_std"] for key in RBF_CURVES]
    top = 5 * max(float(values.max()) for values in shown) if interpolates.any() else None
    for key, label in RBF_CURVES.items():
        mean, std = curves[f"{key}_mean"], curves[f"{key}_std"]
        colour = RBF_COLOURS[key]
        ax.plot(curves.index, mean, color=colour, label=label)
        ax.fill_between(curves.index, np.maximum(mean - std, mean / 10), mean + std, color=colour, alpha=0.15,
                        linewidth=0)
        ax.scatter(curves.index[interpolates], mean[interpolates], s=12, color=colour, zorder=3)
        ax.scatter(curves.index[~interpolates], np.minimum(mean[~interpolates], top or np.inf), s=30,
                   facecolor="white", edgecolor=colour, zorder=3, marker="^" if top else "o")
        for c, value in mean[~interpolates].items():
            if top and value > top:
                ax.annotate(f"{value:.2g}", (c, top), textcoords="offset points", xytext=(-4, -12), ha="right",
                            fontsize=7, color=colour)
    ax.set(yscale="log", xlabel="feature scaling factor c", ylabel="test error / Rademacher bound",
           title=f"margin γ = {margin:g}")
    if top:
        ax.set_ylim(top=top)
    ax.legend(fontsize=8, loc="center right")


def plot_fig_B_3(job: FigureJob) -> None:
    """Fig B.3: (left) centred minimum-ℓ2 interpolators projected on two right singular vectors, one
    small panel per c (equal scales on both axes, so the cloud's shape shows its anisotropy); (right)
    test error and the A = Id and optimised-A bounds against c (log y)."""
    spec = job.params
    record = read_rbf_capacity(job.inputs["runs"][0])
    curves = rbf_capacity_curves(record)
    apply_style()
    fig = plt.figure(figsize=(13, 5.2))
    outer = fig.add_gridspec(1, 2, width_ratios=[1.1, 1], wspace=0.18)
    _plot_interpolator_clouds(fig, outer[0], record)
    _plot_bounds_against_c(fig.add_subplot(outer[1]), curves, spec["margin"])
    i, j = (int(mode) for mode in record["projection_modes"])
    not_interpolating = curves.index[curves["max_train_residual"] > 1e-6]
    caption = (f"{job.caption} Setup: P = {spec['n_features']} random Fourier features (RBFSampler, γ = "
               f"{spec['gamma']:g}, random_state {spec['feature_seed']}) of N = {spec['n_points']} equally spaced "
               f"points on [−{spec['half_width']:g}, {spec['half_width']:g}] (a not stated in the thesis); "
               f"singular values rescaled to l_j^c = 1 + c(l_j − 1); labels sign(ψ) of the left singular vector "
               f"with 0-based index {spec['label_mode']} (the second; the top one keeps one sign on the interval, "
               f"which labels every point +1), oriented to be positive for x > 0; left panel on the right singular "
               f"vectors with 0-based indices {i} and {j}, equal scales on both axes. {spec['n_subsamples']} training "
               f"subsamples of n = {spec['n_train']} points; test error = 0-1 error of sign(f) on the N − n "
               f"points outside S (a tie, |f| ≤ {spec['tie_tolerance']:g}, counts ½: at c = 0 with P ≥ N the "
               f"whitened kernel is the identity and f vanishes off S). Bounds (B.2.9) divided by the margin γ = "
               f"{spec['margin']:g}, the interpolator's own training margin (its empirical ramp loss is 0), "
               f"plotted raw with the test error on one log axis, mean ± std over subsamples; the optimised "
               f"bound (1/(γn)) Σ_j |u_jᵀy| takes the best basis where singular values repeat (relative "
               f"{spec['rtol']:g}: at c = 0 all are equal and it is ‖y‖/(γn)). Singular values below "
               f"{spec['rtol']:g} × the largest count as zero")
    if len(not_interpolating):
        caption += (f"; at c = {', '.join(f'{c:g}' for c in not_interpolating)} a sample feature matrix has "
                    f"numerical rank {int(curves.loc[not_interpolating, 'min_rank'].min())} < n, so the minimum-norm "
                    f"least-squares solution replaces the interpolator")
        caption += " (open markers; a value above the axis is written at its top edge)"
    save_figure(fig, job.png_path, caption + ".", job.data_source)


# --- Fig B.1: output change along the Jacobian's top singular directions ---

PERTURBATION_COLOURS = {TOP: "#c0392b", RANDOM: "#2c6fbb"}
# The thesis's run (§B.1.4, and our defaults for what it leaves out), for the caption's departures.
THESIS_PERTURBATION = {"dataset": "cifar10", "model": "VGG11 without BatchNorm", "epochs": 10, "n_probe": 100,
                       "n_eval": 1000, "directions": 50}


def model_label(model: dict, width: bool = True) -> str:
    """A zoo spec as a reader names the network: "VGG11 without BatchNorm, base width 64", "small_cnn (width 32)"."""
    if model["name"] == "vgg":
        norm = "with" if model.get("batch_norm") else "without"
        label = f"VGG{model.get('depth', 11)} {norm} BatchNorm"
        return f"{label}, base width {model.get('base_channels', 64)}" if width else label
    arguments = ", ".join(f"{key} {value}" for key, value in model.items() if key != "name")
    return f"{model['name']} ({arguments})" if arguments else model["name"]


def perturbation_departures(spec: dict, n_eval: int) -> list[str]:
    """What this configuration runs differently from the thesis's Fig B.1."""
    ran = {"dataset": spec["dataset"], "model": model_label(spec["model"], width=False),
           "epochs": spec["epochs"], "n_probe": spec["n_probe"], "n_eval": n_eval, "directions": spec["directions"]}
    names = {"dataset": "data", "model": "network", "epochs": "epochs", "n_probe": "probe examples",
             "n_eval": "evaluation examples", "directions": "directions of each kind"}
    departures = [f"{names[key]} {ran[key]} (thesis {THESIS_PERTURBATION[key]})"
                  for key in names if ran[key] != THESIS_PERTURBATION[key]]
    if spec["model"]["name"] == "vgg" and spec["model"].get("base_channels", 64) != 64:
        departures.append(f"VGG base width {spec['model']['base_channels']} (thesis 64)")
    return departures


def perturbation_caption(job: FigureJob, runs, summary) -> str:
    """The manifest's lead, then what ran (read from the runs and the group's config) and how it departs."""
    spec, first = job.params, runs.iloc[0]
    k, optimiser = int((runs["kind"] == TOP).sum() / runs["seed"].nunique()), spec["optimiser"]
    classes, seeds = int(first["num_classes"]), ", ".join(str(s) for s in sorted(runs["seed"].unique()))
    setup = (f"{model_label(spec['model'])} ({int(first['n_params']):,} parameters) trained {spec['epochs']} epochs "
             f"on {int(first['n_train']):,} examples ({optimiser['name'].upper()} lr {optimiser['lr']:g}, momentum "
             f"{optimiser.get('momentum', 0):g}, batch {spec['batch_size']}, weight decay "
             f"{optimiser.get('weight_decay', 0):g}, no augmentation), test accuracy "
             f"{summary['test_accuracy'].mean():.1%}; seed(s) {seeds}. Directions 1–{k}: the top right singular "
             f"vectors of the Jacobian of the {classes} outputs on the first {int(first['n_probe'])} test examples "
             f"(from the eigenvectors of the {int(first['n_probe']) * classes}×{int(first['n_probe']) * classes} "
             f"uncentred tangent Gram, v_j = Φᵀu_j/√λ_j); directions {k + 1}–{2 * k}: uniform on the unit sphere. "
             f"Each step is ε = {float(first['epsilon']):g} along a unit vector; y = ‖f_(w+εv)(X) − f_w(X)‖₂ over "
             f"the first {int(first['n_eval'])} test examples. Mean change along the top directions / along random "
             f"ones = {summary['ratio'].mean():.3g}.")
    departures = perturbation_departures(spec, int(first["n_eval"]))
    chosen = ("Settings the thesis leaves out, set here: ε, the probe (first test examples, uncentred "
              "Jacobian), the evaluation set, the optimiser's weight decay and augmentation (none).")
    return " ".join([job.caption.rstrip(".") + ".", setup, chosen] +
                    ([f"Departures from the thesis: {'; '.join(departures)}."] if departures else []))


def plot_fig_B_1(job: FigureJob) -> None:
    """Fig B.1: the output change along each top singular direction of the Jacobian (B.1.24: √λ_j ε to first
    order on the probe) and along random directions, log y; one marker per seed and direction."""
    runs = read_perturbation_runs(job.inputs["runs"])
    summary = perturbation_summary(runs)
    apply_style()
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    for kind, colour in PERTURBATION_COLOURS.items():
        chosen = runs[runs["kind"] == kind]
        ax.scatter(chosen["direction"], chosen["change"], s=18, color=colour, label=f"{kind} directions",
                   alpha=0.9 if runs["seed"].nunique() == 1 else 0.5, edgecolors="none")
    k = int(runs.loc[runs["kind"] == TOP, "direction"].max())
    ax.axvline(k + 0.5, color="0.5", linewidth=0.8, linestyle=":")
    ax.set(yscale="log", xlim=(0, 2 * k + 1), xlabel=f"direction (1–{k}: top singular vectors of J; "
           f"{k + 1}–{2 * k}: random)", ylabel="‖f(w + εv) − f(w)‖₂ on test examples")
    tick_step = next(step for step in (1, 2, 5, 10, 20, 50, 100, 2 * k) if 2 * k / step <= 10)  # 1, 10, 20, …
    ax.set_xticks(np.unique([1, *range(tick_step, 2 * k + 1, tick_step)]))
    ax.legend(loc="upper right", frameon=True)
    model = job.params["model"]
    network = model_label(model) + ("" if model["name"] == "vgg" else ", stand-in for VGG11")
    save_figure(fig, job.png_path, perturbation_caption(job, runs, summary), f"{job.data_source}; network: {network}")


# --- Fig 6.6: complexity measures against the generalisation gap ---

GAP_COLOUR, OURS_COLOUR, NEYSHABUR_COLOUR = "0.1", "#c0392b", "#2c6fbb"


def _measure_style(measure: str, colour) -> dict:
    if measure == "learning_flow":
        return {"color": OURS_COLOUR, "lw": 2.6, "marker": "o", "zorder": 5}
    if measure == "neyshabur":
        return {"color": NEYSHABUR_COLOUR, "lw": 2.2, "marker": "s", "zorder": 4}
    return {"color": colour, "lw": 1.0, "marker": ".", "alpha": 0.8}


def complexity_setup_note(finals: pd.DataFrame, spec: dict) -> str:
    """What ran: data, optimiser, stopping rule, probes, seeds, capped runs and undefined measures."""
    optimiser = spec["optimiser"]
    capped = finals[finals["capped"]]
    undefined = finals[finals["margin"] <= 0]
    parts = [
        f"SGD lr {optimiser['lr']:g}, momentum {optimiser.get('momentum', 0):g}, batch {spec['batch_size']}, "
        "no weight decay or augmentation",
        f"trained until the training cross-entropy is at most {spec['stop_loss']:g} (checked every epoch; "
        f"cap {spec['max_epochs']} epochs)",
        f"n_train = {', '.join(str(n) for n in sorted(finals['n_train'].unique()))}",
        f"Tr K_t on a fixed probe of {spec['trace_probe']} training examples (all outputs) every "
        f"{spec['trace_every']} steps, rescaled by n/{spec['trace_probe']}; ‖δw_t‖ summed every step",
        f"margin-based measures divided by γ = the {spec.get('margin_quantile', 0.05):g} quantile of the "
        "training margins; constants of the bounds dropped",
        f"{finals['seed'].nunique()} seed(s), seed means drawn",
        "capped runs (open markers): " + (", ".join(f"{r.panel} {r.value:g}" for r in capped.itertuples())
                                          if len(capped) else "none"),
    ]
    if len(undefined):
        parts.append("margin-based measures undefined (γ ≤ 0) for " +
                     ", ".join(f"{r.panel} {r.value:g}" for r in undefined.itertuples()))
    note = " Setup: " + "; ".join(parts) + "."
    return note + (f" Departures from the thesis: {spec['deviations']}." if spec.get("deviations") else "")


def plot_fig_6_6(job: FigureJob) -> None:
    """Three panels in the caption's order (width, label corruption, channels): the generalisation
    gap (test − train error) and every complexity measure, each min-max normalised within the
    panel, against the swept value; ours (eq. 6.4.11) and Neyshabur et al.'s highlighted."""
    apply_style()
    spec = job.params
    finals = read_complexity_finals(job.inputs, spec)
    curves = panel_curves(finals)
    panels = [p for p in ordered_panels(spec) if p in job.inputs]
    others = [m for m in COMPLEXITY_MEASURES if m not in ("learning_flow", "neyshabur")]
    palette = dict(zip(others, sns.color_palette("Set2", len(others))))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        curve = curves[curves["panel"] == panel].sort_values("value")
        x = curve["value"].to_numpy()
        for measure in reversed(list(COMPLEXITY_MEASURES)):  # ours drawn last, on top
            values = min_max(curve[measure].astype(float))
            if values.notna().any():
                ax.plot(x, values, label=COMPLEXITY_MEASURES[measure], **_measure_style(measure, palette.get(measure)))
        gap = min_max(curve["gap"])
        ax.plot(x, gap, color=GAP_COLOUR, lw=2.4, ls="--", label="generalisation gap", zorder=6)
        capped = curve["capped"].to_numpy()
        ax.scatter(x[capped], gap[capped], s=70, facecolors="white", edgecolors=GAP_COLOUR, zorder=7)
        if spec["panels"][panel]["vary"] != "corruption":
            ax.set_xscale("log", base=2)
        ax.set_xticks(x, [f"{v:g}" for v in x])
        ax.set_xlabel(spec["panels"][panel]["label"])
        ax.set_title(panel)
        ax.set_ylim(-0.05, 1.05)
    axes[0][0].set_ylabel("normalised value (min-max per panel)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:  # measures missing from the first panel (none so far) join the legend
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False)
    fig.tight_layout()
    stand_ins = [f"{panel} panel: {model_label(spec['panels'][panel]['model'])}, stand-in for VGG19" for panel in panels
                 if spec["panels"][panel]["model"]["name"] not in ("mlp", "vgg")]
    networks = "; network: MLP (the thesis's kind)" + "".join(f"; {text}" for text in stand_ins)
    save_figure(fig, job.png_path, job.caption + complexity_setup_note(finals, spec), job.data_source + networks)
