"""Figures of the iterative-linearisation paper (Goldwaser & Ge), numbered as in the longer version;
each caption names the shorter version's number. Every figure is drawn from run records only."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ..analysis.iterative_linearisation import (
    adam_roles,
    best_accuracies,
    k_label,
    k_value,
    kept_runs,
    read_records,
    run_outcomes,
    scaling_slope,
    scheduled,
)
from ..analysis.records import read_runs
from ..manifests.jobs import FigureJob
from .style import apply_style, save_figure

# The shorter version's number of each longer-version figure (Fig 4's panels are its Figs 7, 8).
SHORT_VERSION = {"fig_1": "Fig 1", "fig_2": "Fig 2", "fig_3": "Fig 3", "fig_4": "Figs 7 (left panel) and 8 (right panel)",
                 "fig_5": "Fig 4", "fig_6": None, "fig_7": None, "fig_8": "Fig 5", "fig_9": "Fig 6"}
K1_COLOUR, NETWORK_COLOUR, LINEARISED_COLOUR, ADAM_COLOUR = "0.15", "#c0392b", "#2c6fbb", "#27ae60"






def version_note(figure: str) -> str:
    short = SHORT_VERSION[figure]
    return f" Shorter version: {short}." if short else " Longer version only."


def setup_note(runs: pd.DataFrame, deviations: str | None = None) -> str:
    """What ran, read from the records: training-set size, optimiser and learning rate, steps,
    seeds, and the configured departures from the paper."""
    last = runs.groupby(["setting", "seed"]).tail(1)
    parts = [f"n_train = {', '.join(f'{n:,}' for n in sorted(last['n_train'].unique()))}",
             "; ".join(f"{o} lr {lr:g}" for o, lr in sorted(set(zip(last["optimiser"], last["lr"])))),
             f"up to {int(last['step'].max()):,} steps", f"{runs['seed'].nunique()} seed(s)"]
    note = " Setup: " + ", ".join(parts) + "."
    return note + (f" Departures from the paper: {deviations}" if deviations else "")




def _by_k(runs: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    return sorted(runs.groupby("K"), key=lambda item: k_value(item[0]))


def _k_palette(ks) -> dict:
    finite = sorted((k for k in ks if str(k) not in ("1", "inf")), key=k_value)
    colours = dict(zip(finite, sns.color_palette("viridis_r", len(finite) + 1)[1:]))
    return {**colours, "1": K1_COLOUR, "inf": "0.6"}


# Figs 2, 3, 4, 8: what the legend's marks say.
ENDINGS = (" A run that diverged is stopped and marked so in the legend; so is a run the step cap stopped while "
           "its test accuracy was still rising.")


def how_it_ended(runs: pd.DataFrame) -> str:
    """A legend suffix for a curve whose runs did not end where the paper's do: diverged, or
    stopped by the step cap while the test accuracy was still rising ("" for settled runs)."""
    if runs["diverged"].any():
        return " (diverged, stopped)"
    outcomes = run_outcomes(runs, fitted=np.inf)
    return "" if outcomes["settled"].all() else " (step cap, still rising)"


def _relinearisation_epochs(runs: pd.DataFrame) -> np.ndarray:
    moved = runs[runs["relinearisations"].diff().fillna(0) > 0]
    return moved["epoch"].to_numpy()


# --- Fig 1 ------------------------------------------------------------------------------------

def plot_schematic(png_path) -> None:
    """Fig 1: the spectrum of K when every run is trained to convergence (a drawing)."""
    apply_style()
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    k = np.logspace(0, 6, 400)
    performance = 0.82 - 0.10 / (1 + np.exp(-2.2 * (np.log10(k) - 3.6)))
    ax.plot(k, performance, color=NETWORK_COLOUR, linewidth=2.5)
    ax.scatter([1e6 * 3], [performance[-1] - 0.12], color="0.4", zorder=3)
    ax.set(xscale="log", xlim=(0.7, 1e7), ylim=(0.55, 0.9), xlabel="re-linearisation period K (log scale)",
           ylabel="final test performance", yticks=[])
    ax.set_xticks([1, 1e2, 1e4, 1e6, 3e6], ["1", "10²", "10⁴", "10⁶", "∞"])
    ax.annotate("K = 1: (stochastic)\ngradient descent", (1, 0.82), (1.3, 0.86), fontsize=8)
    ax.annotate("small K: close enough to (S)GD\nfor comparable performance", (30, 0.815), (12, 0.74), fontsize=8,
                arrowprops={"arrowstyle": "->", "color": "0.4"})
    ax.annotate("very large K: each linearisation\ntrained to convergence (Gauss-Newton-like);\n"
                "all larger K give the same result", (3e5, 0.72), (1.5e3, 0.64), fontsize=8,
                arrowprops={"arrowstyle": "->", "color": "0.4"})
    ax.annotate("K = ∞: the linearisation at\ninitialisation (no feature learning)", (3e6, performance[-1] - 0.12),
                (1.5e4, 0.57), fontsize=8, arrowprops={"arrowstyle": "->", "color": "0.4"})
    caption = ("Fig 1: spectrum of changing K when always training to convergence. For small K iterative "
               "linearisation is close enough to (stochastic) gradient descent to perform comparably; for very "
               "large K each linearisation is trained to convergence, giving the same result for every larger K. "
               "With a fixed training horizon instead, every K beyond the horizon equals training the weight-space "
               "linearisation (shorter version's caption). A schematic: the curve is illustrative, not measured."
               + version_note("fig_1"))
    save_figure(fig, png_path, caption, "illustration (a drawing, no data)")


# --- Fig 2 ------------------------------------------------------------------------------------

def _k_sweep_panel(ax, runs: pd.DataFrame, palette: dict, x: str = "step", linestyle: str = "-",
                   suffix: str = "") -> None:
    for k, at_k in _by_k(scheduled(runs)):
        sns.lineplot(data=at_k, x=x, y="test_accuracy_network", errorbar="se", color=palette[k], ax=ax,
                     linestyle=linestyle, label=k_label(k) + suffix + how_it_ended(runs[runs["K"] == k]))


def plot_k_sweeps(full_batch: pd.DataFrame, mini_batch: pd.DataFrame, png_path, data_source: str,
                  deviations: str | None) -> None:
    """Fig 2: test accuracy of the network against the step for each K, full batch (left) and
    mini-batch (centre); right: both on the full-batch step axis (a mini-batch step counts as
    lr_mb / lr_fb of a full-batch step, the paper's scaling), matched K pairs in one colour."""
    apply_style()
    fig, axes = plt.subplots(1, 3, figsize=(13.5, 3.8), layout="constrained", sharey=True)
    fb_ks = sorted(full_batch["K"].unique(), key=k_value)
    mb_ks = sorted(mini_batch["K"].unique(), key=k_value)
    fb_palette, mb_palette = _k_palette(fb_ks), {}
    for fb_k, mb_k in zip(fb_ks, mb_ks):  # the i-th smallest K of each sweep share a colour
        mb_palette[mb_k] = fb_palette[fb_k]
    _k_sweep_panel(axes[0], full_batch, fb_palette)
    _k_sweep_panel(axes[1], mini_batch, mb_palette)
    ratio = float(mini_batch["lr"].iloc[0] / full_batch["lr"].iloc[0])
    _k_sweep_panel(axes[2], full_batch, fb_palette, suffix=" (full batch)")
    rescaled = mini_batch.assign(step=mini_batch["step"] * ratio)
    _k_sweep_panel(axes[2], rescaled, mb_palette, linestyle="--", suffix=" (mini-batch)")
    axes[0].set(title=f"full batch, lr {full_batch['lr'].iloc[0]:g}", xlabel="steps", ylabel="test accuracy")
    axes[1].set(title=f"mini-batch of {mini_batch['batch_size'].iloc[0]}, lr {mini_batch['lr'].iloc[0]:g}", xlabel="steps")
    axes[2].set(title="full batch (solid) vs mini-batch (dashed)",
                xlabel=f"full-batch steps (mini-batch steps × {ratio:g})")
    for ax in axes:
        ax.legend(fontsize=6)
    caption = ("Fig 2: full-batch and mini-batch iterative linearisation for various K on the LeNet-style CNN: "
               "test accuracy of the network over training, mean ± SE over seeds. The mini-batch learning rate "
               f"is {ratio:g} × the full-batch one and its K {1 / ratio:g} × larger; on the right its steps are "
               f"scaled by {ratio:g} (equal lr·t)." + ENDINGS + setup_note(pd.concat([full_batch, mini_batch]), deviations)
               + version_note("fig_2"))
    save_figure(fig, png_path, caption, data_source)


# --- Figs 3, 4, 8: a large-K run against K = 1 ------------------------------------------------

def _large_k_panel(ax, runs: pd.DataFrame, title: str) -> None:
    """Test accuracy against epochs: K = 1 (black), and for the large K the network (red) and
    the linearised model being trained (blue, dashed); faint lines at re-linearisations."""
    points = scheduled(runs)
    for k, at_k in _by_k(points):
        ended = how_it_ended(runs[runs["K"] == k])
        if str(k) == "1":
            sns.lineplot(data=at_k, x="epoch", y="test_accuracy_network", errorbar="se", color=K1_COLOUR, ax=ax,
                         label="K = 1" + ended)
            continue
        sns.lineplot(data=at_k, x="epoch", y="test_accuracy_network", errorbar="se", color=NETWORK_COLOUR, ax=ax,
                     label=f"{k_label(k)}, network{ended}")
        sns.lineplot(data=at_k, x="epoch", y="test_accuracy_linearised", errorbar="se", color=LINEARISED_COLOUR,
                     ax=ax, linestyle="--", label=f"{k_label(k)}, linearised model")
        for epoch in _relinearisation_epochs(runs[(runs["K"] == k) & (runs["seed"] == runs["seed"].min())]):
            ax.axvline(epoch, color="0.8", linewidth=0.6, zorder=0)
    ax.set(title=title, xlabel="epochs", ylabel="test accuracy")
    ax.legend(fontsize=7)


def plot_augmented(runs: pd.DataFrame, png_path, data_source: str, deviations: str | None) -> None:
    """Fig 3: SGD with augmentation, K = 1 against a very large K."""
    apply_style()
    fig, ax = plt.subplots(figsize=(6.0, 4.0), layout="constrained")
    _large_k_panel(ax, runs, "SGD with augmentation")
    caption = ("Fig 3: standard SGD with data augmentation for a large K on the LeNet-style CNN: test accuracy "
               "of K = 1, and for the large K of the network and of the linearised model being trained, mean ± SE "
               "over seeds; grey lines mark re-linearisations. Test accuracy is evaluated on a fixed schedule, so "
               "a re-linearisation between evaluations makes the linearised curve drop to a point off the network "
               "curve (an artefact, as in the paper)." + ENDINGS + setup_note(runs, deviations) + version_note("fig_3"))
    save_figure(fig, png_path, caption, data_source)


def plot_resnets(without_bn: pd.DataFrame, with_bn: pd.DataFrame, png_path, data_source: str,
                 deviations: str | None) -> None:
    """Fig 4: ResNet without BatchNorm (left) and with BatchNorm and augmentation (right)."""
    apply_style()
    fig, axes = plt.subplots(1, 2, figsize=(11.0, 4.0), layout="constrained")
    _large_k_panel(axes[0], without_bn, "without BatchNorm, no augmentation")
    _large_k_panel(axes[1], with_bn, "with BatchNorm and augmentation")
    caption = ("Fig 4: ResNet runs with and without BatchNorm: test accuracy of K = 1 and of a large K (network "
               "and linearised model). With BatchNorm the linearised model uses the BatchNorm statistics of its "
               "linearisation point (recomputed at every re-linearisation), while the K = 1 baseline is ordinary "
               "training with batch statistics, so K = 1 is not IL with frozen statistics there." + ENDINGS
               + setup_note(pd.concat([without_bn, with_bn]), deviations)
               + version_note("fig_4"))
    save_figure(fig, png_path, caption, data_source)


def plot_adam(runs: pd.DataFrame, png_path, data_source: str, deviations: str | None) -> None:
    """Fig 8: K = 1 SGD against IL whose every linearisation Adam solves (left: test accuracy;
    right: training accuracy of the IL-Adam network and of its linearised model); plain Adam
    dotted."""
    apply_style()
    fig, axes = plt.subplots(1, 2, figsize=(11.0, 4.0), layout="constrained")
    roles = adam_roles(runs)
    left, right = axes
    sgd = runs[runs["setting"] == roles["sgd"]]
    sns.lineplot(data=scheduled(sgd), x="step", y="test_accuracy_network", errorbar="se",
                 color=K1_COLOUR, ax=left, label="K = 1 (SGD)" + how_it_ended(sgd))
    il = runs[runs["setting"] == roles["il_adam"]]
    k = il["K"].iloc[0]
    sns.lineplot(data=scheduled(il), x="step", y="test_accuracy_network", errorbar="se", color=NETWORK_COLOUR,
                 ax=left, label=f"{k_label(k)} (Adam), network{how_it_ended(il)}")
    if "adam" in roles:
        adam = runs[runs["setting"] == roles["adam"]]
        sns.lineplot(data=scheduled(adam), x="step", y="test_accuracy_network",
                     errorbar="se", color=ADAM_COLOUR, linestyle=":", ax=left,
                     label="Adam alone (stated in the text; may not be drawn in the paper)" + how_it_ended(adam))
    left.set(title="test accuracy", xlabel="steps", ylabel="test accuracy")
    first_seed = il[il["seed"] == il["seed"].min()]  # in the order recorded: before, then after a re-linearisation
    right.plot(first_seed["step"], first_seed["train_accuracy_network"], color=NETWORK_COLOUR, label="network")
    right.plot(first_seed["step"], first_seed["train_accuracy_linearised"], color=LINEARISED_COLOUR, linestyle="--",
               label="linearised model being optimised")
    right.set(title=f"{k_label(k)} (Adam): training accuracy", xlabel="steps", ylabel="train accuracy")
    for ax in axes:
        ax.legend(fontsize=7)
    caption = ("Fig 8: iterative linearisation with Adam optimising each convex linearised problem for K steps "
               "(optimiser state reset at every re-linearisation) against K = 1 SGD; left: test accuracy (mean ± "
               "SE over seeds), right: training accuracy of the network and of the linearised model (first seed, "
               "with the evaluations just before and after each re-linearisation)." + ENDINGS
               + setup_note(runs, deviations) + version_note("fig_8"))
    save_figure(fig, png_path, caption, data_source)




# --- Fig 5 ------------------------------------------------------------------------------------





def data_scaling_panels(best: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Left: K = 1 at both learning rates and K = ∞; right: every K at the smallest learning rate."""
    small = best["lr"].min()
    left = best[(best["K"].astype(str) == "1") | (best["K"].astype(str) == "inf")]
    right = best[(best["lr"] == small) & (best["K"].astype(str) != "inf")]
    return {"left": left, "right": right}


def mark_diverged(ax, best: pd.DataFrame, y: str) -> None:
    """A red cross on every point whose run diverged (its best accuracy is from before)."""
    diverged = best[best["diverged"]]
    if len(diverged):
        ax.scatter(diverged["n_train"], diverged[y], marker="x", s=80, color=NETWORK_COLOUR, zorder=4,
                   label="diverged (best before it)")


def plot_data_scaling(runs: pd.DataFrame, png_path, data_source: str, deviations: str | None) -> None:
    """Fig 5: best test accuracy against the training-set size (top, the paper's panels) and the
    test error on log-log axes with the fitted slope of each curve (bottom)."""
    apply_style()
    best = best_accuracies(runs)
    panels = data_scaling_panels(best)
    fig, axes = plt.subplots(2, 2, figsize=(11.0, 7.0), layout="constrained", sharex=True)
    titles = {"left": "K = 1 at both learning rates, and K = ∞", "right": "finite K at the smaller learning rate"}
    for column, (name, panel) in enumerate(panels.items()):
        keys = panel.drop_duplicates("curve").sort_values("lr")
        curves = sorted(keys["curve"], key=lambda c: k_value(keys.loc[keys["curve"] == c, "K"].iloc[0]))
        palette = dict(zip(curves, sns.color_palette("tab10", len(curves))))
        sns.lineplot(data=panel, x="n_train", y="best_accuracy", hue="curve", hue_order=curves, palette=palette,
                     marker="o", errorbar="se", ax=axes[0, column])
        axes[0, column].set(xscale="log", title=titles[name], ylabel="best test accuracy", xlabel="")
        sns.lineplot(data=panel, x="n_train", y="test_error", hue="curve", hue_order=curves, palette=palette,
                     marker="o", errorbar="se", ax=axes[1, column], legend=False)
        for curve in curves:
            slope = scaling_slope(panel[panel["curve"] == curve])
            axes[1, column].plot([], [], color=palette[curve], label=f"{curve}: slope {slope:.2f}")
        for ax, y in zip(axes[:, column], ("best_accuracy", "test_error")):
            mark_diverged(ax, panel, y)
        axes[1, column].set(xscale="log", yscale="log", xlabel="training-set size n", ylabel="test error (log)")
        for ax in axes[:, column]:
            ax.legend(fontsize=7)
    caption = ("Fig 5: data scaling as K changes: networks trained on nested class-balanced subsets until the "
               "training set is fitted (or a step cap), with optimal early stopping: the best test accuracy over "
               "the evaluations, selected on the test set as in the paper. K = ∞ is the linearisation at "
               "initialisation (gradient descent with the empirical kernel at θ₀) and reports the linearised "
               "model's accuracy. Bottom: test error on log-log axes with fitted slopes (after Vyas et al. 2022; "
               "not in the paper). A red cross marks a run that diverged (stopped; its best accuracy is from "
               "before): " + (", ".join(f"{k_label(r.K)} lr {r.lr:g} n={r.n_train}" for r in
                                      best[best["diverged"]].itertuples()) or "none") + "."
               + setup_note(runs, deviations) + version_note("fig_5"))
    save_figure(fig, png_path, caption, data_source)


# --- Figs 6, 7 --------------------------------------------------------------------------------

def plot_probes(probes: pd.DataFrame, png_path, data_source: str, deviations: str | None) -> None:
    """Fig 6: linear-probe test accuracy on the first- and second-layer features against epochs."""
    apply_style()
    layers = sorted(probes["layer"].unique())
    fig, axes = plt.subplots(1, len(layers), figsize=(5.2 * len(layers), 3.8), layout="constrained", sharey=True,
                             squeeze=False)
    palette = _k_palette(probes["K"].unique())
    for ax, layer in zip(axes[0], layers):
        at_layer = probes[probes["layer"] == layer]
        for k, at_k in _by_k(at_layer):
            sns.lineplot(data=at_k, x="epoch", y="probe_accuracy", errorbar="se", marker="o", color=palette[k],
                         ax=ax, label=k_label(k))
        ax.set(title=f"layer {layer} features", xlabel="epochs", ylabel="linear probe test accuracy")
        ax.legend(fontsize=7)
    caption = ("Fig 6: test accuracy of linear probes (multinomial logistic regression on standardised features) "
               "trained on the first- and second-layer features (each convolution's ReLU-pooled output) of the "
               "network at each checkpoint of the Fig 3 runs." + (f" Departures from the paper: {deviations}"
                                                                   if deviations else "") + version_note("fig_6"))
    save_figure(fig, png_path, caption, data_source)


def filter_image(change: np.ndarray) -> np.ndarray:
    """A first-layer filter's change from initialisation as an image, the paper's fixed map
    [−0.5, 0.5] → [0, 1] (clipped): (in, h, w) colour filters as (h, w, in) RGB, 1-D filters
    (in, w) as (in, w) grey levels."""
    image = np.clip(change, -0.5, 0.5) + 0.5
    return np.moveaxis(image, 0, -1) if image.ndim == 3 else image


def plot_filters(changes: dict[str, list[tuple[int, np.ndarray]]], n_filters: int, png_path, data_source: str,
                 epochs_per_step: float, deviations: str | None) -> None:
    """Fig 7: rows = (filter j, K), columns = checkpoints after the start; each image the filter's
    change from initialisation. changes: {K: [(step, conv1 weight − initial weight), …]}."""
    apply_style()
    ks = sorted(changes, key=k_value)
    columns = max(len(v) for v in changes.values())
    fig, axes = plt.subplots(n_filters * len(ks), columns, figsize=(0.8 * columns + 1.5, 0.55 * n_filters * len(ks) + 0.8),
                             squeeze=False)
    largest = 0.0
    for j in range(n_filters):
        for i, k in enumerate(ks):
            row = j * len(ks) + i
            for column, ax in enumerate(axes[row]):
                ax.set_xticks([]), ax.set_yticks([])
                if column >= len(changes[k]):
                    ax.axis("off")
                    continue
                step, change = changes[k][column]
                largest = max(largest, float(np.abs(change[j]).max()))
                image = filter_image(change[j])
                ax.imshow(image, cmap="gray", vmin=0, vmax=1, interpolation="nearest", aspect="auto")
                if row == 0:
                    ax.set_title(f"{step * epochs_per_step:.0f}", fontsize=7)
            axes[row, 0].set_ylabel(f"filter {j}\n{k_label(k)}", fontsize=7, rotation=0, ha="right", va="center")
    fig.suptitle("first-layer filters: change from initialisation (columns: epochs)", fontsize=9)
    caption = (f"Fig 7: evolution of the first {n_filters} filters of the first convolutional layer for each K: the "
               "filter's difference from initialisation mapped from [−0.5, 0.5] to [0, 1] (grey = unchanged), one "
               f"column per checkpoint; largest |W_e − W_0| drawn: {largest:.3g}."
               + (f" Departures from the paper: {deviations}" if deviations else "") + version_note("fig_7"))
    save_figure(fig, png_path, caption, data_source)


# --- Fig 9 ------------------------------------------------------------------------------------

def damping_label(damping: float) -> str:
    return "0" if damping == 0 else f"{damping:g}"




def plot_damping(summary: pd.DataFrame, predictions: dict[float, np.ndarray], x_train, y_train, x_test, y_test,
                 drawn: dict, train_rmse_limit: float, png_path, data_source: str) -> None:
    """Fig 9: test RMSE against damping λ, one point per kept run and the mean (top); learnt
    functions for a few λ with the target and training points (bottom)."""
    apply_style()
    dampings = sorted(summary["damping"].unique())
    fig = plt.figure(figsize=(11.0, 7.0), layout="constrained")
    top_grid, bottom_grid = fig.subfigures(2, 1, height_ratios=[1.0, 1.0])
    top = top_grid.subplots()
    kept = kept_runs(summary, train_rmse_limit)
    position = {d: i for i, d in enumerate(dampings)}
    jitter = np.random.default_rng(0).uniform(-0.15, 0.15, len(kept))
    top.scatter(kept["damping"].map(position) + jitter, kept["test_rmse"], s=10, alpha=0.6, color=LINEARISED_COLOUR,
                label="one run")
    means = kept.groupby("damping")["test_rmse"].mean()
    top.scatter(means.index.map(position), means.to_numpy(), marker="_", s=400, color=NETWORK_COLOUR, linewidth=2.5,
                label="mean", zorder=3)
    removed = summary.groupby("damping").size() - kept.groupby("damping").size().reindex(dampings, fill_value=0)
    top.set_xticks(range(len(dampings)), [f"{damping_label(d)}\n({int(removed[d])} removed)" if removed[d] else
                                          damping_label(d) for d in dampings])
    top.set(yscale="log", xlabel="damping λ", ylabel="test RMSE")
    top.legend(fontsize=7)
    bottom = bottom_grid.subplots(1, len(drawn["dampings"]), sharey=True)
    low, high = drawn.get("ylim", [-12, 10])
    for ax, damping in zip(np.atleast_1d(bottom), drawn["dampings"]):
        curves = predictions[damping][:drawn["samples"]]
        for curve in curves:
            ax.plot(x_test, np.clip(curve, low, high), color=LINEARISED_COLOUR, alpha=0.5, linewidth=0.8)
        clipped = int(((curves < low) | (curves > high)).any(axis=1).sum())
        ax.plot(x_test, y_test, color="0.1", linewidth=1.5, label="target")
        ax.scatter(x_train, y_train, color=NETWORK_COLOUR, s=12, zorder=3, label="training points")
        ax.set(title=f"λ = {damping_label(damping)}" + (f" ({clipped} clipped)" if clipped else ""), ylim=(low, high),
               xlabel="x")
    np.atleast_1d(bottom)[0].legend(fontsize=7)
    counts = ", ".join(f"λ={damping_label(d)}: {int(removed[d])}" for d in dampings if removed[d])
    caption = ("Fig 9: generalisation improves as the damping of Gauss-Newton grows. Top: test RMSE of each run "
               f"against λ (runs with train RMSE over {train_rmse_limit:g} or non-finite removed"
               + (f": {counts}" if counts else ": none") + "), the mean marked. Bottom: "
               f"{drawn['samples']} learnt functions for each of {len(drawn['dampings'])} damping values, with the "
               f"quintic target and the {len(x_train)} training points (values outside [{low:g}, {high:g}] clipped). "
               f"{summary['seed'].nunique()} seeds per λ." + version_note("fig_9"))
    save_figure(fig, png_path, caption, data_source)


# --- the manifest's plot functions (src/linearlens/manifests/iterative_linearisation.py) --------

def _training_runs(job: FigureJob) -> tuple[dict[str, pd.DataFrame], str | None]:
    """The runs of each experiment the figure draws, and the experiments' departures from the paper."""
    runs = read_records(job.inputs["runs"])
    job.log.info("%d runs", runs.groupby(["experiment", "setting", "seed"]).ngroups)
    experiments = job.params["experiments"].values()
    deviations = " ".join(spec["deviations"] for spec in experiments if spec.get("deviations")) or None
    return dict(tuple(runs.groupby("experiment"))), deviations


def named_source(job: FigureJob, runs: pd.DataFrame | None = None) -> str:
    """The data source as the image names it: with the training-set size the runs drew from it
    (where given; the source names the generated set's) and the stand-in network where there is one."""
    source = job.data_source
    if runs is not None:
        sizes = ", ".join(f"{n:,}" for n in sorted(runs["n_train"].unique()))
        source += f"; the runs train on n = {sizes} of its training signals"
    network = job.params.get("network")
    return f"{source}; network: {network}" if network else source


# Each training figure's plot, and the experiments it draws in the plot's argument order.
TRAINING_PLOTS = {"fig_2": (plot_k_sweeps, ("full_batch", "mini_batch")), "fig_3": (plot_augmented, ("augmented",)),
                  "fig_4": (plot_resnets, ("resnet_no_bn", "resnet_bn")),
                  "fig_5": (plot_data_scaling, ("data_scaling",)), "fig_8": (plot_adam, ("adam",))}


def training_figure(job: FigureJob) -> None:
    """Figs 2, 3, 4, 5, 8 from the runs of their experiments."""
    plot, experiments = TRAINING_PLOTS[job.figure]
    runs, deviations = _training_runs(job)
    drawn = [runs[experiment] for experiment in experiments]
    # Fig 5's x-axis is the training-set size: the image needs no size beside its data.
    source = named_source(job) if job.figure == "fig_5" else named_source(job, pd.concat(drawn))
    plot(*drawn, job.png_path, source, deviations)


def fig_6(job: FigureJob) -> None:
    probes = read_records(job.inputs["probes"])
    plot_probes(probes, job.png_path, named_source(job), job.params.get("deviations"))


def fig_7(job: FigureJob) -> None:
    from ..experiments.iterative_linearisation import first_layer_changes  # reads checkpoints: torch

    changes, epochs_per_step = first_layer_changes(job.inputs["checkpoints"], job.params.get("seed", 0))
    plot_filters(changes, job.params["n_filters"], job.png_path, named_source(job), epochs_per_step,
                 job.params.get("deviations"))


def fig_9(job: FigureJob) -> None:
    spec = job.params
    summary = read_runs(job.inputs["summaries"])
    predictions = {}
    for damping, path in zip(spec["dampings"], job.inputs["predictions"]):
        with np.load(path) as saved:
            predictions[float(damping)] = saved["predictions"]
    with np.load(job.inputs["data"][0]) as data:
        plot_damping(summary, predictions, data["x_train"][:, 0], data["y_train"], data["x_test"][:, 0],
                     data["y_test"], spec["drawn"], spec["train_rmse_limit"], job.png_path, job.data_source)
