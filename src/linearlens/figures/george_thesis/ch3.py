"""Figures for Chapter 3 (NNGeometry). Here: Fig 3.1 (the code listing, typeset) and Fig 3.2 (the schematic
of NNGeometry's components), both drawn. To come: Figs 3.3-3.7 (issue 26)."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from ..style import apply_style, save_figure

# Fig 3.1 as the thesis prints it: the same lines for two representations of the FIM. Line 3, the
# representation, is the one difference that changes the computation.
LISTING_COLUMNS = {
    "PMatKFAC": ("# using a KFAC Fisher", "F_kfac"),
    "PMatDense": ("# using implicit computation", "F_full"),
}
REPRESENTATION_LINE = 3


def listing_lines(representation: str, name: str) -> list[str]:
    indent = " " * (len(name) + 7)
    return [f"{name} = FIM(model=model,", f"{indent}loader=loader,", f"{indent}representation={representation},",
            f"{indent}n_output=10)", "", "v = PVector.from_model(model)", "", f"vTMv = {name}.vTMv(v)"]


LISTING_LINE_HEIGHT, LISTING_TOP, LISTING_WIDTH = 0.1, 0.86, 0.465  # in axes fractions


def draw_listing_column(ax, x: float, comment: str, lines: list[str]) -> None:
    """One column of the listing: a comment header, then numbered lines in a grey frame."""
    frame_height = len(lines) * LISTING_LINE_HEIGHT + 0.1
    ax.add_patch(FancyBboxPatch((x - 0.01, LISTING_TOP + 0.08 - frame_height), LISTING_WIDTH, frame_height,
                                boxstyle="round,pad=0.01", facecolor="0.97", edgecolor="0.8"))
    ax.text(x + 0.04, LISTING_TOP + 0.04, comment, family="monospace", fontsize=10, color="#2e7d32", va="center")
    for number, line in enumerate(lines, start=1):
        y = LISTING_TOP - number * LISTING_LINE_HEIGHT + 0.04
        if number == REPRESENTATION_LINE:
            ax.add_patch(plt.Rectangle((x + 0.03, y - LISTING_LINE_HEIGHT / 2), LISTING_WIDTH - 0.05,
                                       LISTING_LINE_HEIGHT, facecolor="#fff2b3", edgecolor="none"))
        ax.text(x, y, f"{number}", family="monospace", fontsize=9, color="0.55", va="center")
        ax.text(x + 0.04, y, line, family="monospace", fontsize=10, va="center")


def draw_fig_3_1(png_path) -> None:
    """Fig 3.1: vᵀFv with NNGeometry, the same code for a KFAC and a dense (implicit) FIM."""
    apply_style()
    fig = plt.figure(figsize=(10, 3.2))
    ax = fig.add_axes((0.01, 0.0, 0.98, 1.0))
    ax.set(xlim=(0, 1), ylim=(0.0, 1))
    ax.axis("off")
    for x, (representation, (comment, name)) in zip((0.015, 0.515), LISTING_COLUMNS.items()):
        draw_listing_column(ax, x, comment, listing_lines(representation, name))
    caption = ("Fig 3.1: computing the vector-Fisher-vector product vᵀFv for a 10-class model with NNGeometry: "
               "the same code serves two representations of the FIM (KFAC, left; dense, computed implicitly, "
               "right) although they compute very differently. Typeset from the thesis's listing, with the one "
               "line that differs in substance (the representation) highlighted; 'v =' on line 6 of the right "
               "column, lost in the thesis's text extraction, is restored. The drawing does not run the code: "
               "the listing uses the thesis-era NNGeometry API, and keeping it runnable is issue 26's.")
    save_figure(fig, png_path, caption, "a drawing (no data)")


# Fig 3.2: three groups, left to right: generators populate representations, which implement abstract objects.
JACOBIAN_GENERATOR = "Jacobian generator\nper-example gradients from\nPyTorch hooks (Ds, a → bmm)"
REPRESENTATIONS = ["PMatDense / FMatDense", "PMatDiag", "PMatBlockDiag", "PMatQuasiDiag", "PMatKFAC",
                   "PMatEKFAC", "PMatLowRank", "PMatImplicit"]
ABSTRACT_OBJECTS = [r"PVector: $\delta\mathbf{w}$ (parameter space)",
                    r"FVector: $\delta f(X)$ (function space)",
                    r"PMat: $F_\mathbf{w}$, metrics on parameters",
                    r"FMat: $K_\mathbf{w}$, NTK Gram matrices",
                    r"PushForward: $J$ (parameters → functions)",
                    r"PullBack: $J^\top$ (functions → parameters)",
                    "LayerCollection: which layers\nspan the parameter space"]
GROUP_COLOURS = {"generators": "#fde2c8", "representations": "#d6e6f5", "abstract": "#dcefd9"}


def draw_box(ax, x: float, y: float, width: float, height: float, text: str, colour: str, fontsize=9.5) -> None:
    ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height, boxstyle="round,pad=0.05",
                                facecolor=colour, edgecolor="0.45", linewidth=0.9))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, linespacing=1.3)


def draw_arrow(ax, start, end, label: str = "") -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=16, color="0.3", linewidth=1.4))
    ax.text((start[0] + end[0]) / 2, start[1] + 0.25, label, ha="center", fontsize=9, style="italic", color="0.3")


def draw_column(ax, x: float, width: float, labels: list[str], colour: str, spacing: float, top: float,
                height: float) -> None:
    for row, label in enumerate(labels):
        draw_box(ax, x, top - row * spacing, width, height, label, colour)


def draw_fig_3_2(png_path) -> None:
    """Fig 3.2: NNGeometry's components: generators populate concrete representations of abstract objects."""
    apply_style()
    fig = plt.figure(figsize=(12, 5.6))
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set(xlim=(0, 12), ylim=(-0.1, 7.6))
    ax.axis("off")
    for x, title in [(1.6, "Generators"), (5.3, "Concrete representations"), (9.6, "Abstract objects")]:
        ax.text(x, 7.3, title, ha="center", fontsize=12, fontweight="bold")
    draw_box(ax, 1.6, 5.0, 2.6, 0.7, "model (torch.nn.Module)\n+ data loader", "0.93")
    draw_arrow(ax, (1.6, 4.55), (1.6, 4.0))
    draw_box(ax, 1.6, 3.35, 2.8, 1.0, JACOBIAN_GENERATOR, GROUP_COLOURS["generators"])
    draw_column(ax, 5.3, 2.6, REPRESENTATIONS, GROUP_COLOURS["representations"], 0.78, 6.55, 0.5)
    draw_column(ax, 9.6, 3.6, ABSTRACT_OBJECTS, GROUP_COLOURS["abstract"], 0.9, 6.55, 0.58)
    draw_arrow(ax, (3.1, 3.35), (3.85, 3.35), "populate")
    draw_arrow(ax, (6.75, 3.35), (7.6, 3.35), "implement")
    ax.text(7.45, 0.3, "one interface for every representation:\nmv, vTMv, solve, trace, frobenius_norm, "
            "get_dense_tensor, get_diag", ha="center", va="center", fontsize=9.5, family="monospace", color="0.25")
    caption = ("Fig 3.2: schematic of NNGeometry's main components: abstract mathematical objects (parameter- and "
               "function-space vectors, the FIM and other parameter-space metrics, NTK Gram matrices, "
               "push-forwards and pull-backs) are stored by concrete representations (dense, diagonal, "
               "block-diagonal, quasi-diagonal, KFAC, EKFAC, low-rank, implicit), which generators populate from "
               "a model and a data set. Laid out from the text of §3.3.2; the thesis's own diagram is not in its "
               "text, so its layout and any components it shows beyond §3.3.2 are not reproduced.")
    save_figure(fig, png_path, caption, "a drawing (no data)")
