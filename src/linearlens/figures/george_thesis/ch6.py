"""Figures for Chapter 6 (NTK alignment) and appendix B. The plots of Figs 6.1-6.6 and B.1-B.8 (tangent-kernel
spectrum, alignment with the labels, SuperNat, complexity measures); Fig 6.5's left half is an algorithm
box, drawn with its curves."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Circle

from ...analysis.george_thesis.ch6 import (
    DISK_RATIO_INDEX,
    FOURIER_RANGE,
    SPECTRAL_RATIO_INDEX,
    disk_rows,
    frequency_trend,
    percent,
    read_npz,
)
from ...data.synthetic import DISK_RADIUS
from ...manifests.jobs import FigureJob
from ..style import apply_style, save_figure

# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and its alignment with the labels over training (alignment) ---

# --- end of alignment ---

# --- Figs 6.4, B.7: alignment on easy vs difficult examples (easy_difficult) ---

# --- end of easy_difficult ---

# --- Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task (disk) ---

# The thesis's setup (App. B.3.1) and its NS defaults (spec §2, Fig 6.1): what a caption compares against.
DISK_THESIS = {"depth": 6, "width": 256, "n_train": 500, "grid": 50, "iterations": 2000, "lr": 0.05,
               "rows": [0, 100, 500, 2000], "activation": "relu", "centred": True}
LABEL_COLOURS = {1: "#c0392b", 0: "#2c6fbb"}


def _boundary(ax) -> None:
    """The class boundary ‖x‖ = sqrt(2/π), drawn lightly."""
    ax.add_patch(Circle((0, 0), DISK_RADIUS, fill=False, linestyle="--", linewidth=0.7, color="0.15", alpha=0.45))


def _disk_departures(spec: dict, n_train: int, side: int) -> str:
    """The configured values that differ from the thesis (sizes) or from the spec's defaults for
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

# --- end of disk ---

# --- Fig B.2: spectral bias of a random MLP's tangent kernel (spectral_bias) ---

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

# --- end of spectral_bias ---

# --- Fig 6.5: SuperNat vs gradient descent on noisy linear regression (supernat) ---

# --- end of supernat ---

# --- Fig B.3: which norm measures capacity (random RBF features) (rbf_capacity) ---

# --- end of rbf_capacity ---

# --- Fig B.1: output change along the Jacobian's top singular directions (perturbation) ---

# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

# --- end of complexity ---
