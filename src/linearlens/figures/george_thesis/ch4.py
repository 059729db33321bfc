"""Figures for Chapter 4 (EKFAC) and appendix A. Here: Fig 4.1, a cartoon drawn from its caption, and Fig 4.2
(gradient correlations in the KFE; KFAC vs EKFAC error against the exact empirical Fisher). To come: Figs
4.3-4.6 and A.1-A.5 (issue 27)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Ellipse

from ...analysis.george_thesis.ch4 import (
    METHOD_LABELS,
    error_summary,
    layer_numbers,
    mean_off_diagonal,
    read_correlations,
    read_errors,
    theorem_margins,
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
# The spec's paper-scale setup (the thesis gives none of these: 'a small 4 sigmoid layer MLP classifier
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
    save_figure(fig, job.png_path, caption, job.data_source)
