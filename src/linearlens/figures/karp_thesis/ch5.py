"""Chapter 5 and Appendix C, landscape-aware growing of language models: the drawing of Fig 5.1
here; the plots of Figs 5.2-5.4 and Tables 5.1, 5.2, C.1, C.2 are filled by issue 29."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import Polygon, Rectangle

from ..style import apply_style, save_figure

OTHER_GREY, CHOSEN_BLUE, NEW_ORANGE = "0.88", "#aecbe8", "#f4b183"
BOX_WIDTH, BOX_HEIGHT, SLOT = 1.0, 0.5, 0.62  # a layer's box and the vertical pitch between layers
BEFORE_X, AFTER_X = 0.0, 2.3  # left edges of the two stacks in each panel
GROWN_LAYERS = 9  # the examples' 6 -> 9 layers set the height of every panel
HEADER_Y = (GROWN_LAYERS - 1) * SLOT + BOX_HEIGHT + 0.25


def grown_layer_order(num_layers: int, grown: int, start: int, block_size: int) -> list[tuple[int, bool]]:
    """The grown network's layers from the input up, as (source layer, is new), in the thesis's
    1-indexed numbering (Sec 5.2.1): the ``grown`` layers from ``start`` are cut into blocks of
    ``block_size`` and each block is followed by its new layers (copies, or random ones in
    the same places)."""
    chosen = list(range(start, start + grown))
    order = [(layer, False) for layer in range(1, start)]
    for first in range(0, grown, block_size):
        block = chosen[first:first + block_size]
        order += [(layer, False) for layer in block] + [(layer, True) for layer in block]
    return order + [(layer, False) for layer in range(start + grown, num_layers + 1)]


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
