"""Figures for Chapter 5 (lazy vs hasty) and appendix C. The plots of Figs 5.1-5.4 and C.1-C.9 (linearised vs
non-linear training on easy and difficult examples; the quadratic model)."""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from ...analysis.george_thesis.ch5 import (
    LINEARITY_METRICS,
    SWEEP_ALPHA,
    common_progress,
    cscore_label,
    group_columns,
    matched_difference,
    network_name,
    progress_curve,
    read_runs,
    read_summaries,
    run_key,
    turning_point,
)
from ...manifests.jobs import FigureJob
from ..style import apply_style, save_figure

# --- Fig 5.1: the yin-yang toy, α = 1 vs α = 100, Δloss maps at loss thresholds ---


# --- Figs 5.4, C.9: the quadratic model in closed form, and a 2-layer linear MLP on its datasets ---


# --- Figs 5.2, C.1-C.6: α-scaled runs on C-score groups and noisy labels, linearity metrics ---

# Every curve is drawn against the run's progress (mean training loss of the C-score deciles, clean
# examples' loss for the noisy labels), made monotone by a running minimum, the axis reversed so that
# training goes to the right; α = 1 solid, the largest α dashed.

SHOWN_DECILES = (0, 2, 7, 9)  # the author's code plots the bottom 10%, 20-30%, 70-80% and top 10% deciles
DECILE_NAMES = {0: "bottom 10%", 2: "20-30%", 7: "70-80%", 9: "top 10%"}
METRIC_NAMES = {"sign_similarity": "sign similarity", "ntk_alignment": "NTK alignment",
                "representation_alignment": "representation alignment"}
METRIC_COLOURS = {"sign_similarity": "C2", "ntk_alignment": "C4", "representation_alignment": "C1"}
PROGRESS_LABELS = {"cscore": "mean training loss", "noisy": "clean examples' training loss"}


@dataclass
class DifficultyRuns:
    """A figure's runs and their logs, looked up by experiment, architecture, α, rate and seed."""

    job: FigureJob

    def __post_init__(self):
        self.runs = self.job.params["runs"]
        self.spec = self.job.params["spec"]
        self.frames = read_runs(self.job.inputs["runs"], self.runs)
        self.summaries = read_summaries(self.job.inputs["summaries"], self.runs)

    def of(self, experiment: str, architecture: str, seed: int, alpha: float | None = None,
           lr: float | None = None) -> list[tuple[dict, pd.DataFrame]]:
        return [(run, self.frames[run_key(run)]) for run in self.runs
                if run["experiment"] == experiment and run["architecture"] == architecture and run["seed"] == seed
                and (alpha is None or run["alpha"] == alpha) and (lr is None or run["lr"] == lr)]

    def pair(self, experiment: str, architecture: str, seed: int) -> list[tuple[dict, pd.DataFrame]]:
        """The runs of every α at the base rate, smallest α first."""
        runs = self.of(experiment, architecture, seed, lr=self.spec["optimiser"]["lr"])
        return sorted(runs, key=lambda item: item[0]["alpha"])

    def runs_note(self) -> str:
        lengths = [f"{run['experiment']} α = {run['alpha']:g}, lr {run['lr']:g}, seed {run['seed']}: "
                  f"{self.summaries[run_key(run)]['steps']} steps ({self.summaries[run_key(run)]['ended']})"
                  for run in self.runs]
        return "Runs: " + "; ".join(lengths) + "."


def _alpha_style(run: dict) -> str:
    return "-" if run["alpha"] == 1 else "--"


def _alpha_label(run: dict) -> str:
    return "non-linear (α = 1)" if run["alpha"] == 1 else f"linear (α = {run['alpha']:g})"


def _progress_axis(ax, experiment: str, label: bool = True) -> None:
    if not ax.xaxis_inverted():
        ax.invert_xaxis()
    if label:
        ax.set_xlabel(PROGRESS_LABELS[experiment])


def _decile_panel(ax, pair, metric: str = "loss", deciles=SHOWN_DECILES) -> None:
    """Fig 5.2 top left: each decile's training loss (or accuracy) against the mean training loss."""
    colours = plt.cm.viridis(np.linspace(0, 0.8, 10))
    for run, frame in pair:
        columns = group_columns(frame, "train", metric)
        for b in deciles:
            ax.plot(*progress_curve(frame, "cscore", columns[b]), _alpha_style(run), color=colours[b], linewidth=1.1)
    handles = [Line2D([], [], color="black", linestyle=_alpha_style(run), label=_alpha_label(run)) for run, _ in pair]
    handles += [Line2D([], [], color=colours[b], linewidth=2, label=DECILE_NAMES.get(b, f"decile {b + 1}"))
                for b in reversed(deciles)]
    ax.legend(handles=handles, fontsize=7, title="C-score decile", title_fontsize=7)
    ax.set_ylabel(f"training {metric} per C-score decile")
    _progress_axis(ax, "cscore")


def _noisy_panel(ax, pair, metric: str = "loss") -> None:
    """Fig 5.2 bottom left: the noisy examples' loss (their wrong labels) and the test loss against
    the clean examples' loss; the turning point (memorisation starts) marked on the loss curves."""
    for run, frame in pair:
        style = _alpha_style(run)
        ax.plot(*progress_curve(frame, "noisy", f"noisy_{metric}"), style, color="C3")
        ax.plot(*progress_curve(frame, "noisy", f"test_{metric}"), style, color="C0")
        if metric == "loss":
            turn = turning_point(frame)
            if turn.turned:
                ax.plot(turn.clean_loss, turn.noisy_loss, "o", color="C3", markersize=4)
    handles = [Line2D([], [], color="black", linestyle=_alpha_style(run), label=_alpha_label(run)) for run, _ in pair]
    handles += [Line2D([], [], color="C3", label=f"noisy training examples ({'wrong labels' if metric == 'loss' else 'fitted to the wrong label'})"),
                Line2D([], [], color="C0", label="test examples")]
    if metric == "loss":
        handles.append(Line2D([], [], color="C3", marker="o", linestyle="", label="turning point (max)"))
    ax.legend(handles=handles, fontsize=7)
    ax.set_ylabel(metric)
    _progress_axis(ax, "noisy")


def _linearity_panel(ax, pair, experiment: str) -> None:
    """Fig 5.2 right: the three linearity metrics against the same progress."""
    for run, frame in pair:
        for metric in LINEARITY_METRICS:
            ax.plot(*progress_curve(frame, experiment, metric), _alpha_style(run), color=METRIC_COLOURS[metric])
    handles = [Line2D([], [], color="black", linestyle=_alpha_style(run), label=_alpha_label(run)) for run, _ in pair]
    handles += [Line2D([], [], color=METRIC_COLOURS[m], label=METRIC_NAMES[m]) for m in LINEARITY_METRICS]
    ax.legend(handles=handles, fontsize=7)
    ax.set_ylabel("linearity metric")
    _progress_axis(ax, experiment)


def _data_source(job: FigureJob, spec: dict, cscores: bool) -> str:
    return f"{job.data_source}; {cscore_label(spec)}" if cscores else job.data_source


def _setup(spec: dict, architecture: str) -> str:
    regimes = ", ".join(f"α = {r['alpha']:g} for {r['epochs']} epochs"
                        + (f" (stopping at mean training loss {r['stop_loss']:g})" if r["stop_loss"] else "")
                        for r in spec["regimes"])
    optimiser = spec["optimiser"]
    return (f"{network_name(spec, architecture)}, SGD lr {optimiser['lr']:g}/α² momentum {optimiser['momentum']:g}, "
            f"batch {spec['batch_size']}, {regimes}; every α from the same θ₀, batch order and label noise "
            f"({spec['label_noise']:.0%} of the training labels replaced by a different class). Linearity metrics "
            f"on {spec['probe_size']} test examples at every {spec['linearity_every']}th log point.")


def _four_panels(axes, runs: DifficultyRuns, architecture: str, seed: int) -> None:
    """Fig 5.2's four panels into axes (top left, bottom left, top right, bottom right)."""
    cscore, noisy = runs.pair("cscore", architecture, seed), runs.pair("noisy", architecture, seed)
    _decile_panel(axes[0], cscore)
    _noisy_panel(axes[1], noisy)
    _linearity_panel(axes[2], cscore, "cscore")
    _linearity_panel(axes[3], noisy, "noisy")
    axes[0].set_title(f"C-score deciles, seed {seed}", fontsize=9)
    axes[1].set_title(f"{runs.spec['label_noise']:.0%} noisy labels, seed {seed}", fontsize=9)
    axes[2].set_title("linearity, C-score runs", fontsize=9)
    axes[3].set_title("linearity, noisy-label runs", fontsize=9)


def plot_fig_5_2(job: FigureJob) -> None:
    """Top left: training loss per C-score decile vs mean training loss; bottom left: noisy examples'
    and test loss vs clean loss; right: the linearity metrics of both runs (α = 1 vs the largest α)."""
    apply_style()
    runs = DifficultyRuns(job)
    main = runs.spec["main"]
    fig, axes = plt.subplots(2, 2, figsize=(10, 8))
    _four_panels([axes[0, 0], axes[1, 0], axes[0, 1], axes[1, 1]], runs, main["architecture"], main["seed"])
    fig.tight_layout()
    caption = (f"{job.caption} Fig 5.2: {_setup(runs.spec, main['architecture'])} Deciles shown: the author's code's "
               f"four of the ten. {runs.runs_note()}")
    save_figure(fig, job.png_path, caption, _data_source(job, runs.spec, cscores=True))


def plot_fig_C_2(job: FigureJob) -> None:
    """Fig 5.2 for the other seeds (initialisation and batch order): one row of four panels per seed."""
    apply_style()
    runs = DifficultyRuns(job)
    seeds = sorted({run["seed"] for run in runs.runs})
    architecture = runs.spec["main"]["architecture"]
    fig, axes = plt.subplots(len(seeds), 4, figsize=(18, 4.2 * len(seeds)), squeeze=False)
    for row, seed in zip(axes, seeds):
        _four_panels(row, runs, architecture, seed)
    fig.tight_layout()
    caption = f"{job.caption} Fig C.2: as Fig 5.2 with seeds {', '.join(map(str, seeds))}. {_setup(runs.spec, architecture)}"
    save_figure(fig, job.png_path, caption, _data_source(job, runs.spec, cscores=True))


def plot_fig_C_3(job: FigureJob) -> None:
    """Fig 5.2 bottom (noisy labels) with the second architecture (VGG11)."""
    _one_experiment(job, "noisy", "Fig C.3")


def plot_fig_C_4(job: FigureJob) -> None:
    """Fig 5.2 top (C-score deciles) with the second architecture (VGG11)."""
    _one_experiment(job, "cscore", "Fig C.4")


def _one_experiment(job: FigureJob, experiment: str, label: str) -> None:
    apply_style()
    runs = DifficultyRuns(job)
    run = runs.runs[0]
    pair = runs.pair(experiment, run["architecture"], run["seed"])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    (_decile_panel if experiment == "cscore" else _noisy_panel)(axes[0], pair)
    _linearity_panel(axes[1], pair, experiment)
    axes[0].set_title(network_name(runs.spec, run["architecture"]), fontsize=9)
    fig.tight_layout()
    caption = f"{job.caption} {label}: {_setup(runs.spec, run['architecture'])} {runs.runs_note()}"
    save_figure(fig, job.png_path, caption, _data_source(job, runs.spec, cscores=experiment == "cscore"))


def plot_fig_C_1(job: FigureJob) -> None:
    """α = 1 at several learning rates (noisy labels), the largest-α run for reference: noisy-train
    and test accuracy vs clean progress (left), and each linearity metric (right)."""
    apply_style()
    runs = DifficultyRuns(job)
    fig, axes = plt.subplots(1, 4, figsize=(18, 4.2))
    sweep = [run for run in runs.runs if run["alpha"] == SWEEP_ALPHA]
    colours = dict(zip((run["lr"] for run in sweep), plt.cm.plasma(np.linspace(0, 0.85, len(sweep)))))
    for run in runs.runs:
        frame = runs.frames[run_key(run)]
        colour = colours.get(run["lr"], "black") if run["alpha"] == SWEEP_ALPHA else "black"
        label = f"α = 1, lr {run['lr']:g}" if run["alpha"] == SWEEP_ALPHA else f"α = {run['alpha']:g}, lr {run['lr']:g}"
        axes[0].plot(*progress_curve(frame, "noisy", "noisy_accuracy"), "-", color=colour, label=label)
        axes[0].plot(*progress_curve(frame, "noisy", "test_accuracy"), "--", color=colour)
        for ax, metric in zip(axes[1:], LINEARITY_METRICS):
            ax.plot(*progress_curve(frame, "noisy", metric), _alpha_style(run), color=colour, label=label)
    axes[0].set_ylabel("accuracy: noisy training examples (solid), test (dashed)")
    axes[0].legend(fontsize=7)
    for ax, metric in zip(axes[1:], LINEARITY_METRICS):
        ax.set_ylabel(METRIC_NAMES[metric])
    for ax in axes:
        _progress_axis(ax, "noisy")
    fig.tight_layout()
    caption = (f"{job.caption} Fig C.1: {_setup(runs.spec, runs.spec['main']['architecture'])} The α = 1 runs at the "
               f"smaller rates are capped at the α = {max(r['alpha'] for r in runs.spec['regimes']):g} run's "
               f"iterations (the smallest ones never reach low loss: what they reach is drawn). {runs.runs_note()}")
    save_figure(fig, job.png_path, caption, job.data_source)


def plot_fig_C_5(job: FigureJob) -> None:
    """loss(α = 1) − loss(largest α) of every C-score decile, train and test, at equal mean training loss."""
    apply_style()
    runs = DifficultyRuns(job)
    main = runs.spec["main"]
    (one, nonlinear), (lazy, linear) = runs.pair("cscore", main["architecture"], main["seed"])
    curves = [progress_curve(frame, "cscore", "train_loss") for frame in (nonlinear, linear)]
    grid = common_progress(curves, 60)
    colours = plt.cm.viridis(np.linspace(0, 0.8, runs.spec["bins"]))
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True)
    for ax, split in zip(axes, ("train", "test")):
        for b, column in enumerate(group_columns(nonlinear, split)):
            ax.plot(grid, matched_difference(nonlinear, linear, "cscore", column, grid), color=colours[b],
                    label=f"decile {b + 1}")
        ax.axhline(0, color="0.3", linewidth=0.8)
        ax.set_title(f"{split} examples", fontsize=9)
        _progress_axis(ax, "cscore")
    axes[0].set_ylabel(f"loss(α = 1) − loss(α = {lazy['alpha']:g}) per C-score decile")
    axes[1].legend(fontsize=7, ncol=2, title="C-score decile (1 = lowest)", title_fontsize=7)
    fig.tight_layout()
    caption = (f"{job.caption} Fig C.5: the two runs of Fig 5.2 (top) read at equal mean training loss by linear "
               f"interpolation along their monotone progress; positive: the linear run is ahead on that decile. "
               f"{_setup(runs.spec, main['architecture'])}")
    save_figure(fig, job.png_path, caption, _data_source(job, runs.spec, cscores=True))


def plot_fig_C_6(job: FigureJob) -> None:
    """Accuracy version of Fig 5.2: noisy-train and test accuracy vs clean progress (left), training
    accuracy per C-score decile vs mean training loss (right)."""
    apply_style()
    runs = DifficultyRuns(job)
    main = runs.spec["main"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    _noisy_panel(axes[0], runs.pair("noisy", main["architecture"], main["seed"]), metric="accuracy")
    _decile_panel(axes[1], runs.pair("cscore", main["architecture"], main["seed"]), metric="accuracy")
    fig.tight_layout()
    caption = f"{job.caption} Fig C.6: {_setup(runs.spec, main['architecture'])} {runs.runs_note()}"
    save_figure(fig, job.png_path, caption, _data_source(job, runs.spec, cscores=True))



# --- Figs 5.3, C.7, C.8: spurious correlations ---
