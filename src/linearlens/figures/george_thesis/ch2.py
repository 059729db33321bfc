"""Figures for Chapter 2 (background): Fig 2.1 (four Gaussians equally far apart in parameters but not as
distributions, from the closed-form run) and Fig 2.2 (tangent spaces and learning paths in the function
manifold), drawn."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ...analysis.george_thesis.ch2 import pair_table, read_gaussians
from ...manifests.jobs import FigureJob
from ..style import apply_style, save_figure

# --- Fig 2.1: four normal distributions -------------------------------------------------------------

GAUSSIAN_COLOURS = {"A": "#2c6fbb", "B": "#7d3c98", "C": "#c0392b", "D": "#e67e22"}


def _parameter_plane(ax, record: dict) -> None:
    """The four distributions as points (μ, σ²), with the two segments of length 1."""
    points = dict(zip(record["names"].tolist(), record["parameters"]))
    for first, second in ("AB", "CD"):
        segment = np.stack([points[first], points[second]])
        ax.plot(*segment.T, color="0.45", linewidth=1.4, zorder=1)
        middle = segment.mean(0)
        ax.annotate("length 1", middle, xytext=(8, 0) if first == "A" else (0, 8), textcoords="offset points",
                    ha="left" if first == "A" else "center", va="center" if first == "A" else "bottom",
                    fontsize=9, color="0.3")
    for name, (mean, variance) in points.items():
        ax.scatter(mean, variance, color=GAUSSIAN_COLOURS[name], s=40, zorder=2)
        ax.annotate(f"$f^{name}$", (mean, variance), xytext=(-6, 4), textcoords="offset points", ha="right",
                    fontsize=11, color=GAUSSIAN_COLOURS[name])
    ax.set(xlabel=r"mean $\mu$", ylabel=r"variance $\sigma^2$", xlim=(-1.2, 1.2), ylim=(0, 2.3),
           title="parameter space")


def _densities(ax, record: dict, names: str) -> None:
    """The pdfs of two distributions, each with its central interval as a bar below the axis."""
    index = {name: i for i, name in enumerate(record["names"].tolist())}
    mass = float(record["interval_mass"])
    peak = max(record["pdfs"][index[name]].max() for name in names)
    for offset, name in enumerate(names):
        i = index[name]
        mean, variance = record["parameters"][i]
        ax.plot(record["x"], record["pdfs"][i], color=GAUSSIAN_COLOURS[name], linewidth=1.8,
                label=f"$f^{name}$: $\\mu$ = {mean:.3g}, $\\sigma^2$ = {variance:.3g}")
        low, high = record["intervals"][i]
        height = -(0.06 + 0.06 * offset) * peak
        ax.plot([low, high], [height, height], color=GAUSSIAN_COLOURS[name], linewidth=3, solid_capstyle="butt")
        ax.fill_between(record["x"], 0, record["pdfs"][i], where=(record["x"] >= low) & (record["x"] <= high),
                        color=GAUSSIAN_COLOURS[name], alpha=0.12, linewidth=0)
    ax.axhline(0, color="0.6", linewidth=0.8)
    ax.set(xlabel="x", ylabel="density", xlim=(record["x"][0], record["x"][-1]), ylim=(-0.2 * peak, 1.5 * peak))
    ax.set_yticks([tick for tick in ax.get_yticks() if 0 <= tick <= 1.5 * peak])  # none beside the bars
    ax.legend(loc="upper left", fontsize=8.5, title=f"bars: {mass:.0%} central intervals", title_fontsize=8.5)


def plot_fig_2_1(job: FigureJob) -> None:
    """Fig 2.1: (left) the four distributions in the (μ, σ²) plane, AB and CD both of length 1; (middle)
    pdfs of f^A and f^B, (right) of f^C and f^D, with their central intervals."""
    record = read_gaussians(job.inputs["run"][0])
    table = pair_table(record)
    apply_style()
    fig, axes = plt.subplots(1, 3, figsize=(13.5, 4.0), layout="constrained")
    _parameter_plane(axes[0], record)
    for ax, pair in zip(axes[1:], ("AB", "CD")):
        _densities(ax, record, pair)
        row = table.loc[pair]
        ax.set_title(f"{pair[0]} and {pair[1]}: KL({pair[0]}‖{pair[1]}) = {row['kl_forward']:.3f}, "
                     f"intervals' overlap {row['interval_overlap']:.0%}", fontsize=10)
    ab, cd = table.loc["AB"], table.loc["CD"]
    mass = f"{float(record['interval_mass']):.0%}"
    caption = (f"{job.caption} Both pairs are 1 apart in (μ, σ²); as distributions A and B are close and C and D "
               f"far: KL(A‖B) = {ab['kl_forward']:.4f}, KL(B‖A) = {ab['kl_backward']:.4f}, KL(C‖D) = KL(D‖C) = "
               f"{cd['kl_forward']:.4f} nats; the {mass} central intervals (μ ± 1.96σ) overlap by "
               f"{ab['interval_overlap']:.0%} (A, B) and {cd['interval_overlap']:.0%} (C, D) of their union, and "
               f"one sample tells A from B with accuracy {ab['bayes_accuracy']:.3f}, C from D with "
               f"{cd['bayes_accuracy']:.3f}. f^D = f_(1/2, 1−√(3/4)) is garbled in the thesis text: C's variance "
               f"and the opposite mean, which d(f^C, f^D) = 1 forces. The caption's 'left plot' and 'middle plot' "
               f"mean the middle (A, B) and right (C, D) panels here.")
    save_figure(fig, job.png_path, caption, job.data_source)


# --- Fig 2.2: tangent spaces and learning paths (a drawing) -----------------------------------------

MANIFOLD_GREY, TANGENT_BLUE, PATH_COLOURS = "0.55", "#2c6fbb", ("#c0392b", "#7d3c98")


def manifold_height(u, v):
    """The function manifold F drawn as a curved sheet over a 2-D parameter space (u, v)."""
    return 0.55 * np.sin(1.1 * u) * np.cos(0.8 * v) + 0.08 * u * v


def manifold_point(u: float, v: float) -> np.ndarray:
    return np.array([u, v, manifold_height(u, v)])


def tangent_vectors(u: float, v: float, step: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    """∂f_w/∂w₁ and ∂f_w/∂w₂: the sheet's derivatives along each parameter."""
    point = manifold_point(u, v)
    return ((manifold_point(u + step, v) - point) / step, (manifold_point(u, v + step) - point) / step)


def draw_manifold(ax) -> None:
    u, v = np.meshgrid(np.linspace(-2, 2, 40), np.linspace(-2, 2, 40))
    ax.plot_surface(u, v, manifold_height(u, v), color="0.85", alpha=0.45, edgecolor="0.6", linewidth=0.2,
                    rstride=2, cstride=2, shade=False)
    ax.text(1.9, -2.2, manifold_height(1.9, -2.2) + 0.25, r"$\mathcal{F}$", fontsize=14, color="0.3")
    ax.set(xlim=(-2, 2), ylim=(-2, 2), zlim=(-0.9, 0.9))
    ax.set_box_aspect((1, 1, 0.45), zoom=1.0)
    ax.set_axis_off()
    ax.view_init(elev=30, azim=-60)


def draw_tangent_space(ax, u: float, v: float, label: str) -> None:
    """The plane through f_w spanned by the two tangent vectors, with the vectors themselves."""
    point = manifold_point(u, v)
    d_u, d_v = tangent_vectors(u, v)
    a, b = np.meshgrid(np.linspace(-0.55, 0.55, 2), np.linspace(-0.55, 0.55, 2))
    plane = point[:, None, None] + a * d_u[:, None, None] + b * d_v[:, None, None]
    ax.plot_surface(*plane, color=TANGENT_BLUE, alpha=0.3, shade=False)
    for vector in (d_u, d_v):
        ax.quiver(*point, *(0.5 * vector), color=TANGENT_BLUE, linewidth=1.6, arrow_length_ratio=0.25)
    ax.scatter(*point, color="black", s=18, depthshade=False)
    ax.text(*(point + np.array([-0.25, 0.0, 0.12])), label, fontsize=11, ha="right")


def learning_path(start: tuple[float, float], end: tuple[float, float], bend: float, steps: int = 7) -> np.ndarray:
    """Parameter iterates w(0), ..., w(T) along a bent line from start to end, lifted onto the manifold."""
    t = np.linspace(0, 1, steps)
    start, end = np.asarray(start), np.asarray(end)
    normal = np.array([-(end - start)[1], (end - start)[0]])
    uv = start + t[:, None] * (end - start) + bend * np.sin(np.pi * t)[:, None] * normal
    return np.stack([manifold_point(u, v) for u, v in uv])


def tangent_spaces_panel(ax) -> None:
    draw_manifold(ax)
    draw_tangent_space(ax, -1.1, 0.9, r"$f_{\mathbf{w}}$")
    draw_tangent_space(ax, 1.1, -1.0, r"$f_{\mathbf{w}'}$")
    ax.text2D(0.5, 0.9, r"tangent spaces $\mathcal{T}_{\mathbf{w}}\mathcal{F}$ = span of "
              r"$\partial f_{\mathbf{w}} / \partial w_i$", transform=ax.transAxes, ha="center", fontsize=11)


def learning_paths_panel(ax) -> None:
    """Two paths of iterates from the same f_w(0) to the same f_w(T), bent differently."""
    draw_manifold(ax)
    start, end = (-1.5, -1.2), (1.3, 1.2)
    names = ("one algorithm's iterates", "another algorithm's iterates")
    for bend, colour, name in zip((0.35, -0.3), PATH_COLOURS, names):
        path = learning_path(start, end, bend)
        ax.plot(*path.T, color=colour, linewidth=1.6, marker="o", markersize=3.5, label=name)
    for uv, label in ((start, r"$f_{\mathbf{w}^{(0)}}$"), (end, r"$f_{\mathbf{w}^{(T)}}$")):
        ax.text(*(manifold_point(*uv) + np.array([0, 0, 0.25])), label, ha="center", fontsize=11)
    ax.legend(loc="lower left", fontsize=9, frameon=False)
    ax.text2D(0.5, 0.9, "different learning paths in the function manifold", transform=ax.transAxes,
              ha="center", fontsize=11)


def draw_fig_2_2(png_path) -> None:
    """Fig 2.2: (left) tangent spaces of the function manifold, (right) different learning paths on it."""
    apply_style()
    fig = plt.figure(figsize=(11, 4.2), layout="constrained")
    # computed_zorder=False draws in the order added: matplotlib's depth sorting mixes up crossing surfaces.
    tangent_spaces_panel(fig.add_subplot(1, 2, 1, projection="3d", computed_zorder=False))
    learning_paths_panel(fig.add_subplot(1, 2, 2, projection="3d", computed_zorder=False))
    caption = ("Fig 2.2: (left) the tangent space at a point f_w of the function manifold F, spanned by the "
               "derivatives ∂f_w/∂w_i, drawn at two points; (right) two learning paths f_w(0), ..., f_w(T) "
               "through the manifold, the functions visited by successive parameter iterates. Drawn from the "
               "caption and §2.4: the thesis's own picture is not in its text, so the sheet, the points and the "
               "paths here are chosen for illustration only.")
    save_figure(fig, png_path, caption, "a drawing (no data)")
