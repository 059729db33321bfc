"""Chapter 5 and Appendix C, landscape-aware growing of language models: the drawing of Fig 5.1,
the plots of Figs 5.2-5.4 and Tables 5.1, 5.2, C.2 over the growth and stacking runs (Table C.1,
one-shot downstream scores, has no proxy). Several seeds: the figures draw the first and name the
others' headline numbers in the caption; the tables list every seed's rows."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Polygon, Rectangle

from ...analysis.karp_thesis.ch5 import (
    THESIS_FIG_5_2,
    THESIS_FIG_5_3,
    THESIS_FIG_5_4,
    THESIS_SETTINGS,
    THESIS_TABLE_5_1,
    THESIS_TABLE_5_2,
    THESIS_TABLE_C_2,
    beside_thesis,
    correlation_with_final,
    correlations,
    final_losses,
    final_step,
    growth_summary,
    loss_at,
    probe_steps_total,
    read_run,
    recall_at_k,
    recorded_step,
    relative_regret,
    spearman_heatmap,
    stacking_table,
    strategy_table,
    window_losses,
)
from ...growth.operators import GrowthOperator
from ...manifests.jobs import FigureJob
from ..style import apply_style, save_figure, save_table

OTHER_GREY, CHOSEN_BLUE, NEW_ORANGE = "0.88", "#aecbe8", "#f4b183"
BOX_WIDTH, BOX_HEIGHT, SLOT = 1.0, 0.5, 0.62  # a layer's box and the vertical pitch between layers
BEFORE_X, AFTER_X = 0.0, 2.3  # left edges of the two stacks in each panel
GROWN_LAYERS = 9  # the examples' 6 -> 9 layers set the height of every panel
HEADER_Y = (GROWN_LAYERS - 1) * SLOT + BOX_HEIGHT + 0.25


def grown_layer_order(num_layers: int, grown: int, start: int, block_size: int) -> list[tuple[int, bool]]:
    """The grown network's layers from the input up, as (source layer, is new), in the thesis's
    1-indexed numbering (Sec 5.2.1): the ``grown`` layers from ``start`` are cut into blocks of
    ``block_size`` and each block is followed by its new layers (copies, or random ones in
    the same places). Read from the growth operator the experiments grow with (0-indexed starts,
    hence start - 1), so the drawing shows what the code does."""
    operator = GrowthOperator(start - 1, block_size, "duplicate", grown)
    return [(layer + 1, is_new) for layer, is_new in operator.layer_order(num_layers)]


def _box(ax, x: float, y: float, label: str, colour: str, height: float = BOX_HEIGHT,
         bold: bool = False, fontsize: float = 10) -> None:
    ax.add_patch(Rectangle((x, y), BOX_WIDTH, height, facecolor=colour, edgecolor="0.3", linewidth=0.9))
    ax.text(x + BOX_WIDTH / 2, y + height / 2, label, ha="center", va="center", fontsize=fontsize,
            fontweight="bold" if bold else "normal")


def _stack_headers(ax) -> None:
    for x, text in ((BEFORE_X, "before"), (AFTER_X, "after")):
        ax.text(x + BOX_WIDTH / 2, HEADER_Y, text, ha="center", va="bottom", fontsize=9, color="0.3")


def _draw_example(ax, num_layers: int, grown: int, start: int, block_size: int, title: str) -> None:
    """One example of Sec 5.2.1: the L layers (left), the L + k grown ones (right), and a line
    from every original layer to each place it takes in the grown network."""
    order = grown_layer_order(num_layers, grown, start, block_size)
    offset = (len(order) - num_layers) * SLOT / 2  # centre the shorter stack against the taller
    before_y = {layer: offset + (layer - 1) * SLOT for layer in range(1, num_layers + 1)}
    chosen = range(start, start + grown)
    for layer, y in before_y.items():
        _box(ax, BEFORE_X, y, str(layer), CHOSEN_BLUE if layer in chosen else OTHER_GREY)
    for position, (layer, is_new) in enumerate(order):
        y = position * SLOT
        colour = NEW_ORANGE if is_new else CHOSEN_BLUE if layer in chosen else OTHER_GREY
        _box(ax, AFTER_X, y, str(layer), colour, bold=is_new)
        ax.plot([BEFORE_X + BOX_WIDTH, AFTER_X], [before_y[layer] + BOX_HEIGHT / 2, y + BOX_HEIGHT / 2],
                color="#c55a11" if is_new else "0.55", linestyle="--" if is_new else "-", linewidth=0.9)
    _stack_headers(ax)
    ax.set_title(title, fontsize=10)


def _draw_generic(ax) -> None:
    """Any L, k: the k chosen layers (i to i+k-1) become 2k, the k new ones copied or random and
    interleaved with the old ones in blocks of b (not to scale)."""
    outer_height, gap = SLOT * 1.2 - 0.12, 0.12  # the boxes standing for the layers below and above
    chosen_height = 3 * SLOT - (SLOT - BOX_HEIGHT)
    grown_height = 2 * chosen_height + SLOT
    after_bottom = outer_height + gap
    before_bottom = after_bottom + (grown_height - chosen_height) / 2
    stacks = ((BEFORE_X, before_bottom, chosen_height), (AFTER_X, after_bottom, grown_height))
    for x, bottom, height in stacks:
        _box(ax, x, bottom - gap - outer_height, "layers\n" + r"$1 \dots i{-}1$", OTHER_GREY,
             height=outer_height, fontsize=8)
        _box(ax, x, bottom + height + gap, "layers\n" + r"$i{+}k \dots L$", OTHER_GREY,
             height=outer_height, fontsize=8)
    _box(ax, BEFORE_X, before_bottom, "$k$ layers\n" + r"$i \dots i{+}k{-}1$", CHOSEN_BLUE,
         height=chosen_height, fontsize=9)
    band = grown_height / 6  # old and new blocks alternate; how many depends on b
    for j in range(6):
        ax.add_patch(Rectangle((AFTER_X, after_bottom + j * band), BOX_WIDTH, band, linewidth=0,
                               facecolor=NEW_ORANGE if j % 2 else CHOSEN_BLUE))
    ax.add_patch(Rectangle((AFTER_X, after_bottom), BOX_WIDTH, grown_height, fill=False, edgecolor="0.3",
                           linewidth=0.9))
    ax.text(AFTER_X + BOX_WIDTH / 2, after_bottom + grown_height / 2, "$2k$ layers:\n$k$ old,\n$k$ new",
            ha="center", va="center", fontsize=9,
            bbox={"boxstyle": "round,pad=0.25", "facecolor": "white", "edgecolor": "none", "alpha": 0.85})
    fan = [(BEFORE_X + BOX_WIDTH, before_bottom), (BEFORE_X + BOX_WIDTH, before_bottom + chosen_height),
           (AFTER_X, after_bottom + grown_height), (AFTER_X, after_bottom)]
    ax.add_patch(Polygon(fan, closed=True, facecolor=NEW_ORANGE, alpha=0.25, edgecolor="none"))
    _stack_headers(ax)
    ax.set_title("generic: $k$ layers grown into $2k$\n(new ones copied or random)", fontsize=10)


def _frame(ax) -> None:
    ax.set(xlim=(-0.35, AFTER_X + BOX_WIDTH + 0.35), ylim=(-0.75, HEADER_Y + 0.3))
    ax.axis("off")


def _legend(fig) -> None:
    handles = [Rectangle((0, 0), 1, 1, facecolor=colour, edgecolor="0.3", linewidth=0.8)
               for colour in (CHOSEN_BLUE, NEW_ORANGE, OTHER_GREY)]
    labels = ["the $k$ layers chosen to grow (kept)", "new layer (bold: the layer it copies)",
              "other layers (kept)"]
    fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False, fontsize=9,
               bbox_to_anchor=(0.5, 0.0))


def draw_fig_5_1(png_path) -> None:
    """Fig 5.1: growing an L-layer network into L + k layers, generically and in the two
    duplication examples of Sec 5.2.1 (L = 6, k = 3, i = 2 with b = 1 and b = 3)."""
    apply_style()
    fig, axes = plt.subplots(1, 3, figsize=(10.5, 5.0))
    _draw_generic(axes[0])
    _draw_example(axes[1], 6, 3, 2, 1, "$L=6,\\ k=3,\\ i=2,\\ b=1$\nduplication (interleaving)")
    _draw_example(axes[2], 6, 3, 2, 3, "$L=6,\\ k=3,\\ i=2,\\ b=3$\nduplication (single-block copying)")
    for ax in axes:
        _frame(ax)
        ax.text(AFTER_X / 2 + BOX_WIDTH / 2, -0.45, "input at the bottom", ha="center", fontsize=8,
                color="0.45")
    _legend(fig)
    fig.subplots_adjust(left=0.02, right=0.98, top=0.88, bottom=0.12, wspace=0.12)
    caption = ("Fig 5.1 (a drawing): growing an L-layer network into L + k layers by growing k consecutive "
               "layers, starting at layer i, into 2k. Left: the generic operator. Middle: L = 6, k = 3, "
               "i = 2, block size b = 1 with parameter duplication (interleaving: 1, 2, 2, 3, 3, 4, 4, 5, "
               "6). "
               "Right: the same with b = 3 (single-block copying: 1, 2, 3, 4, 2, 3, 4, 5, 6). New layers in "
               "orange and bold, layers numbered from the input as in Sec 5.2.1. Drawn from the thesis's "
               "caption and the examples of Sec 5.2.1, not from its artwork; like the thesis it draws the "
               "examples with duplication only (their random-initialisation variants put random layers "
               "in the orange places), and it leaves out the embedding and output layers and the "
               "optimiser state carried over to the grown model.")
    save_figure(fig, png_path, caption, "a drawing (no data)")


# --- Figs 5.2-5.4, Tables 5.1, 5.2, C.2: the growth and stacking runs ---------------------------

INIT_STYLE = {"duplicate": {"color": "#1f77b4", "marker": "o", "label": "parameter duplication"},
              "random": {"color": "#ff7f0e", "marker": "^", "label": "random initialisation"}}
RECALL_KS = (1, 2, 3)
RECALL_OFFSET = 0.03  # Recall@k lines lifted apart so that equal lines stay visible
TRANSITION_LEVEL = 0.7  # the captions' "correlated from": Spearman with final stays at least this


def _caption(*parts: str) -> str:
    return " ".join(part for part in parts if part)


def _runs(job: FigureJob) -> list[dict]:
    return [read_run(path) for path in job.inputs["runs"]]


def _data_source(job: FigureJob, settings: dict) -> str:
    """The data, and the stand-in network named on the image."""
    return f"{job.data_source or settings['data']}, seed {settings['seed']}; network: {_network_text(settings)}"


def _network_text(settings: dict) -> str:
    model = settings["model"]
    layers = (" → ".join(str(int(n)) for n in settings["stage_layers"]) if "stage_layers" in settings
              else f"{settings['layers']} → {settings['layers'] + settings['grown_layers']}")
    return (f"pre-LN transformer of width {model['width']}, {model['heads']} heads, {layers} layers, stand-in for "
            f"{settings['document_setting']}")


def _setting_text(run: dict) -> str:
    settings = run["settings"]
    return (f"Stand-in for the thesis's {settings['document_setting']}: a {settings['objective']} language model "
            f"grown from {settings['layers']} to {settings['layers'] + settings['grown_layers']} layers by each of "
            f"{len(run['operator'])} operators (start indices 0-indexed, trap C5-2), each grown model trained "
            f"{settings['train_steps']:,} steps on the same batches; validation loss {_every(settings)} up to step "
            f"{settings['window_end']:,} after growing, at step "
            f"{settings['lag']:,} and at the end; data: {settings['data']}; seed {settings['seed']}.")


def _every(settings: dict) -> str:
    every = int(settings["window_every"])
    return "at every step" if every == 1 else f"every {every} steps"


def _thesis_setting_text(settings: dict) -> str:
    thesis = THESIS_SETTINGS.get(settings["name"])
    if not thesis:
        return ""
    lag = f", lag {thesis['lag']:,}" if "lag" in thesis else ""
    return (f"The thesis grows at step {thesis['grown_at']:,} and trains {thesis['train_steps']:,} more steps, "
            f"window {thesis['window_end']:,} steps {_every(thesis)}{lag}, LAG@{thesis['lag_k']}, "
            f"smoothing {thesis['smoothing']}.")


def _proxy_note(settings: dict) -> str:
    return ("A toy-scale proxy, not the thesis's model or data: compare the pattern, not the values."
            if settings.get("proxy") else "")


def _smoothing_text(settings: dict) -> str:
    window = int(settings["smoothing"])
    if window == 1:
        return "No smoothing (window 1)."
    return (f"Each window curve is first smoothed by a centred moving average of {window} recorded points, "
            f"truncated only at step 0, which has no earlier points (trap C5-3); the runs record the window's grid "
            f"{window // 2} points past its end, so its last points average a full window.")


def _other_seeds(summaries: list[dict], text) -> str:
    if len(summaries) < 2:
        return "One seed (the thesis also has one run per operator, trap C5-7)."
    return "Other seeds: " + "; ".join(f"seed {s['seed']}: {text(s)}" for s in summaries[1:]) + "."


def _step(value) -> str:
    return "never" if value is None else f"step {value:,}"


def _scatter_by_init(ax, run: dict, x: np.ndarray, y: np.ndarray) -> None:
    for init, style in INIT_STYLE.items():
        chosen = run["init"] == init
        if chosen.any():
            ax.scatter(x[chosen], y[chosen], s=28, alpha=0.85, edgecolors="white", linewidths=0.5, **style)


def _correlation_title(prefix: str, found: dict) -> str:
    return f"{prefix}\nPearson {found['pearson']:.3f}, Spearman {found['spearman']:.3f}"


def plot_fig_5_2(job: FigureJob) -> None:
    """Fig 5.2: final validation loss against the loss right after growing (left) and after the lag
    (right), one point per operator."""
    apply_style()
    runs = _runs(job)
    run, settings = runs[0], runs[0]["settings"]
    final, lag_step = final_losses(run), recorded_step(run, settings["lag"])
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 4.3), layout="constrained")
    panels = ((axes[0], 0, "validation loss at growth (step 0)", "at growth (step 0)"),
              (axes[1], lag_step, f"validation loss at step {lag_step:,} after growth", f"at step {lag_step:,}"))
    for ax, step, xlabel, prefix in panels:
        _scatter_by_init(ax, run, loss_at(run, step), final)
        ax.set(xlabel=xlabel, ylabel=f"final validation loss (step {final_step(run):,})",
               title=_correlation_title(prefix, correlations(loss_at(run, step), final)))
    axes[0].axvline(float(run["pre_growth_loss"]), color="0.4", linestyle="--", linewidth=0.9,
                    label=f"{settings['layers']}-layer model before growing")
    axes[0].legend(fontsize=8, loc="best")
    summaries = [growth_summary(r) for r in runs]
    growth, lag = THESIS_FIG_5_2["growth"], THESIS_FIG_5_2["lag"]
    caption = _caption(
        job.caption, _setting_text(run), _thesis_setting_text(settings),
        "Raw (unsmoothed) validation losses; colour and marker: the new layers' initialisation.",
        f"The dashed line is the {settings['layers']}-layer model's loss when grown "
        f"({float(run['pre_growth_loss']):.4f}; thesis 1.823).",
        f"Thesis (BERT 12 → 16, steps 500k/505k against 600k): Pearson {growth['pearson']}, Spearman "
        f"{growth['spearman']} at growth; {lag['pearson']}, {lag['spearman']} after 5,000 steps.",
        _other_seeds(summaries, lambda s: f"Spearman {s['at_growth']['spearman']:.3f} at growth, "
                                          f"{s['at_lag']['spearman']:.3f} at step {s['lag_step']:,}"),
        _proxy_note(settings))
    save_figure(fig, job.png_path, caption, _data_source(job, settings))


def _heatmap(fig, ax, steps: np.ndarray, heatmap: np.ndarray) -> None:
    pitch = float(steps[1] - steps[0]) if len(steps) > 1 else 1.0
    extent = (steps[0] - pitch / 2, steps[-1] + pitch / 2, steps[0] - pitch / 2, steps[-1] + pitch / 2)
    image = ax.imshow(heatmap, origin="lower", extent=extent, cmap="coolwarm", vmin=-1, vmax=1,
                      interpolation="nearest", aspect="equal")
    ax.grid(False)
    ax.set(xlabel="step after growth", ylabel="step after growth", title="Spearman correlation between steps")
    fig.colorbar(image, ax=ax, shrink=0.85, label="Spearman ρ")


def _with_final(ax, steps: np.ndarray, with_final: np.ndarray) -> None:
    ax.plot(steps, with_final, color="#1f77b4")
    ax.axhline(0.0, color="0.3", linewidth=0.6)
    ax.set(xlabel="step after growth", ylabel="Spearman ρ with final loss", ylim=(-1.05, 1.05),
           title="Spearman correlation with final values")


def _recall(ax, steps: np.ndarray, recall: np.ndarray) -> None:
    for row, k in enumerate(RECALL_KS):
        offset = (row - (len(RECALL_KS) - 1) / 2) * RECALL_OFFSET
        ax.step(steps, recall[row] + offset, where="mid", label=f"Recall@{k}")
    ax.set(xlabel="step after growth", ylabel="Recall@k", ylim=(-0.15, 1.15), yticks=[0, 1], title="Recall@k")
    ax.legend(fontsize=8, loc="center right")


def _relative_regret(ax, steps: np.ndarray, values: np.ndarray) -> None:
    ax.step(steps, values, where="mid", color="#d62728")
    ax.set(xlabel="step after growth", ylabel="relative regret", ylim=(-0.05, 1.05), title="Relative regret")


def _window_text(summary: dict) -> str:
    return (f"Spearman with final {summary['start_correlation']:.3f} at step 0 → {summary['end_correlation']:.3f} "
            f"at the window's end, ≥ {summary['level']} from {_step(summary['correlated_from'])}")


def plot_fig_5_3(job: FigureJob) -> None:
    """Fig 5.3: the window after growing: Spearman heatmap, Spearman with final, Recall@1-3, relative
    regret, all over the smoothed window losses."""
    apply_style()
    runs = _runs(job)
    run, settings = runs[0], runs[0]["settings"]
    steps, window = window_losses(run)
    final = final_losses(run)
    fig, axes = plt.subplots(2, 2, figsize=(11, 9), layout="constrained")
    _heatmap(fig, axes[0, 0], steps, spearman_heatmap(window))
    _with_final(axes[0, 1], steps, correlation_with_final(window, final))
    _recall(axes[1, 0], steps, recall_at_k(window, final, RECALL_KS))
    _relative_regret(axes[1, 1], steps, relative_regret(window, final))
    summaries = [growth_summary(r, TRANSITION_LEVEL) for r in runs]
    first = summaries[0]
    thesis = THESIS_FIG_5_3
    caption = _caption(
        job.caption, _setting_text(run), _thesis_setting_text(settings), _smoothing_text(settings),
        f"Recall@k: whether the operator with the lowest final loss is among the k lowest at the step "
        f"(ties go to the first operator in the run's order; the lines are offset by ±{RECALL_OFFSET} to stay "
        "apart). Relative regret: eq. 5.2 of the step's lowest-loss operator.",
        f"Measured: {_window_text(first)}; Recall@1 stays 1 from {_step(first['recall_1_from'])}, relative regret "
        f"stays 0 from {_step(first['no_regret_from'])}.",
        f"Thesis (BERT, steps 500,000-500,200, smoothing 11): phase transition around step "
        f"{thesis['transition_step']} after growing; Spearman with final rises from below "
        f"{thesis['start_correlation_below']} to about {thesis['end_correlation']}; Recall@1-3 reach 1 and relative "
        f"regret drops from about {thesis['start_relative_regret']} to 0 around step {thesis['transition_step']}.",
        _other_seeds(summaries, lambda s: f"{_window_text(s)}, Recall@1 = 1 from {_step(s['recall_1_from'])}, "
                                          f"relative regret 0 from {_step(s['no_regret_from'])}"),
        _proxy_note(settings))
    save_figure(fig, job.png_path, caption, _data_source(job, settings))


def plot_fig_5_4(job: FigureJob) -> None:
    """Fig 5.4: the UL2-like setting's window: Spearman heatmap and Spearman with final."""
    apply_style()
    runs = _runs(job)
    run, settings = runs[0], runs[0]["settings"]
    steps, window = window_losses(run)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), layout="constrained")
    _heatmap(fig, axes[0], steps, spearman_heatmap(window))
    _with_final(axes[1], steps, correlation_with_final(window, final_losses(run)))
    summaries = [growth_summary(r, TRANSITION_LEVEL) for r in runs]
    caption = _caption(
        job.caption, _setting_text(run), _thesis_setting_text(settings), _smoothing_text(settings),
        f"Measured: {_window_text(summaries[0])}.",
        f"Thesis (UL2, steps 300,000-302,000 every 100 steps, no smoothing): phase transition around step "
        f"{THESIS_FIG_5_4['transition_step']:,} after growing, hence LAG@2000.",
        _other_seeds(summaries, _window_text), _proxy_note(settings))
    save_figure(fig, job.png_path, caption, _data_source(job, settings))


def _table_path(job: FigureJob) -> Path:
    return Path(job.png_path).with_suffix(".csv")


def _lag_table(job: FigureJob, thesis_rows, thesis_name: str) -> None:
    """Tables 5.1, 5.2: every seed's strategies beside the thesis's rows."""
    runs = _runs(job)
    frames = [beside_thesis(strategy_table(run), thesis_rows).assign(seed=run["settings"]["seed"]) for run in runs]
    frame = pd.concat(frames)
    frame = frame[["seed"] + [column for column in frame.columns if column != "seed"]]
    settings = runs[0]["settings"]
    layers, added = settings["layers"], settings["grown_layers"]
    caption = _caption(
        job.caption, _setting_text(runs[0]), _thesis_setting_text(settings),
        f"LAG@{settings['lag_k']:,} picks the operator with the lowest raw (unsmoothed) validation loss at step "
        f"{recorded_step(runs[0], settings['lag_k']):,} (the first recorded step ≥ {settings['lag_k']:,}); "
        "LAG@0 the lowest at step 0; Oracle the lowest final loss; stacking the last block on top is start "
        f"{layers - added} (0-indexed), block size {added}, duplication, and the random block the same with random "
        "layers. Ties go to the first operator in the run's order. Each pick's final loss is read from its "
        "complete run, as in the thesis; regret and relative regret are eqs 5.1, 5.2 against the seed's own "
        f"oracle and spread of final losses. The thesis columns are its {thesis_name}, row by row.",
        f"{len(runs)} seed(s), one block of rows each." if len(runs) > 1 else "",
        _proxy_note(settings))
    save_table(frame.round(4), _table_path(job), caption, _data_source(job, settings))


def table_5_1(job: FigureJob) -> None:
    """Table 5.1 (the BERT-like setting): LAG@k against the oracle, LAG@0 and stacking on top."""
    _lag_table(job, THESIS_TABLE_5_1, "Table 5.1 (BERT-BASE 12 → 16, LAG@200, final loss at step 600,000)")


def table_5_2(job: FigureJob) -> None:
    """Table 5.2 (the UL2-like setting): LAG@k against the oracle, LAG@0 and stacking on top."""
    _lag_table(job, THESIS_TABLE_5_2, "Table 5.2 (UL2 12 → 16, LAG@2000, final loss at step 400,000)")


def _listed(value) -> str:
    return ", ".join(f"{int(n):,}" for n in value) if isinstance(value, (list, tuple)) else f"{int(value):,}"


def table_C_2(job: FigureJob) -> None:
    """Table C.2: final validation loss of adaptive against last stacking, every seed, beside the
    thesis's; the operators each strategy grew with per stage."""
    runs = _runs(job)
    frames = []
    for run in runs:
        frame = stacking_table(run)
        frame.insert(0, "seed", run["settings"]["seed"])
        frame.insert(3, "thesis final validation loss", frame["strategy"].map(THESIS_TABLE_C_2))
        frames.append(frame)
    settings = runs[0]["settings"]
    caption = _caption(
        job.caption, f"Stand-in for the thesis's BERT-LARGE stacking (4 → 24 layers in 6 stages): stages of "
        f"{_listed(runs[0]['stage_layers'].tolist())} layers, {_listed(settings['stage_steps'])} steps per stage; "
        "last stacking duplicates the final block on top at every stage; adaptive stacking probes each "
        f"candidate operator (duplication only) for {settings['probe_steps']} steps and keeps the lowest "
        f"validation loss (LAG@{settings['probe_steps']}), {probe_steps_total(runs[0]):,} probe steps in all "
        f"(candidates per stage: {', '.join(str(int(n)) for n in runs[0]['candidates'])}). Whether the thesis's "
        "probe steps count toward the stage budgets is not stated (trap C5-6); here the chosen operator's do "
        "(it carries on from its probe), the others' are extra. Final validation loss = the last "
        f"stage's end; data: {settings['data']}. Thesis (Table C.2): adaptive 1.5301, last 1.5432.",
        f"{len(runs)} seeds, one pair of rows each." if len(runs) > 1 else "", _proxy_note(settings))
    save_table(pd.concat(frames).round(4), _table_path(job), caption, _data_source(job, settings))
