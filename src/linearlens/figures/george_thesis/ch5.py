"""Figures for Chapter 5 (lazy vs hasty) and appendix C. The plots of Figs 5.1-5.4 and C.1-C.9 (linearised vs
non-linear training on easy and difficult examples; the quadratic model)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...analysis.george_thesis.ch5 import (
    BALANCED_SETS,
    SPURIOUS_FAMILIES,
    one_run,
    read_spurious_runs,
    read_spurious_summaries,
)
from ...manifests.jobs import FigureJob
from ..style import apply_style, save_figure

# --- Fig 5.1: the yin-yang toy, α = 1 vs α = 100, Δloss maps at loss thresholds ---


# --- Figs 5.4, C.9: the quadratic model in closed form, and a 2-layer linear MLP on its datasets ---


# --- Figs 5.2, C.1-C.6: α-scaled runs on C-score groups and noisy labels, linearity metrics ---


# --- Figs 5.3, C.7, C.8: spurious correlations ---

ALPHA_COLOURS = {0.5: "C0", 1.0: "C2", 100.0: "C3"}  # the thesis's green non-linear, red linearised runs
WITH_SPURIOUS_MEANING = {"agreement": "label and spurious attribute agree",
                         "attribute": "the spurious attribute's value (the thesis's CelebA subgroups: women)"}


def _alpha_colour(alpha: float, alphas: list[float]):
    return ALPHA_COLOURS.get(alpha, plt.get_cmap("viridis")(sorted(alphas).index(alpha) / max(len(alphas) - 1, 1)))


def _alpha_label(alpha: float) -> str:
    names = {1.0: " (standard)", 100.0: " (≈ linearised)"}
    return f"α = {alpha:g}{names.get(alpha, '')}"


def _spurious_row(axes, frame: pd.DataFrame, family: str, seed: int, legend: bool) -> None:
    """One row of Fig 5.3: test accuracy over training; with- vs without-spurious accuracy on the
    balanced training subset, then on the balanced test subset (one trajectory per α, from the
    circle to the square)."""
    alphas = sorted(frame.alpha.unique())
    for alpha in alphas:
        run = one_run(frame, family, alpha, seed)
        colour = _alpha_colour(alpha, alphas)
        axes[0].plot(run.step, run.balanced_test_accuracy, color=colour, label=_alpha_label(alpha))
        for ax, subset in zip(axes[1:], BALANCED_SETS):
            x, y = run[f"{subset}_with_accuracy"], run[f"{subset}_without_accuracy"]
            ax.plot(x, y, color=colour, lw=1.2)
            ax.plot(x.iloc[0], y.iloc[0], "o", color=colour, ms=4)
            ax.plot(x.iloc[-1], y.iloc[-1], "s", color=colour, ms=4)
    axes[0].set_xscale("symlog", linthresh=1)
    axes[0].set_xlim(left=0)
    axes[0].set(xlabel="SGD iterations", ylabel="test accuracy (balanced test set)", ylim=(0, 1.02))
    for ax, name in zip(axes[1:], ("training", "test")):
        ax.plot([0, 1], [0, 1], ":", color="0.6", lw=0.8)
        ax.set(xlabel=f"{name} accuracy, with spurious", ylabel=f"{name} accuracy, w/o spurious",
               xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), title=f"balanced {name} subset")
    if legend:
        axes[0].legend(fontsize=8, loc="lower right")


def _spurious_figure(job: FigureJob, rows: list[tuple[str, int]], label: str) -> None:
    """Rows (family, seed), each drawn by ``_spurious_row`` under its family's name."""
    apply_style()
    runs = job.params["runs"]
    frame = read_spurious_runs(job.inputs["runs"], runs)
    summaries = read_spurious_summaries(job.inputs["summaries"], runs)
    families = job.params["families"]
    fig = plt.figure(figsize=(13, 4.0 * len(rows)), layout="constrained")
    subfigures = np.atleast_1d(fig.subfigures(len(rows), 1))
    for index, (subfigure, (family, seed)) in enumerate(zip(subfigures, rows)):
        axes = subfigure.subplots(1, 3)
        _spurious_row(axes, frame, family, seed, legend=index == 0)
        subfigure.suptitle(f"{families[family]['label']} — seed {seed}", fontsize=11)
    caption = f"{job.caption} {label}: " + _spurious_caption(rows, summaries, families)
    save_figure(fig, job.png_path, caption, job.data_source)


def _spurious_caption(rows: list[tuple[str, int]], summaries: pd.DataFrame, families: dict) -> str:
    """What each row shows, how every run ended and the balanced subsets' sizes."""
    parts = []
    for family in dict.fromkeys(family for family, _ in rows):
        mine = summaries[summaries.family == family].sort_values(["seed", "alpha"])
        ends = "; ".join(f"seed {int(r.seed)} α = {r.alpha:g}: {_ending(r)} ({int(r.steps):,} steps)"
                         for r in mine.itertuples())
        first = mine.iloc[0]
        cells = ", ".join(f"{cell} {n}" for cell, n in first.balanced_train.items())
        parts.append(f"{families[family]['label']}: 'with spurious' = {WITH_SPURIOUS_MEANING[families[family]['with_spurious']]}; "
                     f"balanced training subset per (label y, group g) cell: {cells} ({first.balanced_train_trained_on} of "
                     f"them trained on); runs ended: {ends}.")
    return ("left: accuracy on the balanced test subset (the author's code's test accuracy) against SGD iterations; "
            "middle and right: accuracy without against with the spurious feature on the balanced training and test "
            "subsets, one trajectory per α from its start (circle) to its end (square); dotted: equal accuracies. "
            "All α of a seed start from the same θ₀ with the same mini-batch order, f^α = α(f_θ − f_θ₀), lr/α². "
            + " ".join(parts))


def _ending(run) -> str:
    if run.ended == "stopped":
        return run.stop_reason
    return "diverged" if run.ended == "diverged" else f"the {run.epochs:.0f}-epoch cap"


def plot_fig_5_3(job: FigureJob) -> None:
    """Fig 5.3: the CelebA row and the Waterbirds row at the figure's seed."""
    seed = job.params["figure_seed"]
    rows = [(family, seed) for family in SPURIOUS_FAMILIES if any(r["family"] == family for r in job.params["runs"])]
    _spurious_figure(job, rows, "Fig 5.3")


def _appendix_figure(job: FigureJob, label: str) -> None:
    rows = sorted({(run["family"], run["seed"]) for run in job.params["runs"]}, key=lambda row: row[1])
    _spurious_figure(job, rows, label)


def plot_fig_C_7(job: FigureJob) -> None:
    """Fig C.7: the CelebA row of Fig 5.3 with the other seeds (initialisation and mini-batch order)."""
    _appendix_figure(job, "Fig C.7")


def plot_fig_C_8(job: FigureJob) -> None:
    """Fig C.8: the Waterbirds row of Fig 5.3 with the other seeds."""
    _appendix_figure(job, "Fig C.8")
