"""Figures of the telescoping-lens paper (Jeffares, Curth & van der Schaar 2024), from run records."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

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
               f"per optimisation setting and learning rate γ; mean ± SE over {seeds} seeds.")
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
               f"its smallest learning rate; mean ± SE over {runs['seed'].nunique()} seeds.")
    save_figure(fig, png_path, caption, data_source)
