"""Figures for Chapter 5 (lazy vs hasty) and appendix C. The plots of Figs 5.1-5.4 and C.1-C.9 (linearised vs
non-linear training on easy and difficult examples; the quadratic model)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Circle

from ...analysis.george_thesis.ch5 import (
    TOY_REGION_MARGIN,
    crossing_summary,
    delta_loss_maps,
    read_toy_runs,
    region_means,
    toy_regimes,
    toy_regions,
)
from ...data.synthetic import YIN_YANG_CENTRES, YIN_YANG_RADIUS, square_grid, yin_yang_labels
from ...manifests.jobs import FigureJob
from ..style import apply_style, save_figure

# --- Fig 5.1: the yin-yang toy, α = 1 vs α = 100, Δloss maps at loss thresholds ---

REGIME_COLOURS = {"nonlinear": "#4caf50", "linear": "#e5533c"}  # the thesis's green and red
CLASS_COLOURS = ListedColormap(["#f6d7a7", "#b9d3ea"])  # label 0 (thesis −1), label 1 (+1)
POINT_COLOURS = {1: "#1f5f99", 0: "#b3631b"}
# The thesis's setup (text: seeds, n_train, lr; the author's final runs: iterations, thresholds; the
# spec's default grid)
TOY_THESIS = {"seeds": 100, "n_train": 100, "lr": 0.01, "min_iterations": 5000, "max_iterations": 25000,
              "grid": 100, "thresholds": [0.5, 0.4, 0.3]}


def _yin_yang_outline(ax) -> None:
    """The class boundary: the line x₂ = 0 and the two circles."""
    style = {"color": "0.1", "linewidth": 0.8, "alpha": 0.7}
    ax.axhline(0.0, linestyle="-", **style)
    for centre in YIN_YANG_CENTRES:
        ax.add_patch(Circle(centre, YIN_YANG_RADIUS, fill=False, linestyle="--", **style))


def _pixel_extent(side: int) -> tuple[float, ...]:
    """Pixels centred on the grid points of ``square_grid(side)``, which include the square's edges."""
    half = 1 / (side - 1)
    return (-1 - half, 1 + half, -1 - half, 1 + half)


def _square(ax) -> None:
    ax.set(xlim=(-1, 1), ylim=(-1, 1), aspect="equal", xticks=[-1, 0, 1], yticks=[-1, 0, 1])
    ax.grid(False)


def _task_panel(ax, runs: dict, picture_grid: int) -> None:
    """(a) The labels on a fine grid and the first seed's training set."""
    labels = yin_yang_labels(square_grid(picture_grid)).reshape(picture_grid, picture_grid)
    ax.imshow(labels, origin="lower", extent=_pixel_extent(picture_grid), cmap=CLASS_COLOURS, vmin=0, vmax=1,
              interpolation="nearest")
    x, y = runs["x_train"][0], runs["y_train"][0]
    for label, marker, name in ((1, "o", "y = +1"), (0, "x", "y = −1")):
        chosen = y == label
        ax.scatter(x[chosen, 0], x[chosen, 1], s=9, marker=marker, color=POINT_COLOURS[label], linewidths=0.9,
                   label=name)
    _yin_yang_outline(ax)
    _square(ax)
    ax.set(xlabel="x₁", ylabel="x₂", title=f"(a) task, seed {int(runs['data_seeds'][0])}'s {len(y)} points")
    ax.legend(loc="upper right", fontsize=6, framealpha=0.9)


def _curves_panel(ax, runs: dict) -> None:
    """(b) Every run's training loss against GD iterations, thresholds as horizontal lines."""
    nonlinear, linear = toy_regimes(runs)
    steps = runs["curve_steps"]
    shown = steps > 0  # a log axis
    for name, alpha in (("linear", linear), ("nonlinear", nonlinear)):
        curves = runs["train_loss"][runs["alpha"] == alpha][:, shown]
        ax.plot(steps[shown], curves.T, color=REGIME_COLOURS[name], alpha=0.3, linewidth=0.6)
        regime = "non-linear" if name == "nonlinear" else "linearised"
        ax.plot([], [], color=REGIME_COLOURS[name], label=f"{regime} (α = {alpha:g}), {len(curves)} runs")
    for threshold in runs["thresholds"]:
        ax.axhline(threshold, color="0.1", linewidth=0.7)
    ax.set(xscale="log", xlim=(steps[shown][0], steps[-1]), ylim=(0, np.log(2)), xlabel="GD iterations",
           ylabel="training loss", title="(b) training loss")
    ax.legend(loc="lower left", fontsize=6)


def _delta_panels(axes, runs: dict, maps: dict) -> plt.cm.ScalarMappable:
    """(c)-(e) Δloss on the test grid at each threshold, one colour scale centred at 0."""
    side = int(runs["grid_side"])
    limit = float(np.nanmax(np.abs(maps["delta"]))) if np.isfinite(maps["delta"]).any() else 1.0
    image = None
    for k, (ax, threshold) in enumerate(zip(axes, runs["thresholds"])):
        image = ax.imshow(maps["delta"][k].reshape(side, side), origin="lower", extent=_pixel_extent(side),
                          cmap="RdBu_r", vmin=-limit, vmax=limit, interpolation="nearest")
        if np.isnan(maps["delta"][k]).all():
            ax.text(0, -0.35, "no run of one regime\nreached this loss", ha="center", va="center", fontsize=8)
        _yin_yang_outline(ax)
        _square(ax)
        ax.set_title(f"({'cde'[k]}) Δloss at training loss {threshold:g}\n"
                     f"{maps['reached_nonlinear'][k]}/{maps['runs_nonlinear']} non-linear, "
                     f"{maps['reached_linear'][k]}/{maps['runs_linear']} linearised runs", fontsize=8)
        ax.set(xlabel="x₁")
    return image


def plot_fig_5_1(job: FigureJob) -> None:
    """Fig 5.1: (a) the yin-yang task and one training set, (b) training loss of every run of both
    regimes, (c)-(e) Δloss = mean non-linear − mean linearised grid loss at the three training-loss
    thresholds (red: the linearised runs do better, blue: the non-linear ones)."""
    apply_style()
    spec, runs = job.params, read_toy_runs(job.inputs["runs"])
    maps = delta_loss_maps(runs)
    fig, axes = plt.subplots(1, 5, figsize=(17.5, 3.9), layout="constrained",
                             gridspec_kw={"width_ratios": [1, 1.35, 1, 1, 1]})
    _task_panel(axes[0], runs, spec["picture_grid"])
    _curves_panel(axes[1], runs)
    image = _delta_panels(axes[2:], runs, maps)
    fig.colorbar(image, ax=axes[2:], shrink=0.85, label="Δloss (non-linear − linearised)")
    save_figure(fig, job.png_path, _toy_caption(job, spec, runs, maps), job.data_source)


def _toy_caption(job: FigureJob, spec: dict, runs: dict, maps: dict) -> str:
    nonlinear, linear = toy_regimes(runs)
    side = int(runs["grid_side"])
    means = region_means(maps["delta"], toy_regions(side))
    crossings = crossing_summary(runs).set_index(["threshold", "alpha"])
    per_threshold = []
    for k, threshold in enumerate(runs["thresholds"]):
        medians = [crossings.loc[(threshold, alpha)] for alpha in (nonlinear, linear)]
        per_threshold.append(
            f"loss {threshold:g}: reached by {int(medians[0]['reached'])}/{int(medians[0]['runs'])} non-linear and "
            f"{int(medians[1]['reached'])}/{int(medians[1]['runs'])} linearised runs (median first iteration "
            f"{_iteration(medians[0]['median_iteration'])} vs {_iteration(medians[1]['median_iteration'])}); mean "
            f"Δloss on the easy region {means['easy'][k]:+.3f}, on the disks {means['disks'][k]:+.3f}, between the "
            f"disks and x₂ = 0 {means['between'][k]:+.3f}")
    departures = [f"{key.replace('_', ' ')} {_setting(spec[key])} (thesis {_setting(value)})"
                  for key, value in TOY_THESIS.items() if spec[key] != value]
    return (f"{job.caption} Binary yin-yang task: y = +1 where x₂ ≤ 0, −1 above, flipped inside the disks of radius "
            f"{YIN_YANG_RADIUS:g} around (0.5, −0.5) and (−0.5, 0.5) (the author's toy code; not Kriener et al.'s "
            f"3-class Yin-Yang). {len(np.unique(runs['seed']))} seeds, each drawing its own {runs['x_train'].shape[1]} "
            f"training points and its own initialisation, shared by its runs at α = {nonlinear:g} (non-linear, green) "
            f"and α = {linear:g} (linearised, red). MLP 2-{'-'.join([str(spec['width'])] * (spec['depth'] - 1))}-1 "
            f"(ReLU, PyTorch default init), full-batch GD on the logistic loss of the centred output α(f_θ − f_θ₀) at "
            f"step {spec['lr']:g}/α², each run until its training loss is below every threshold and it has taken "
            f"{spec['min_iterations']:,} steps, at most {spec['max_iterations']:,}. Δloss(x) = mean non-linear − mean "
            f"linearised logistic loss on the {side}×{side} test grid (eq. 5.3.1), each mean over the runs that "
            f"reached the threshold (the others are left out and counted); red: the linearised runs do better, blue: "
            f"the non-linear ones. " + "; ".join(per_threshold)
            + f". Regions (claim H8): easy = the disk-free quadrants x₁x₂ > 0 at least {TOY_REGION_MARGIN:g} from every "
            f"class boundary; disks = inside the two disks. Departures from the thesis: "
            f"{', '.join(departures) or 'none'}.")


def _setting(value) -> str:
    return f"{value:,}" if isinstance(value, (int, float)) else str(value)


def _iteration(value: float) -> str:
    return f"{value:,.0f}" if np.isfinite(value) else "not reached by half the runs"


# --- Figs 5.4, C.9: the quadratic model in closed form, and a 2-layer linear MLP on its datasets ---


# --- Figs 5.2, C.1-C.6: α-scaled runs on C-score groups and noisy labels, linearity metrics ---


# --- Figs 5.3, C.7, C.8: spurious correlations ---
