"""Chapter 2 and Appendix A, the algorithmic stability of SGD: the plots of Figs 2.1-2.4, A.1-A.15
and Table 2.1 (a configuration table).

Every stability figure shares the thesis's motif: each sample a blue dot, the maximum over the
samples at each m a red dot, and y = a·m^b fitted to the red dots in green with its exponent b
annotated; both axes log. The figures differ only in which configurations, trials, quantities and
snapshot they lay out, so each is one row of a small table (``MOTIF_FIGURES``); the mode-connectivity
figures likewise (``INTERPOLATION_FIGURES``).
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, LogFormatter, NullLocator

from ...analysis.karp_thesis.ch2 import (
    THESIS_ITERATIONS,
    at_snapshot,
    exponent_summary,
    interpolation_dips,
    per_size_maxima,
    read_rows,
    sweep_rows,
)
from ...data.prepared import data_label
from ...manifests.jobs import FigureJob
from ..style import apply_style, save_figure, save_table

SAMPLE_BLUE, MAXIMUM_RED, FIT_GREEN = "#1f77b4", "#d62728", "#2ca02c"
PAIR_COLOURS = plt.get_cmap("tab10")
M_LABEL = "m (training-set size)"
MOTIF_TEXT = ("Each sample is a blue dot, the maximum over the samples at each m a red dot{fit}; both axes log "
              "(samples ≤ 0 cannot be shown and are counted on the panel).")
FIT_TEXT = (", and y = a·m^b is fitted to the red dots (scipy curve_fit in linear space, started from the log-log "
            "least-squares line) in green, its exponent b annotated with the log-log least-squares slope in "
            "smaller type")


# --- quantities, configurations and steps as the figures name them ---------------------------------

def quantity_label(column: str, loss: str) -> str:
    """A run column as an axis names it; ``loss`` is the configuration's (logistic or cross_entropy)."""
    loss_name = "logistic" if loss == "logistic" else "cross-entropy"
    return {"gap_loss": f"{loss_name} loss gap", "gap_error": "0-1 loss gap",
            "stability": f"{loss_name} stability β̂", "distance": "‖A(S) − A(S′)‖₂", "norm": "‖A(S)‖₂",
            "normalised_distance": "‖A(S) − A(S′)‖₂ / mean norm"}[column]


def signed(value: float, digits: int = 2) -> str:
    """With a typographic minus: −0.48."""
    return f"{value:.{digits}f}".replace("-", "−") if np.isfinite(value) else "n/a"


def figure_label(figure_id: str) -> str:
    """fig_A_11 → Fig A.11."""
    return "Fig " + figure_id.split("_", 1)[1].replace("_", ".")


def present_configurations(rows: pd.DataFrame, params: dict) -> list[str]:
    """The configurations the runs hold, in the config's order."""
    held = set(rows["configuration"].astype(str))
    return [name for name in params["configurations"] if name in held]


def configuration_label(params: dict, name: str) -> str:
    return params["configurations"][name].get("label", name)


def standin_lines(params: dict, names) -> list[str]:
    settings = params["configurations"]
    return [f"{settings[name].get('label', name)} — stand-in: {settings[name]['standin']}"
            for name in names if settings[name].get("standin")]


def steps_text(params: dict, names, snapshot: str) -> str:
    """Which step is shown and which thesis iteration it plays, e.g. "step 1,600 of 2,400 (the
    thesis's t = 100,000)"; per configuration where their steps differ."""
    groups: dict[tuple[int, int], list[str]] = {}
    for name in names:
        settings = params["configurations"][name]
        groups.setdefault((settings["snapshots"][snapshot], settings["steps"]), []).append(
            configuration_label(params, name))
    parts = [f"step {step:,} of {steps:,}" + (f" ({', '.join(labels)})" if len(groups) > 1 else "")
             for (step, steps), labels in groups.items()]
    return f"{'; '.join(parts)}, as the thesis's t = {THESIS_ITERATIONS[snapshot]:,}"


def count_text(counts: pd.Series) -> str:
    """"16", or "12-16" where the counts differ."""
    low, high = int(counts.min()), int(counts.max())
    return f"{low}" if low == high else f"{low}-{high}"


def samples_text(rows: pd.DataFrame, sample: str = "pair") -> str:
    """How many samples each (configuration, trial, m) has: "16 pairs per m"."""
    return f"{count_text(rows.groupby(['configuration', 'trial', 'm'])[sample].nunique())} {sample}s per m"


def trials_text(rows: pd.DataFrame) -> str:
    trials = sorted(int(t) for t in rows["trial"].unique())
    return f"trial{'s' if len(trials) > 1 else ''} {', '.join(map(str, trials))}"


def suptitle(fig, lines: list[str]) -> None:
    """The figure's heading, each line wrapped to the figure's width."""
    width = int(15 * fig.get_figwidth())  # characters of 9-point type per inch, roughly
    fig.suptitle("\n".join(textwrap.fill(line, width) for line in lines), fontsize=9)


class PlainLogFormatter(LogFormatter):
    """The log axis's choice of labelled ticks, as plain numbers (0.06, 10.7) rather than 6e−02."""

    def __call__(self, value, pos=None):
        return f"{value:g}" if super().__call__(value, pos) else ""


def _log_axes(ax, sizes) -> None:
    """Ticks at the sizes trained (a log axis would otherwise show powers of ten only)."""
    sizes = sorted(int(m) for m in sizes)
    ax.xaxis.set_major_locator(FixedLocator(sizes))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda m, _: f"{m / 1000:g}k" if m >= 10_000 else f"{m:g}"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.tick_params(axis="x", labelsize=7, labelrotation=45 if len(sizes) > 5 else 0)
    # plain numbers on the log y axis (0.01, 10.7), not 10^-2 or 1.07×10^1
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    ax.yaxis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.4)))


# --- the motif: samples, maxima per m and the power law --------------------------------------------

def motif_panel(ax, rows: pd.DataFrame, column: str, fit: bool = True, log: bool = True) -> dict | None:
    """Draw the samples of ``column`` against m (blue), their maximum at each m (red) and, with
    ``fit``, y = a·m^b fitted to the maxima (green, b annotated). Returns the annotated fit
    (``exponent_summary``: a, b and the log-log slope), None without one."""
    if rows.empty:
        ax.text(0.5, 0.5, "no runs", transform=ax.transAxes, ha="center", va="center", color="0.4")
        ax.set(xticks=[], yticks=[])
        return None
    maxima = per_size_maxima(rows, column)
    ax.scatter(rows["m"], rows[column], s=9, color=SAMPLE_BLUE, alpha=0.45, linewidths=0)
    ax.scatter(maxima.index, maxima.to_numpy(), s=24, color=MAXIMUM_RED, zorder=3)
    if log:  # a log axis cannot show the non-positive samples: count them
        ax.set(xscale="log", yscale="log")
        _log_axes(ax, maxima.index)
        hidden = int((rows[column] <= 0).sum())
        if hidden:
            ax.text(0.03, 0.03, f"{hidden} samples ≤ 0 not shown", transform=ax.transAxes, fontsize=6, color="0.35")
    if not fit:
        return None
    summary = exponent_summary(rows, column)
    if np.isfinite(summary["b"]):
        grid = np.linspace(maxima.index.min(), maxima.index.max(), 200)
        ax.plot(grid, summary["a"] * grid ** summary["b"], color=FIT_GREEN, linewidth=1.4, zorder=2)
    # a legend finds the corner the dots leave free
    slope = Line2D([], [], linestyle="none", label=f"log-log slope {signed(summary['loglog'])}")
    legend = ax.legend(handles=[Line2D([], [], color=FIT_GREEN, label=f"b = {signed(summary['b'])}"), slope],
                       loc="best", fontsize=8.5, handlelength=1.2, borderpad=0.3, labelspacing=0.2, framealpha=0.8)
    legend.get_texts()[0].set_color("#1b6e1b")
    legend.get_texts()[1].set(fontsize=6.5, color="0.3")
    return summary


# --- Figs 2.1-2.3, A.2-A.13: grids of motif panels ------------------------------------------------

GAPS_AND_STABILITY = ("gap_error", "gap_loss", "stability")
CE_GAP_AND_STABILITY = ("gap_loss", "stability")
DIMENSIONS = ("configuration", "trial", "quantity")


@dataclass(frozen=True)
class MotifFigure:
    lead: str  # what the figure shows, the caption's first sentence ({configurations}: the labels shown)
    snapshot: str  # early, main or late
    quantities: tuple[str, ...]  # run columns
    rows: str  # the dimension down the rows: configuration, trial or quantity
    columns: str  # the dimension across the columns; the third is held at its first value
    fit: bool = True


def _all_trials(quantities: tuple[str, ...], snapshot: str, shown: str) -> MotifFigure:
    return MotifFigure(f"All trials (columns) of configuration {{configurations}}: {shown} (rows) against m", snapshot,
                       quantities, "quantity", "trial")


def _every_run(column: str, lead: str) -> MotifFigure:
    return MotifFigure(lead, "main", (column,), "configuration", "trial", fit=False)


MOTIF_FIGURES = {
    "fig_2_1": MotifFigure("Logistic regression: logistic loss gap, logistic loss stability, parameter distance "
                           "and 0-1 loss gap against m", "main", ("gap_loss", "stability", "distance", "gap_error"),
                           "configuration", "quantity"),
    "fig_2_2": MotifFigure("The network configurations (rows): 0-1 loss gap, cross-entropy loss gap and "
                           "cross-entropy loss stability against m", "main", GAPS_AND_STABILITY,
                           "configuration", "quantity"),
    "fig_2_3": MotifFigure("‖A(S) − A(S′)‖₂ against m for each network configuration", "main", ("distance",),
                           "quantity", "configuration", fit=False),
    **{figure: _all_trials(GAPS_AND_STABILITY, "main", "0-1 loss gap, cross-entropy loss gap and cross-entropy "
                           "loss stability") for figure in ("fig_A_2", "fig_A_3", "fig_A_4")},
    **{figure: _all_trials(CE_GAP_AND_STABILITY, "early", "cross-entropy loss gap and stability")
       for figure in ("fig_A_5", "fig_A_6", "fig_A_7")},
    **{figure: _all_trials(CE_GAP_AND_STABILITY, "late", "cross-entropy loss gap and stability")
       for figure in ("fig_A_8", "fig_A_9", "fig_A_10")},
    "fig_A_11": _every_run("distance", "‖A(S) − A(S′)‖₂ against m, every configuration (rows) and trial (columns)"),
    "fig_A_12": _every_run("norm", "‖A(S)‖₂ against m, every configuration (rows) and trial (columns)"),
    "fig_A_13": _every_run("normalised_distance", "‖A(S) − A(S′)‖₂ / ((‖A(S)‖₂ + ‖A(S′)‖₂)/2) against m, every "
                           "configuration (rows) and trial (columns)"),
}


def _dimension_values(rows: pd.DataFrame, params: dict, quantities) -> dict[str, list]:
    return {"configuration": present_configurations(rows, params),
            "trial": sorted(int(t) for t in rows["trial"].unique()), "quantity": list(quantities)}


def _panel_title(params: dict, panel: dict, varying: set[str]) -> str:
    parts = ([configuration_label(params, panel["configuration"])] if "configuration" in varying else []) + (
        [f"trial {panel['trial']}"] if "trial" in varying else [])
    return " · ".join(parts)


def draw_motif_figure(job: FigureJob, layout: MotifFigure) -> None:
    """One motif panel per (row, column) of ``layout``, the third dimension at its first value
    (the first trial, or the one configuration the figure reads)."""
    apply_style()
    params = job.params
    rows = at_snapshot(read_rows(job.inputs["runs"]), layout.snapshot)
    values = _dimension_values(rows, params, layout.quantities)
    held = next(d for d in DIMENSIONS if d not in (layout.rows, layout.columns))
    rows = rows[rows[held] == values[held][0]] if held != "quantity" else rows
    values[held] = values[held][:1]
    varying = {d for d in DIMENSIONS if len(values[d]) > 1}
    n_rows, n_columns = len(values[layout.rows]), len(values[layout.columns])
    fig, axes = plt.subplots(n_rows, n_columns, figsize=(3.4 * n_columns + 0.4, 2.9 * n_rows + 1.2),
                             squeeze=False, layout="constrained")
    fits = []
    for i, row_value in enumerate(values[layout.rows]):
        for j, column_value in enumerate(values[layout.columns]):
            panel = {held: values[held][0], layout.rows: row_value, layout.columns: column_value}
            name, column = panel["configuration"], panel["quantity"]
            subset = rows[(rows["configuration"] == name) & (rows["trial"] == panel["trial"])]
            label = quantity_label(column, params["configurations"][name]["loss"])
            summary = motif_panel(axes[i, j], subset, column, layout.fit)
            axes[i, j].set(ylabel=label, xlabel=M_LABEL if i == n_rows - 1 else "")
            axes[i, j].set_title(_panel_title(params, panel, varying) or label, fontsize=9)
            if summary:
                fits.append(f"{_panel_title(params, panel, varying | {'configuration'})} {label} "
                            f"b = {signed(summary['b'])} (log-log {signed(summary['loglog'])})")
    names = values["configuration"]
    lead = layout.lead.format(configurations=", ".join(configuration_label(params, name) for name in names))
    trial = f"trial {values['trial'][0]}, " if held == "trial" else ""
    suptitle(fig, [f"{figure_label(job.figure)}: {lead}", trial + steps_text(params, names, layout.snapshot),
                   *standin_lines(params, names)])
    caption = [job.caption, f"{lead}.", _runs_text(params, rows, names, layout.snapshot),
               MOTIF_TEXT.format(fit=FIT_TEXT if layout.fit else ""), ("Fitted exponents: " + "; ".join(fits) + ".")
               if fits else "", " ".join(f"{line}." for line in standin_lines(params, names))]
    save_figure(fig, job.png_path, " ".join(part for part in caption if part), job.data_source)


def _runs_text(params: dict, rows: pd.DataFrame, names, snapshot: str) -> str:
    labels = ", ".join(configuration_label(params, name) for name in names)
    samples = f"{samples_text(rows)}, " if len(rows) else ""
    return (f"Configuration{'s' if len(names) > 1 else ''} {labels}; {trials_text(rows) if len(rows) else 'no runs'}; "
            f"{samples}sizes m = {', '.join(f'{m:,}' for m in sorted(rows['m'].unique()))}; "
            f"{steps_text(params, names, snapshot)}.")


def _motif_plot(figure_id: str):
    def plot(job: FigureJob) -> None:
        draw_motif_figure(job, MOTIF_FIGURES[figure_id])
    plot.__name__ = plot.__qualname__ = f"plot_{figure_id}"
    lead = MOTIF_FIGURES[figure_id].lead.format(configurations="(read from the runs)")
    plot.__doc__ = f"{figure_label(figure_id)}: {lead} (``draw_motif_figure``)."
    return plot


plot_fig_2_1 = _motif_plot("fig_2_1")
plot_fig_2_2 = _motif_plot("fig_2_2")
plot_fig_2_3 = _motif_plot("fig_2_3")
plot_fig_A_2 = _motif_plot("fig_A_2")
plot_fig_A_3 = _motif_plot("fig_A_3")
plot_fig_A_4 = _motif_plot("fig_A_4")
plot_fig_A_5 = _motif_plot("fig_A_5")
plot_fig_A_6 = _motif_plot("fig_A_6")
plot_fig_A_7 = _motif_plot("fig_A_7")
plot_fig_A_8 = _motif_plot("fig_A_8")
plot_fig_A_9 = _motif_plot("fig_A_9")
plot_fig_A_10 = _motif_plot("fig_A_10")
plot_fig_A_11 = _motif_plot("fig_A_11")
plot_fig_A_12 = _motif_plot("fig_A_12")
plot_fig_A_13 = _motif_plot("fig_A_13")


# --- Fig A.1: the sweep of A(S) alone over a wider range of m ----------------------------------------

def plot_fig_A_1(job: FigureJob) -> None:
    """Fig A.1: the cross-entropy gap of the swept configuration at the early (left) and late
    (right) snapshots, linear axes (top) and log-log (bottom), motif and fit in each."""
    apply_style()
    params, sweep = job.params, job.params["sweep"]
    rows = sweep_rows({"sweep": job.inputs["sweep"], "pairs": job.inputs["pairs"]}, sweep["samples"], sweep["sizes"])
    name = sweep["configuration"]
    snapshots = [s for s in ("early", "late") if s in params["configurations"][name]["snapshots"]]
    label = quantity_label("gap_loss", params["configurations"][name]["loss"])
    fig, axes = plt.subplots(2, len(snapshots), figsize=(4.2 * len(snapshots), 7.4), squeeze=False,
                             layout="constrained")
    fits = []
    for j, snapshot in enumerate(snapshots):
        shown = at_snapshot(rows, snapshot)
        for i, log in enumerate((False, True)):
            summary = motif_panel(axes[i, j], shown, "gap_loss", log=log)
            axes[i, j].set(ylabel=label, xlabel=M_LABEL)
            axes[i, j].set_title(f"{steps_text(params, [name], snapshot)}\n{'log-log' if log else 'linear'} axes",
                                 fontsize=8)
        if summary:
            fits.append(f"{snapshot} b = {signed(summary['b'])} (log-log {signed(summary['loglog'])})")
    lead = (f"Configuration {configuration_label(params, name)}, trial {sweep['trial']}: the {label} of A(S) against "
            f"m over a wider range of sizes, early (left) and late (right) snapshots, linear (top) and log-log "
            f"(bottom) axes")
    suptitle(fig, [f"Fig A.1: {lead}", *standin_lines(params, [name])])
    caption = [job.caption, f"{lead}.", f"{samples_text(rows, 'sample')} (A(S) only; sizes the pair runs hold "
               f"take their first {sweep['samples']} pairs' A(S)); sizes m = "
               f"{', '.join(f'{m:,}' for m in sorted(rows['m'].unique()))}; "
               + "; ".join(f"{s}: {steps_text(params, [name], s)}" for s in snapshots) + ".",
               MOTIF_TEXT.format(fit=FIT_TEXT).replace("; both axes log", "; linear and log-log axes"),
               "Fitted exponents: " + "; ".join(fits) + ".", " ".join(f"{line}." for line in standin_lines(params, [name]))]
    save_figure(fig, job.png_path, " ".join(part for part in caption if part), job.data_source)


# --- Figs 2.4, A.14, A.15: linear mode connectivity -------------------------------------------------

SPLITS = {"train": "train accuracy (on S)", "test": "test accuracy"}


@dataclass(frozen=True)
class InterpolationFigure:
    lead: str
    columns: str  # configuration or trial; the other is held at its first value
    ends_only: bool  # only the smallest and largest kept m (Fig 2.4's (a) and (b)), else every kept m


INTERPOLATION_FIGURES = {
    "fig_2_4": InterpolationFigure("Linear mode connectivity: train and test accuracy along α·W_S + (1 − α)·W_S′ for "
                                   "each network configuration (columns), (a) the smallest and (b) the largest "
                                   "kept m", "configuration", True),
    "fig_A_14": InterpolationFigure("Linear mode connectivity in the further trials (columns) of one configuration",
                                    "trial", False),
    "fig_A_15": InterpolationFigure("Linear mode connectivity in the further trials (columns) of one configuration",
                                    "trial", False),
}


def interpolation_panel(ax, curves: pd.DataFrame, split: str) -> float:
    """One line per pair (one colour each) of ``split`` accuracy against α, with α = 0 (W_S′) and
    α = 1 (W_S) marked. Returns the largest dip below the endpoints on α ∈ [0, 1] (accuracy points)."""
    for k, (_, curve) in enumerate(curves.sort_values("alpha").groupby("pair")):
        ax.plot(curve["alpha"], curve[f"{split}_accuracy"], color=PAIR_COLOURS(k % 10), linewidth=1.0)
    for alpha, member in ((0.0, "W_S′"), (1.0, "W_S")):
        ax.axvline(alpha, color="0.3", linestyle="--", linewidth=0.8)
        ax.text(alpha, 0.98, f" {member}", transform=ax.get_xaxis_transform(), fontsize=6.5, va="top", color="0.3")
    ax.set_ylabel(SPLITS[split])
    return float(interpolation_dips(curves, split).max()) if len(curves) else float("nan")


def draw_interpolation_figure(job: FigureJob, layout: InterpolationFigure) -> None:
    """Blocks of rows, one per m shown (train accuracy above test accuracy), columns per
    ``layout.columns``; the held dimension at its first value."""
    apply_style()
    params = job.params
    curves = read_rows(job.inputs["curves"])
    names = present_configurations(curves, params)
    trials = sorted(int(t) for t in curves["trial"].unique())
    curves = curves[curves["trial"] == trials[0]] if layout.columns == "configuration" else (
        curves[curves["configuration"] == names[0]])
    columns = names if layout.columns == "configuration" else trials
    names = names if layout.columns == "configuration" else names[:1]
    sizes = sorted(int(m) for m in curves["m"].unique())
    sizes = [sizes[0], sizes[-1]] if layout.ends_only and len(sizes) > 1 else sizes
    fig, axes = plt.subplots(2 * len(sizes), len(columns), figsize=(3.6 * len(columns) + 0.4, 2.6 * 2 * len(sizes) + 1.2),
                             squeeze=False, sharex=True, layout="constrained")
    dips = []
    for b, m in enumerate(sizes):
        block = f"({'abcdefgh'[b]}) " if layout.ends_only else ""
        for j, value in enumerate(columns):
            shown = curves[(curves["m"] == m) & (curves[layout.columns] == value)]
            title = configuration_label(params, value) if layout.columns == "configuration" else f"trial {value}"
            for k, split in enumerate(SPLITS):
                ax = axes[2 * b + k, j]
                dip = interpolation_panel(ax, shown, split)
                ax.set_title(f"{block}m = {m:,}, {title}", fontsize=9)
                ax.set_xlabel("α" if ax in axes[-1] else "")
                dips.append(f"{title} m = {m:,} {split} {100 * dip:.1f}")
    held = f"trial {trials[0]}" if layout.columns == "configuration" else configuration_label(params, names[0])
    suptitle(fig, [f"{figure_label(job.figure)}: {layout.lead} ({held})",
                   f"states at {steps_text(params, names, 'main')}", *standin_lines(params, names)])
    pairs = count_text(curves.groupby(["configuration", "trial", "m"])["pair"].nunique())
    alphas = curves["alpha"]
    caption = [job.caption, f"{layout.lead} ({held}).", f"W(α) = α·W_S + (1 − α)·W_S′ at {alphas.nunique()} values of α "
               f"from {signed(alphas.min(), 1)} to {signed(alphas.max(), 1)}; {pairs} pairs per panel, one colour each; "
               f"dashed lines at α = 0 (W_S′) and α = 1 (W_S); states at {steps_text(params, names, 'main')}.",
               "Largest accuracy dip on α ∈ [0, 1] below the lower endpoint, in percentage points: "
               + "; ".join(dips) + ".",
               " ".join(f"{line}." for line in standin_lines(params, names))]
    save_figure(fig, job.png_path, " ".join(part for part in caption if part), job.data_source)


def _interpolation_plot(figure_id: str):
    def plot(job: FigureJob) -> None:
        draw_interpolation_figure(job, INTERPOLATION_FIGURES[figure_id])
    plot.__name__ = plot.__qualname__ = f"plot_{figure_id}"
    plot.__doc__ = f"{figure_label(figure_id)}: {INTERPOLATION_FIGURES[figure_id].lead} (``draw_interpolation_figure``)."
    return plot


plot_fig_2_4 = _interpolation_plot("fig_2_4")
plot_fig_A_14 = _interpolation_plot("fig_A_14")
plot_fig_A_15 = _interpolation_plot("fig_A_15")


# --- Table 2.1: the configurations, from the config ---------------------------------------------------

TABLE_LEAD = "The network configurations as trained: data, model, learning-rate schedule, batch size, momentum"


def model_text(model: dict) -> str:
    """A zoo model spec in words: MLP 64-64-10, or name(argument=value, ...)."""
    if model["name"] == "mlp":
        return "MLP " + "-".join(str(width) for width in (model["in_features"], *model["hidden"], model["out_features"]))
    return f"{model['name']}({', '.join(f'{key}={value}' for key, value in model.items() if key != 'name')})"


def learning_rate_text(settings: dict) -> str:
    """"0.1, ×0.1 after steps 512 and 768" or "0.05 constant"."""
    lr, drops = settings["optimiser"]["lr"], settings.get("lr_drops", [])
    if not drops:
        return f"{lr:g} constant"
    steps = ", ".join(f"{step:,}" for step in drops[:-1]) + (" and " if len(drops) > 1 else "") + f"{drops[-1]:,}"
    return f"{lr:g}, ×{settings.get('lr_drop_factor', 0.1):g} after step{'s' if len(drops) > 1 else ''} {steps}"


def configuration_row(settings: dict, provenance: dict[str, dict]) -> dict:
    """One row of Table 2.1; ``provenance`` holds the prepared datasets' records by name."""
    dataset, optimiser = settings["dataset"], settings["optimiser"]
    record = provenance.get(dataset)
    snapshots = settings["snapshots"]
    return {"ID": settings["label"], "Data": f"{dataset} ({data_label(record)})" if record else dataset,
            "Model": settings.get("standin") or model_text(settings["model"]),
            "Learning rate": learning_rate_text(settings), "Batch size": settings["batch_size"],
            "Momentum": optimiser.get("momentum", 0.0), "Weight decay": optimiser.get("weight_decay", 0.0),
            "Steps": settings["steps"],
            "Snapshots": ", ".join(f"{snapshots[s]:,} (t = {THESIS_ITERATIONS[s]:,})" for s in THESIS_ITERATIONS
                                   if s in snapshots)}


def markdown_table(frame: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(str(value) for value in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def table_2_1(job: FigureJob) -> None:
    """Table 2.1 from the config: one row per configuration (CSV at ``job.png_path``, its Markdown
    rendering and the caption sidecar beside it)."""
    provenance = {Path(path).stem: json.loads(Path(path).read_text()) for path in job.inputs.get("provenance", [])}
    frame = pd.DataFrame([configuration_row(settings, provenance) for settings in job.params.values()])
    path = Path(job.png_path)
    standins = [f"{s['label']} — stand-in: {s['standin']}." for s in job.params.values() if s.get("standin")]
    caption = " ".join(part for part in [job.caption, f"{TABLE_LEAD}, emitted from the config (no data).",
                                         "Snapshots: the steps evaluated and the thesis iterations they play.",
                                         *standins] if part)
    save_table(frame, path, caption, job.data_source)
    path.with_suffix(".md").write_text(markdown_table(frame))
