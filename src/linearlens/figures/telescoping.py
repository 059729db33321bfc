"""Figures of the telescoping-lens paper (Jeffares, Curth & van der Schaar 2024), from run records."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from ..analysis.records import read_runs
from ..analysis.telescoping import double_descent_metric, final_by_width, interpolation_width, relative_mse_table
from ..claims.telescoping import (
    SMOOTHER_TOLERANCE,
    STILL_FALLING,
    second_half_drop,
    smoother_breakdown_step,
    smoother_relative_gap,
)
from ..manifests.jobs import FigureJob
from .style import apply_style, save_figure

TELESCOPING_RED, LINEAR_GRAY, LINEAR_BLUE, NETWORK_GRAY = "#c0392b", "0.55", "#2c6fbb", "0.45"


def _error_panel(ax, runs: pd.DataFrame, title: str) -> None:
    """Mean absolute error of f̃ (red) and f^lin (gray) against the network, one shade per γ,
    mean ± standard error over seeds."""
    rates = sorted(runs["lr"].unique())
    reds = sns.light_palette(TELESCOPING_RED, len(rates) + 1)[1:]
    grays = sns.light_palette(LINEAR_GRAY, len(rates) + 1)[1:]
    for lr, red, gray in zip(rates, reds, grays):
        at_rate = runs[(runs["lr"] == lr) & (runs["step"] > 0)]
        sns.lineplot(data=at_rate, x="step", y="error_telescoping", errorbar="se", color=red, ax=ax,
                     label=f"telescoping, γ={lr:g}")
        sns.lineplot(data=at_rate, x="step", y="error_linearised", errorbar="se", color=gray, ax=ax,
                     linestyle="--", label=f"linear at init, γ={lr:g}")
    ax.set(xscale="log", yscale="log", title=title, xlabel="optimisation step t",
           ylabel="mean |f(x) − approximation(x)|")
    ax.legend(fontsize=6)


def plot_approximation_errors(runs: pd.DataFrame, settings: dict, png_path, data_source: str,
                              figure: str) -> None:
    """Fig 2 (the settings given: SGD and AdamW) and Fig 7 (all five settings)."""
    apply_style()
    fig, axes = plt.subplots(1, len(settings), figsize=(3.6 * len(settings), 3.3), layout="constrained",
                             squeeze=False)
    for ax, (name, setting) in zip(axes[0], settings.items()):
        _error_panel(ax, runs[runs["setting"] == name], setting.get("label", name))
    seeds = runs["seed"].nunique()
    caption = (f"{figure}: test-set approximation error of the telescoping model f̃ (red) and of the "
               f"model linearised at initialisation f^lin (gray, dashed) against the trained network, "
               f"per optimisation setting and learning rate γ; mean ± SE over {seeds} seed(s).")
    save_figure(fig, png_path, caption, data_source)


def plot_approximation_accuracy(runs: pd.DataFrame, settings: dict, png_path, data_source: str) -> None:
    """Fig 8: test accuracy of f̃ (top, red) and f^lin (bottom, blue) against the network (gray),
    each setting at its smallest γ."""
    apply_style()
    fig, axes = plt.subplots(2, len(settings), figsize=(3.3 * len(settings), 5.2), layout="constrained",
                             squeeze=False, sharex=True)
    for column, (name, setting) in enumerate(settings.items()):
        in_setting = runs[runs["setting"] == name]
        at_rate = in_setting[(in_setting["lr"] == in_setting["lr"].min()) & (in_setting["step"] > 0)]
        for row, (approximation, colour, label) in enumerate(
                [("accuracy_telescoping", TELESCOPING_RED, "telescoping f̃"),
                 ("accuracy_linearised", LINEAR_BLUE, "linear at init f^lin")]):
            ax = axes[row, column]
            sns.lineplot(data=at_rate, x="step", y="accuracy_network", errorbar="se", color=NETWORK_GRAY,
                         linewidth=2.5, ax=ax, label="network f")
            sns.lineplot(data=at_rate, x="step", y=approximation, errorbar="se", color=colour, ax=ax,
                         label=label)
            ax.set(xscale="log", xlabel="optimisation step t", ylabel="test accuracy",
                   title=f"{setting.get('label', name)}, γ={at_rate['lr'].min():g}" if row == 0 else "")
            ax.legend(fontsize=6)
    caption = ("Fig 8: test accuracy of the telescoping model (top, red) and of the model linearised "
               "at initialisation (bottom, blue) against the trained network (gray), each setting at "
               f"its smallest learning rate; mean ± SE over {runs['seed'].nunique()} seed(s).")
    save_figure(fig, png_path, caption, data_source)


def plot_schematic(png_path) -> None:
    """Fig 1: the telescoping model as a drawing: the initial prediction plus one first-order
    update per optimisation step, each taken at the previous iterate."""
    apply_style()
    fig, ax = plt.subplots(figsize=(10, 3.0))
    ax.set(xlim=(0, 10), ylim=(0, 3))
    ax.axis("off")
    box = {"boxstyle": "round,pad=0.35", "linewidth": 1.0}
    terms = [(0.6, "$x$", "white"), (2.0, r"$f_{\theta_0}(x)$", "0.9"),
             (3.9, r"$\Delta\tilde f_1(x)$", "#f5d0cc"), (5.5, r"$\Delta\tilde f_2(x)$", "#f5d0cc"),
             (7.1, r"$\Delta\tilde f_T(x)$", "#f5d0cc"), (9.1, r"$\tilde f_{\theta_T}(x)$", "#e8a19a")]
    for x, text, colour in terms:
        ax.text(x, 2.2, text, ha="center", va="center", fontsize=12, bbox={**box, "facecolor": colour})
    for x, text in [(1.3, r"$\rightarrow$"), (2.95, "+"), (4.7, "+"), (6.3, r"+ $\cdots$ +"), (8.1, "=")]:
        ax.text(x, 2.2, text, ha="center", va="center", fontsize=13)
    for x, t in [(3.9, "1"), (5.5, "2"), (7.1, "T")]:
        previous = {"1": "0", "2": "1", "T": "T-1"}[t]
        ax.annotate("", xy=(x, 1.85), xytext=(x, 1.25), arrowprops={"arrowstyle": "->", "color": "0.3"})
        ax.text(x, 1.0, rf"$\nabla f_{{\theta_{{{previous}}}}}(x)^\top \Delta\theta_{{{t}}}$",
                ha="center", va="center", fontsize=10)
        ax.text(x, 0.45, rf"batch $B_{{{t}}} \subset \mathcal{{D}}_\mathrm{{train}}$", ha="center",
                va="center", fontsize=9, color="0.35")
    ax.text(5.0, 2.85, "telescoping model: each step's functional update, linearised around the "
            "previous iterate", ha="center", fontsize=10)
    caption = ("Fig 1: the telescoping model f̃ (Eq. 5): the network's initial prediction plus, for "
               "every optimisation step t, the first-order change ∇f_{θ_{t−1}}(x)ᵀΔθ_t taken at the "
               "previous parameters, with Δθ_t the real step on batch B_t.")
    save_figure(fig, png_path, caption, "illustration (a drawing, no data)")


TRAIN_BLUE, TEST_ORANGE = "#1f77b4", "#ff7f0e"


def _grokking_column(top, bottom, runs: pd.DataFrame, title: str, show_train: bool) -> bool:
    """Top: train/test error (classification) or MSE (regression); bottom: p^train and p^test;
    against the step on a log axis, mean ± SE over seeds. True where the run is marked as cut by
    the step cap."""
    runs = runs[runs["step"] > 0]
    metric = "error" if "test_error" in runs and runs["test_error"].notna().all() else "mse"
    for split, colour in (("train", TRAIN_BLUE), ("test", TEST_ORANGE)):
        if split == "train" and not show_train:
            continue
        sns.lineplot(data=runs, x="step", y=f"{split}_{metric}", errorbar="se", color=colour, ax=top,
                     label=split)
        sns.lineplot(data=runs, x="step", y=f"p_{split}", errorbar="se", color=colour, ax=bottom,
                     label=f"p^{split}")
    breakdown = smoother_breakdown_step(runs)
    if breakdown is not None:  # p_ŝ past this step comes from a smoother that no longer tracks f
        bottom.axvline(breakdown, color="0.3", linestyle="--", linewidth=1,
                       label=f"S·y + c off f by > {SMOOTHER_TOLERANCE:.0%}")
    cut = _cut_while_falling(runs, metric)
    top.set(xscale="log", title=title + cut, xlabel="", ylabel="misclassification error" if metric == "error" else "MSE")
    bottom.set(xscale="log", xlabel="optimisation step t", ylabel="effective parameters p_ŝ")
    if metric == "mse":
        top.set_yscale("log")
    top.legend(fontsize=7)
    bottom.legend(fontsize=7)
    return bool(cut)


def _cut_while_falling(runs: pd.DataFrame, metric: str) -> str:
    """A title line for a regression run the step cap stopped while its test MSE was still falling
    (by G9's measure): its curve ends before the late drop the paper shows has settled. (A 0-1
    error curve ends at its floor; the measure is G9's, on the polynomial task's MSE.)"""
    if metric != "mse":
        return ""
    drop = second_half_drop(runs)
    return f"\ntest MSE still falling at cap (−{drop:.0%})" if drop >= STILL_FALLING else ""


def plot_grokking(columns: list[tuple[pd.DataFrame, str, bool]], png_path, caption: str,
                  data_source: str) -> None:
    """Figs 4, 11, 12, 13: one column per (runs, title, show train curves)."""
    apply_style()
    fig, axes = plt.subplots(2, len(columns), figsize=(3.8 * len(columns), 5.4), layout="constrained",
                             squeeze=False, sharex="col")
    cut = [_grokking_column(axes[0, column], axes[1, column], runs, title, show_train)
           for column, (runs, title, show_train) in enumerate(columns)]
    if any(cut):
        caption += (f" A title marks a run the step cap stopped while its test MSE was still falling (by "
                    f"{STILL_FALLING:.0%} or more over its second half; the fall is given): its late drop had not "
                    "settled.")
    save_figure(fig, png_path, caption, data_source)


METRIC_LABELS = {"mse": "MSE", "error": "misclassification error"}


def plot_double_descent(columns: list[tuple[pd.DataFrame, str, float, str]], png_path, caption: str,
                        data_source: str) -> None:
    """Figs 3, 9, 10: one column per (final records by width, title, interpolation width, metric):
    train and test MSE or 0-1 error (top) and p^train, p^test (bottom) against the hidden width,
    mean ± SE over seeds, the interpolation threshold p ≈ n dotted; crosses mark the widths whose
    smoother left the network (S1), where p_ŝ is not the network's."""
    apply_style()
    fig, axes = plt.subplots(2, len(columns), figsize=(4.0 * len(columns), 5.4), layout="constrained",
                             squeeze=False, sharex="col")
    for column, (final, title, threshold, metric) in enumerate(columns):
        top, bottom = axes[0, column], axes[1, column]
        for split, colour in (("train", TRAIN_BLUE), ("test", TEST_ORANGE)):
            sns.lineplot(data=final, x="width", y=f"{split}_{metric}", errorbar="se", marker="o", color=colour,
                         ax=top, label=f"{split} {METRIC_LABELS[metric]}")
            sns.lineplot(data=final, x="width", y=f"p_{split}", errorbar="se", marker="o", color=colour,
                         ax=bottom, label=f"p^{split}")
        off = final[final["smoother_off"]]
        if len(off):
            bottom.scatter(off["width"], off["p_test"], marker="x", color="0.2", zorder=5,
                           label=f"S·y + c off f by > {SMOOTHER_TOLERANCE:.0%}")
        for ax in (top, bottom):
            ax.axvline(threshold, color="0.5", linestyle=":", linewidth=1)
            ax.set(xscale="log")
            ax.legend(fontsize=7)
        top.set(title=title, ylabel=METRIC_LABELS[metric], xlabel="")
        bottom.set(xlabel="hidden units", ylabel="effective parameters p_ŝ")
    save_figure(fig, png_path, caption, data_source)


KERNEL_LABELS = {("network", "batch"): "network, batch kernel (Eq. 3)",
                 ("network", "full_train"): "network, full training row",
                 ("sklearn", "tree"): "GBT (scikit-learn)", ("xgboost", "tree"): "GBT (XGBoost)"}


def plot_tabular(relative: pd.DataFrame, runs: pd.DataFrame, titles: dict[str, str], png_path,
                 caption: str, data_source: str) -> None:
    """Figs 5, 14: one column per panel; top: relative performance R_MSE(p) of the network against
    each boosting library, bottom: kernel ratios R_k(p); mean ± SE over seeds."""
    apply_style()
    panels = list(titles)
    fig, axes = plt.subplots(2, len(panels), figsize=(4.0 * len(panels), 5.4), layout="constrained",
                             squeeze=False, sharex=True)
    runs = runs.assign(curve=[KERNEL_LABELS.get((m, k), f"{m}, {k}") for m, k in zip(runs["model"], runs["kernel"])])
    for column, panel in enumerate(panels):
        top, bottom = axes[0, column], axes[1, column]
        sns.lineplot(data=relative[relative["panel"] == panel], x="p", y="r_mse", hue="library",
                     errorbar="se", marker="o", ax=top)
        sns.lineplot(data=runs[runs["panel"] == panel], x="p", y="kernel_ratio", hue="curve",
                     errorbar="se", marker="o", ax=bottom)
        bottom.axhline(1.0, color="0.5", linestyle=":", linewidth=1)
        top.set(title=titles[panel], ylabel="R_MSE (network vs GBT)", xlabel="")
        bottom.set(xlabel="share p of irregular test rows", ylabel="kernel ratio R_k")
        for ax in (top, bottom):
            ax.legend(fontsize=7)
    save_figure(fig, png_path, caption, data_source)


BRANCH_LABELS = {"random": "random initialisation", "pretrained": "pretrained"}
BRANCH_COLOURS = {"random initialisation": "#ff7f0e", "pretrained": "#2ca02c"}  # the paper's orange and green


def plot_lmc(children: pd.DataFrame, changes: pd.DataFrame, png_path, caption: str, data_source: str) -> None:
    """Fig 6: (1) the accuracy drop along the line between two children against the step they
    were spawned at, per branch; (2, 3) the squared change of the gradients over the next epoch,
    one curve per layer, for each branch. Spawn steps on a symlog axis (t' = 0 included)."""
    apply_style()
    branches = list(dict.fromkeys(changes["branch"]))
    fig, axes = plt.subplots(1, 1 + len(branches), figsize=(4.2 * (1 + len(branches)), 3.6), layout="constrained")
    gaps = children.drop_duplicates(["branch", "seed", "inner", "spawn_step"])
    sns.lineplot(data=gaps.assign(branch=gaps["branch"].map(BRANCH_LABELS)), x="spawn_step", y="gap_max",
                 hue="branch", palette=BRANCH_COLOURS, errorbar="se", marker="o", ax=axes[0])
    axes[0].set(xscale="symlog", xlim=(0, None), xlabel="spawn step t'", ylabel="accuracy drop under weight averaging",
                title="linear mode connectivity")
    for ax, branch in zip(axes[1:], branches):
        layers = changes[changes["branch"] == branch].sort_values("order")
        palette = sns.color_palette("viridis", layers["layer"].nunique())
        sns.lineplot(data=layers, x="spawn_step", y="gradient_change", hue="layer", palette=palette,
                     errorbar="se", ax=ax, legend=False)
        ax.set(xscale="symlog", xlim=(0, None), yscale="log", xlabel="spawn step t'", ylabel="squared gradient change",
               title=f"{BRANCH_LABELS.get(branch, branch)}: layers (dark = first, light = last)")
    save_figure(fig, png_path, caption, data_source)


# --- the manifest's plot functions (src/linearlens/manifests/telescoping.py) --------------------

def _main_settings(settings: dict) -> dict:
    return {name: settings[name] for name in ("sgd", "adamw") if name in settings}


def fig_2(job: FigureJob) -> None:
    plot_approximation_errors(read_runs(job.inputs["runs"]), _main_settings(job.params), job.png_path,
                              job.data_source, "Fig 2")


def fig_7(job: FigureJob) -> None:
    plot_approximation_errors(read_runs(job.inputs["runs"]), job.params, job.png_path, job.data_source, "Fig 7")


def fig_8(job: FigureJob) -> None:
    plot_approximation_accuracy(read_runs(job.inputs["runs"]), job.params, job.png_path, job.data_source)


GROKKING_SUFFIX = (" Top: train (blue) and test (orange) performance; bottom: effective parameters p^train and "
                   "p^test of the telescoping smoother; mean ± SE over {seeds} seed(s).")


# The paper's networks, against which a run's network is named a stand-in on the image.
PAPER_MLP_HIDDEN = [200, 200]  # MLP3-200 (Figs 4, 12, 13)
PAPER_POLYNOMIAL_HIDDEN = 500  # KBGP24's n_h (Figs 4, 11)


def _grokking_network(family: str, model: dict) -> str:
    """The family's network, named a stand-in for the paper's where it differs ("" where not)."""
    if family == "polynomial":
        hidden = model.get("hidden")
        return "" if hidden == PAPER_POLYNOMIAL_HIDDEN else (
            f"KBGP24 network with {hidden} hidden units, stand-in for {PAPER_POLYNOMIAL_HIDDEN}")
    hidden = list(model.get("hidden", []))
    return "" if hidden == PAPER_MLP_HIDDEN else (
        f"MLP {'-'.join(map(str, hidden))} hidden, stand-in for MLP3-200 ({'-'.join(map(str, PAPER_MLP_HIDDEN))})")


def with_networks(data_source: str, networks) -> str:
    """The data source with the stand-in networks named after it, each once."""
    named = [network for network in dict.fromkeys(networks) if network]
    return data_source + "".join(f"; network: {network}" for network in named)


def _grokking_figure(job: FigureJob, columns) -> None:
    """Figs 4, 11-13: ``columns`` lists (family, setting, show train curves)."""
    runs, grokking = read_runs(job.inputs["runs"]), job.params
    drawn = [(runs[(runs["family"] == family) & (runs["setting"] == setting)],
              grokking[family]["settings"][setting].get("label", setting), show_train)
             for family, setting, show_train in columns]
    networks = [_grokking_network(family, grokking[family]["model"]) for family, _, _ in columns]
    plot_grokking(drawn, job.png_path, job.caption + GROKKING_SUFFIX.format(seeds=runs["seed"].nunique()),
                  with_networks(job.data_source, networks))
    job.log.info("%d columns", len(drawn))


def _every_setting(grokking: dict, family: str, show_train: bool = True) -> list:
    return [(family, setting, show_train) for setting in grokking[family]["settings"]]


def fig_4(job: FigureJob) -> None:
    grokking = job.params
    _grokking_figure(job, [("polynomial", grokking["polynomial"]["main"], True),
                           ("large_init", grokking["large_init"]["main"], True),
                           *_every_setting(grokking, "standard_init", show_train=False)])


def fig_11(job: FigureJob) -> None:
    _grokking_figure(job, _every_setting(job.params, "polynomial"))


def fig_12(job: FigureJob) -> None:
    _grokking_figure(job, _every_setting(job.params, "large_init"))


def fig_13(job: FigureJob) -> None:
    _grokking_figure(job, _every_setting(job.params, "standard_init"))


DOUBLE_DESCENT_TITLES = {"dd_cifar_catdog": "cat vs dog", "dd_mnist_noisy": "20% label noise",
                         "dd_mnist_clean": "no label noise", "dd_mnist1d": "MNIST-1D, 15% noise"}


def double_descent_figure(job: FigureJob) -> None:
    """Figs 3, 9, 10: one column per width sweep, in the manifest's order."""
    runs = read_runs(job.inputs["runs"])
    columns = []
    for family, family_runs in runs.groupby("family", sort=False):
        final = final_by_width(family_runs)
        # a run whose smoother left the network at any logged step (S1), marked on its final record
        worst = family_runs.assign(gap=smoother_relative_gap(family_runs)).groupby(["setting", "seed"])["gap"].max()
        final = final.assign(smoother_off=[worst[key] > SMOOTHER_TOLERANCE for key in zip(final["setting"], final["seed"])])
        columns.append((final, DOUBLE_DESCENT_TITLES.get(family, family), interpolation_width(final),
                        double_descent_metric(family, final)))
    metrics = " / ".join(dict.fromkeys(METRIC_LABELS[column[3]] for column in columns))
    caption = (job.caption + ": one-hidden-layer networks, each width's final record; top: train and test "
               f"{metrics}, bottom: effective parameters of the telescoping smoother, "
               f"against the width; dotted: p ≈ n; crosses: widths whose smoother left the network by more "
               f"than {SMOOTHER_TOLERANCE:.0%} (S1); mean ± SE over {runs['seed'].nunique()} seed(s).")
    plot_double_descent(columns, job.png_path, caption, job.data_source)
    job.log.info("%d sweeps", len(columns))


def tabular_figure(job: FigureJob) -> None:
    """Figs 5, 14: one column per panel of the figure."""
    runs, panels = read_runs(job.inputs["runs"]), job.params["panels"]
    titles = {name: panels[name].get("label", name) for name in runs["panel"].unique()}
    # The models' hyper-parameters are part of what the paper compares: fixed ones are a stand-in.
    searched = "" if job.params.get("search") else (
        f"; network (MLP {'-'.join(map(str, job.params['hidden']))}) and boosting: fixed hyper-parameters, "
        "not the paper's 25-point random searches")
    caption = (job.caption + ": top, R_MSE(p) = (MSE_NN − MSE_GBT) at p over the same at p = 0; "
               "bottom, largest test kernel-row norm over the largest training one, averaged over steps "
               f"(network) or trees (GBT); mean ± SE over {runs['seed'].nunique()} seed(s).")
    plot_tabular(relative_mse_table(runs), runs, titles, job.png_path, caption, job.data_source + searched)
    job.log.info("%d panels", len(titles))


def fig_6(job: FigureJob) -> None:
    children, changes = read_runs(job.inputs["children"]), read_runs(job.inputs["gradient_changes"])
    pairs = children.groupby("branch")[["seed", "inner"]].apply(lambda f: len(f.drop_duplicates()))
    caption = ("Fig 6: left, largest accuracy drop of the weight average of two children below the line "
               "between their accuracies, against the step t' they were spawned from the parent (orange: "
               "randomly initialised parent, green: pretrained); middle "
               "and right, squared change of the network's gradients over the epoch after t', per layer. "
               f"Mean ± SE over {int(pairs.max())} child pair(s) per spawn step; pretraining on the second "
               "data source.")
    plot_lmc(children, changes, job.png_path, caption, with_networks(job.data_source, [_lmc_network(job.params)]))


def _lmc_network(model: dict) -> str:
    """The Fig 6 network, named a stand-in unless it is the paper's ResNet-20."""
    if model.get("name") == "resnet20":
        return ""
    width = model.get("width", 16)
    return (f"CIFAR ResNet with {model.get('blocks_per_stage')} block(s) per stage, {width}/{2 * width}/{4 * width} "
            "channels, stand-in for ResNet-20 (3 blocks per stage, 16/32/64)")
