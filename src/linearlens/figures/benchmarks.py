"""The kernel benchmark as a figure: time per case and method, ours against the other routes."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from .style import apply_style, save_figure

NTK_DATA = "synthetic Gaussian inputs of MNIST (1x28x28) and CIFAR (3x32x32) shape, untrained models"
TREE_DATA = "seeded synthetic regression, XGBoost depth-6 trees"


def plot_kernel_benchmark(frame: pd.DataFrame, png_path) -> None:
    """One panel per NTK model (time against n, a line per method and dtype) and one for the tree
    kernel; cases that timed out or were skipped are absent and listed in the caption."""
    apply_style()
    ntk = frame[frame["benchmark"] == "ntk"]
    models = list(dict.fromkeys(ntk["model"]))
    fig, axes = plt.subplots(1, len(models) + 1, figsize=(4 * (len(models) + 1), 3.6),
                             layout="constrained")
    measured = frame[frame["status"] == "ok"]
    for ax, model in zip(axes, models):
        data = measured[(measured["benchmark"] == "ntk") & (measured["model"] == model)]
        sns.lineplot(data=data, x="n", y="seconds", hue="method", style="dtype", marker="o", ax=ax)
        ax.set(xscale="log", yscale="log", title=f"NTK Gram, {model}", xlabel="examples n",
               ylabel="seconds")
    trees = measured[measured["benchmark"] == "tree_kernel"]
    sns.barplot(data=trees, x="method", y="seconds", ax=axes[-1])
    axes[-1].set(yscale="log", title="tree kernel telescoping", xlabel="", ylabel="seconds")
    axes[-1].tick_params(axis="x", rotation=20)
    missing = frame[frame["status"] != "ok"]
    caption = ("Wall time of the empirical NTK (full (n, 10, n, 10) Gram) by our layer-wise "
               "identity, torch.func vmap-over-jacrev and NNGeometry, and of the tree-kernel "
               "telescoping sum by leaf replay, sparse and dense kernels; one process per case. ")
    if len(missing):
        caption += "Not shown: " + "; ".join(
            f"{r.model} {r.method} n={r.n} {r.dtype} ({r.status})" for r in missing.itertuples()) + "."
    save_figure(fig, png_path, caption, f"{NTK_DATA}; {TREE_DATA}")
