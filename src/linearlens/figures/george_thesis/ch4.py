"""Figures for Chapter 4 (EKFAC) and appendix A. Here: Fig 4.1, a cartoon drawn from its caption. To come:
Fig 4.2 (issue 26), Figs 4.3-4.6 and A.1-A.5 (issue 27)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Ellipse

from ..style import apply_style, save_figure

# The cartoon's exact Fisher: a 2-D covariance whose eigenbasis is tilted off the parameter axes.
FISHER_ANGLE_DEG = 30.0
FISHER_EIGENVALUES = np.array([4.0, 0.5])
# The Kronecker-factored eigenbasis approximates the eigenbasis: close to it, not equal.
KFE_ANGLE_DEG = 42.0
# KFAC's scales are a Kronecker product S_A ⊗ S_B, not the variances along the KFE: one too short, one too long.
KFAC_STDS = np.array([1.5, 1.1])

ELLIPSE_GREEN, DIAGONAL_ORANGE, KFAC_BLUE, EKFAC_PURPLE = "#2ca02c", "#ff7f0e", "#1f77b4", "#9467bd"


def rotation(angle_deg: float) -> np.ndarray:
    """Columns: the unit vectors of a basis turned by ``angle_deg`` from the parameter axes."""
    angle = np.deg2rad(angle_deg)
    return np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])


def fisher_covariance() -> np.ndarray:
    eigenbasis = rotation(FISHER_ANGLE_DEG)
    return eigenbasis @ np.diag(FISHER_EIGENVALUES) @ eigenbasis.T


def std_along(basis: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """The standard deviation along each basis vector: sqrt(uᵀ C u), the half-width of the ellipse there."""
    return np.sqrt(np.einsum("ij,ik,kj->j", basis, covariance, basis))


def rescaling_panel(ax, basis: np.ndarray, stds: np.ndarray, colour: str, title: str, subtitle: str) -> None:
    """The Fisher ellipse, and per basis vector an arrow as long as the scale used along it. The dotted line
    through the arrow's tip is perpendicular to it: it touches the ellipse only when the scale is the true
    standard deviation along that direction."""
    ax.add_patch(Ellipse((0, 0), *(2 * np.sqrt(FISHER_EIGENVALUES)), angle=FISHER_ANGLE_DEG, facecolor="#2ca02c22",
                         edgecolor=ELLIPSE_GREEN, linewidth=1.8))
    for direction, std in zip(basis.T, stds):
        normal = np.array([-direction[1], direction[0]])
        for sign in (1, -1):
            tip = sign * std * direction
            ax.annotate("", xy=tip, xytext=(0, 0), arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 1.8,
                                                               "shrinkA": 0, "shrinkB": 0})
            ax.plot(*np.stack([tip - 0.7 * normal, tip + 0.7 * normal]).T, color=colour, linestyle=":", lw=1.1)
    ax.axhline(0, color="0.75", lw=0.8, zorder=0)
    ax.axvline(0, color="0.75", lw=0.8, zorder=0)
    ax.text(2.6, -0.1, r"$w_1$", fontsize=9, color="0.45", ha="right", va="top")
    ax.text(0.1, 2.1, r"$w_2$", fontsize=9, color="0.45", va="top")
    ax.set(xlim=(-2.7, 2.7), ylim=(-2.2, 2.2), aspect="equal", xticks=[], yticks=[])
    ax.grid(False)
    ax.set_title(title, fontsize=11, color=colour, fontweight="bold")
    ax.set_xlabel(subtitle, fontsize=8.5)


def draw_fig_4_1(png_path) -> None:
    """Fig 4.1: rescaling by the exact Fisher, its diagonal, KFAC and EKFAC, on one 2-D covariance."""
    apply_style()
    covariance = fisher_covariance()
    eigenbasis, parameter_basis, kfe = rotation(FISHER_ANGLE_DEG), np.eye(2), rotation(KFE_ANGLE_DEG)
    panels = [
        (eigenbasis, np.sqrt(FISHER_EIGENVALUES), ELLIPSE_GREEN, "exact Fisher",
         "eigenbasis of F,\ntrue variances"),
        (parameter_basis, std_along(parameter_basis, covariance), DIAGONAL_ORANGE, "diagonal",
         "parameter axes,\ntrue variances along them"),
        (kfe, KFAC_STDS, KFAC_BLUE, "KFAC", "Kronecker-factored eigenbasis,\n"
         r"scales $S_A \otimes S_B$ (not the variances)"),
        (kfe, std_along(kfe, covariance), EKFAC_PURPLE, "EKFAC",
         "Kronecker-factored eigenbasis,\n" r"variances re-estimated ($s^*$)"),
    ]
    fig, axes = plt.subplots(1, 4, figsize=(12, 3.7), layout="constrained")
    for ax, panel in zip(axes, panels):
        rescaling_panel(ax, *panel)
    caption = ("Fig 4.1: cartoon of the rescaling done by different preconditioners. Each rescales the gradient "
               "along a basis; arrow length = square root of the downscaling. The exact Fisher uses the "
               "eigenvectors of the covariance (green ellipse); the diagonal uses the parameter axes with the "
               "variances measured along them (arrows reach the ellipse's tangent); KFAC uses directions close "
               "to the eigenvectors but scales that miss the ellipse; EKFAC keeps KFAC's basis and re-estimates "
               "the variances along it. Drawn from the caption on one chosen 2-D covariance and basis angles (the "
               "thesis's own ellipse and angles are not in its text); the dotted lines perpendicular to each "
               "arrow are added here to show whether its scale touches the ellipse.")
    save_figure(fig, png_path, caption, "a drawing (no data)")
