"""Figures for Chapter 2 (background). Here: Fig 2.2 (tangent spaces and learning paths in the function
manifold), drawn. To come: Fig 2.1 (the four Gaussians, analytic; issue 26)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..style import apply_style, save_figure

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
