"""Chapter 4, a one-layer transformer learning decision lists: the plot of Fig 4.1, matrix V after one
gradient step under uniform attention.

The thesis shows "a visualization of matrix V" without saying which: the left panel is
V₁ itself (not V₁ − V₀; V₀'s entries are of order 1e-4) with the rows and columns in token order, so
the structure cP is a bright permuted diagonal at rows π(a) = a + 20 (mod m); the right panel is
V₁ Pᵀ, its columns reordered by π, which puts that structure on the main diagonal. Both on one
linear colour scale, with its colour bar.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from ...analysis.karp_thesis.ch4 import (
    permuted_to_diagonal,
    read_one_step,
    run_text,
    structure_summary,
    vocabulary_text,
)
from ...manifests.jobs import FigureJob
from ..style import apply_style, save_figure

CMAP = "viridis"


def _heatmap(ax, matrix, vmin: float, vmax: float, title: str, xlabel: str):
    image = ax.imshow(matrix, cmap=CMAP, vmin=vmin, vmax=vmax, interpolation="nearest", aspect="equal")
    ax.grid(False)
    ax.set(title=title, xlabel=xlabel, ylabel="row i (output token)")
    return image


def _unused_tokens(record: dict) -> str:
    """Tokens of the vocabulary never drawn as inputs (0 with the default vocabulary {0..L}): their
    column keeps V₀, and their row π(t) is never a label, so the step only lowers it (a dark row)."""
    unused = sorted(set(range(len(record["permutation"]))) - set(record["input_tokens"].tolist()))
    if not unused:
        return ""
    rows = ", ".join(str(record["permutation"][t]) for t in unused)
    return (f" (column {', '.join(map(str, unused))}, never an input, keeps V₀; row {rows} = π of it is never a "
            "label, so the step only lowers it: the dark row)")


def plot_fig_4_1(job: FigureJob) -> None:
    apply_style()
    record = read_one_step(job.inputs["one_step"][0])
    settings, V1 = record["settings"], record["V1"]
    summary = structure_summary(record)
    vmin, vmax = float(V1.min()), float(V1.max())
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 5.0), layout="constrained")
    _heatmap(axes[0], V1, vmin, vmax, "V₁", "column a (input token)")
    image = _heatmap(axes[1], permuted_to_diagonal(V1, record["permutation"]), vmin, vmax,
                     "V₁ Pᵀ (columns reordered by π)", "column j = π(a)")
    fig.colorbar(image, ax=axes.tolist(), shrink=0.8, label="entry of V₁")
    fig.suptitle(f"Fig 4.1: V after one gradient step under uniform attention (W = 0)\n{run_text(settings)}",
                 fontsize=9)
    found = (f"{summary['fraction_at_permutation']:.1%} of the {summary['columns']} input columns peak at row π(a); "
             f"mean V₁[π(a), a] = {summary['structure_mean']:.2f} (first-order population value "
             f"{summary['analytic_structure_mean']:.2f}); largest off-structure entry per column "
             f"{summary['largest_off_structure_mean']:.2f} on average, mean off-structure entry "
             f"{summary['off_structure_mean']:.3f}; faint secondary band V₁[π(a), a − 10] "
             f"{summary['secondary_band_mean']:.2f} (columns whose decision list starts with a)")
    caption = [job.caption, "Matrix V after one gradient step on the population loss (eq. 4.2) estimated on sampled "
               f"sequences, with W = 0 (uniform attention): {run_text(settings)}. π(i) = f(i + "
               f"{settings['permutation_shift']}), decision lists L_i = (" +
               ", ".join(f"f(i + {shift})" for shift in settings["list_shifts"]) + ", i); "
               f"{vocabulary_text(settings)}. Left: V₁ itself (not V₁ − V₀), rows the output token i, columns the "
               f"input token a, in token order{_unused_tokens(record)}. Right: V₁ Pᵀ, P the "
               "permutation matrix of π, so V₁ ≈ cP shows as c on the main diagonal. One linear colour scale, "
               f"from the smallest to the largest entry of V₁. Measured: {found}."]
    data_source = (f"{job.data_source}, L = {settings['vocabulary_length']}, N = {settings['sequences']:,} sequences "
                   f"of n = {settings['sequence_length']} distinct tokens, seed {settings['seed']}")
    save_figure(fig, job.png_path, " ".join(part for part in caption if part), data_source)
