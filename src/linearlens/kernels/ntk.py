"""Empirical neural tangent kernel K(x, x') = J(x) J(x')ᵀ of any ``torch.nn.Module``, exactly.

The layer-wise identity: the gradient of output a with respect to a layer's parameters is built
from that layer's input and the gradient of output a with respect to the layer's output; one
forward pass and one backward pass per output give both for a whole batch. The Gram is a sum over
layers, and the network's full Jacobian is never formed:

* Linear on (n, features) inputs: K = (G₁G₂ᵀ) ⊙ (H₁H₂ᵀ + 1), G the output gradients and H the
  inputs; no per-example gradient is formed at all;
* Conv1d/Conv2d, Linear on sequences, BatchNorm/LayerNorm/GroupNorm affine parameters, Embedding:
  the layer's per-example gradients, contracted from its inputs and output gradients;
* any other module that owns parameters: its per-example Jacobian from ``torch.func`` (vmap over
  jacrev), so the answer is exact for every architecture.

The per-layer inputs and output gradients come from ``linearlens.capture``, which the curvature
matrices share. Examples are independent only when BatchNorm uses running statistics, so BatchNorm
must be in eval mode (checked). Work is chunked over examples, so large Grams fit in memory.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor, nn

from .. import capture
from ..capture import DenseFactor, OuterFactor
from ..parameters import trainable_parameters
from ..train.runtime import full_float32

Factor = OuterFactor | DenseFactor

# The layer factors of all examples held at once (one group of layers at a time).
FACTOR_MEMORY_BYTES = 4 * 2**30
# One forward and backward pass over a chunk of examples: larger passes fault in more fresh
# memory than they save in per-pass work (ResNet-20 on a 2-core CPU).
PASS_MEMORY_BYTES = 2**30


def layer_factors(model: nn.Module, x: Tensor, outputs: list[int],
                  only: set[str] | None = None) -> dict[str, OuterFactor | DenseFactor]:
    """Tangent factors of every layer that owns trainable parameters (or of the layers named in
    ``only``), for the examples ``x`` and the chosen output indices; keyed by module name."""
    return capture.layer_factors(model, x, capture.one_hot_seeds(outputs), only, outputs=outputs)


# --- Grams from factors ------------------------------------------------------------------------

def factor_gram(a, b, trace: bool) -> Tensor:
    """Σ over parameters of one layer: (n₁, c, n₂, c) blocks, or their trace over outputs (n₁, n₂)."""
    if isinstance(a, OuterFactor):
        inputs = a.inputs @ b.inputs.T
        if trace:
            return torch.einsum("iao,jao->ij", a.output_grads, b.output_grads) * inputs
        return torch.einsum("iao,jbo->iajb", a.output_grads, b.output_grads) * inputs[:, None, :, None]
    if trace:
        return torch.einsum("iap,jap->ij", a.grads, b.grads)
    return torch.einsum("iap,jbp->iajb", a.grads, b.grads)


def factor_diagonal(a, trace: bool) -> Tensor:
    """K(x, x) for each example: (n, c, c), or its trace over outputs (n,)."""
    if isinstance(a, OuterFactor):
        inputs = (a.inputs * a.inputs).sum(1)
        if trace:
            return (a.output_grads ** 2).sum((1, 2)) * inputs
        return torch.einsum("iao,ibo->iab", a.output_grads, a.output_grads) * inputs[:, None, None]
    if trace:
        return (a.grads ** 2).sum((1, 2))
    return torch.einsum("iap,ibp->iab", a.grads, a.grads)


def _chunks(x: Tensor, size: int) -> list[tuple[slice, Tensor]]:
    return [(slice(i, i + size), x[i:i + size]) for i in range(0, len(x), size)]


def _output_indices(model: nn.Module, x: Tensor, output) -> tuple[list[int], bool]:
    with torch.no_grad():
        n_outputs = capture.flat_outputs(model(x[:1])).shape[1]
    if output in ("full", "trace"):
        return list(range(n_outputs)), output == "trace"
    if isinstance(output, int) and 0 <= output < n_outputs:
        return [output], True
    raise ValueError(f"output must be 'full', 'trace' or an index below {n_outputs}, got {output!r}")


def layer_groups(model: nn.Module, x: Tensor, outputs: list[int], n_examples: int,
                 memory_bytes: int) -> list[set[str]]:
    """Consecutive layers grouped so that one group's factors for ``n_examples`` examples fit in
    ``memory_bytes`` (a layer larger than that is a group of its own)."""
    per_example = {name: f.nbytes() for name, f in layer_factors(model, x[:1], outputs).items()}
    groups: list[set[str]] = [set()]
    used = 0
    for name, size in per_example.items():
        size *= n_examples
        if groups[-1] and used + size > memory_bytes:
            groups.append(set())
            used = 0
        groups[-1].add(name)
        used += size
    return groups


def _pass_size(model, x, outputs, memory_bytes) -> int:
    return capture.auto_chunk_size(model, x, len(outputs), min(memory_bytes, PASS_MEMORY_BYTES))


def _factor_slice(factor, span: slice):
    if isinstance(factor, OuterFactor):
        return OuterFactor(factor.output_grads[span], factor.inputs[span])
    return DenseFactor(factor.grads[span])


class _Piece(NamedTuple):
    """Where one part of a layer's tangent features goes: a factor (by key) and its columns."""

    part: str  # "outer", "weight" (an affine layer's weight), "bias" or "all" (every parameter)
    key: str
    columns: slice = slice(None)


def _group_factors(model, x, outputs, group, chunk_size, per_layer) -> dict[str, tuple[str, Factor]]:
    """Every example's factors for the layers in ``group``, keyed, each with the Gram it adds to
    (the layer's own with ``per_layer``, else "all"); computed chunk by chunk into tensors
    allocated once, each layer's gradients written in place by the product that forms them.

    An affine layer's weight gradients are a factor of their own (the product writes them
    straight into it); the narrow rest (biases, normalisation layers, torch.func's layers) sit
    side by side in one factor per Gram, so each costs no matrix product of its own."""
    factors: dict[str, tuple[str, Factor]] = {}
    plan: dict[str, list[_Piece]] = {}
    scratch = capture.Scratch()
    for span, part in _chunks(x, chunk_size):
        items = capture.layer_captures(model, part, capture.one_hot_seeds(outputs), group, outputs, scratch)
        if not factors:
            plan, factors = _allocated(items, len(x), per_layer)
        with torch.no_grad():  # copies and products, not a graph
            for name, item in items.items():
                for piece in plan[name]:
                    _write(item, piece, factors[piece.key][1], span, scratch)
    return factors


def _write(item, piece: _Piece, factor: Factor, span: slice, scratch: capture.Scratch) -> None:
    if piece.part == "outer":
        outer = capture.outer_form(item)
        factor.output_grads[span] = outer.output_grads
        factor.inputs[span] = outer.inputs
        return
    target = factor.grads[span, :, piece.columns]
    if piece.part == "weight":
        capture.write_weight_gradients(item, target, scratch)
    elif piece.part == "bias":
        target.copy_(capture.bias_gradients(item))
    elif isinstance(item, DenseFactor):
        target.copy_(item.grads)
    else:
        capture.write_captured_gradients(item, target)


def _allocated(items, n: int, per_layer: bool):
    """Each layer's pieces, and the group's factors for n examples they are written into."""
    plan: dict[str, list[_Piece]] = {}
    factors: dict[str, tuple[str, Factor]] = {}
    narrow: dict[str, int] = {}  # the narrow factor of each Gram: its width so far
    reference = next(iter(items.values()))
    reference = reference.grads if isinstance(reference, DenseFactor) else reference.output_grads[0]
    k = reference.shape[1]

    def narrow_piece(name: str, part: str, width: int) -> _Piece:
        gram = name if per_layer else "all"
        key = f"{gram} (narrow)"
        start = narrow.get(key, 0)
        narrow[key] = start + width
        factors[key] = (gram, None)
        return _Piece(part, key, slice(start, start + width))

    for name, item in items.items():
        gram = name if per_layer else "all"
        outer = capture.outer_form(item) if isinstance(item, capture.Captured) else None
        if outer is not None:
            factors[name] = (gram, OuterFactor(outer.output_grads.new_empty(n, *outer.output_grads.shape[1:]),
                                               outer.inputs.new_empty(n, *outer.inputs.shape[1:])))
            plan[name] = [_Piece("outer", name)]
        elif isinstance(item, capture.Captured) and capture.is_affine(item.module):
            params = capture.trainable(item.module)
            plan[name] = []
            if "weight" in params:
                key = f"{name}.weight"
                factors[key] = (gram, DenseFactor(reference.new_empty(n, k, params["weight"].numel())))
                plan[name].append(_Piece("weight", key))
            if "bias" in params:
                plan[name].append(narrow_piece(name, "bias", params["bias"].numel()))
        else:
            width = item.grads.shape[2] if isinstance(item, DenseFactor) else capture.captured_width(item)
            plan[name] = [narrow_piece(name, "all", width)]
    for key, width in narrow.items():
        factors[key] = (factors[key][0], DenseFactor(reference.new_empty(n, k, width)))
    return plan, factors


def block_rows(n1: int, n2: int, outputs: int, itemsize: int, symmetric: bool) -> list[tuple[slice, slice]]:
    """The Gram computed one block row at a time: each a matrix product of a few examples' factors
    with those of every column example (for a Gram of x with itself, only the columns from the
    block's first row on: the lower triangle is mirrored, not computed).

    A symmetric Gram in b block rows computes (1 + 1/b)/2 of the whole, while a block row of
    fewer product rows (examples × outputs) runs further below the hardware's matrix-product
    rate (each product packs the whole column operand again). So block rows of GRAM_BLOCK_ROWS
    product rows, but no fewer than GRAM_MIN_BLOCKS of them, and no more than GRAM_BLOCKS with
    many examples; each block within GRAM_BLOCK_BYTES. (ResNet-20, 10 outputs, 2 CPU cores: at
    n = 500 the Gram took 1.14× its floor in 520-row blocks against 1.21× in 260-row ones; at
    n = 200, 4 block rows of 520 were no faster than 8 of 250.)"""
    size = max(-(-GRAM_BLOCK_ROWS // outputs), -(-n1 // GRAM_BLOCKS))
    size = min(size, -(-n1 // GRAM_MIN_BLOCKS))
    size = max(1, min(size, GRAM_BLOCK_BYTES // (outputs * n2 * outputs * itemsize)))
    rows = [slice(i, min(i + size, n1)) for i in range(0, n1, size)]
    return [(r, slice(r.start if symmetric else 0, n2)) for r in rows]


GRAM_BLOCK_ROWS = 512
GRAM_MIN_BLOCKS = 8
GRAM_BLOCKS = 64
GRAM_BLOCK_BYTES = 2**28


@full_float32()
def empirical_ntk(model: nn.Module, x1: Tensor, x2: Tensor | None = None, *,
                  output: str | int = "full", per_layer: bool = False,
                  chunk_size: int | None = None,
                  memory_bytes: int = FACTOR_MEMORY_BYTES) -> Tensor | dict[str, Tensor]:
    """The empirical NTK Gram between ``x1`` and ``x2`` (``x1`` with itself when omitted).

    output: "full" gives (n₁, c, n₂, c) blocks; an index a gives K_aa (n₁, n₂); "trace" gives
    Σ_a K_aa (n₁, n₂). per_layer: a dict from module name to that layer's Gram (they sum to K).

    Memory, besides the Gram itself: the layers are taken in groups whose factors for all
    examples fit in ``memory_bytes``; each group costs one forward and backward pass over the
    examples, in chunks of ``chunk_size`` (by default as many as fit in ``PASS_MEMORY_BYTES``),
    and no factor is ever computed twice. Only the blocks on or above the diagonal of a symmetric Gram
    are computed.
    """
    capture.check_independent_examples(model)
    outputs, trace = _output_indices(model, x1, output)
    symmetric = x2 is None
    x2 = x1 if symmetric else x2
    chunk_size = chunk_size or _pass_size(model, x1, outputs, memory_bytes)
    n_examples = len(x1) + (0 if symmetric else len(x2))
    gram_shape = (len(x1), len(x2)) if trace else (len(x1), len(outputs), len(x2), len(outputs))
    grams: dict[str, Tensor] = {}
    for group in layer_groups(model, x1, outputs, n_examples, memory_bytes):
        rows = _group_factors(model, x1, outputs, group, chunk_size, per_layer)
        cols = rows if symmetric else _group_factors(model, x2, outputs, group, chunk_size, per_layer)
        for key, pairs in _by_gram(rows, cols).items():
            if key not in grams:
                grams[key] = x1.new_zeros(gram_shape, dtype=_dtype_of(pairs[0][0]))
            itemsize = grams[key].element_size()
            for row_span, col_span in block_rows(len(x1), len(x2), len(outputs), itemsize, symmetric):
                block = _block_sum(pairs, row_span, col_span, trace)
                if symmetric:
                    _add_upper(grams[key], row_span, block, trace)
                else:
                    _add(grams[key], row_span, col_span, block, trace, mirror=False)
        del rows, cols
    return grams if per_layer else grams["all"]


def _by_gram(rows, cols) -> dict[str, list[tuple[Factor, Factor]]]:
    """The (row, column) factor pairs whose Grams sum to each requested Gram."""
    pairs: dict[str, list[tuple[Factor, Factor]]] = {}
    for key, (gram, factor) in rows.items():
        pairs.setdefault(gram, []).append((factor, cols[key][1]))
    return pairs


def _block_sum(pairs, rows: slice, cols: slice, trace: bool) -> Tensor:
    """One block of the Gram, Σ over factor pairs, accumulated in place: the products of the
    per-example gradients add into the block directly (a matrix product with β = 1)."""
    block = None
    for a, b in pairs:
        a, b = _factor_slice(a, rows), _factor_slice(b, cols)
        if isinstance(a, DenseFactor) and not trace:
            left, right = a.grads.flatten(0, 1), b.grads.flatten(0, 1).T
            if block is None:
                block = (left @ right).view(*a.grads.shape[:2], *b.grads.shape[:2])
            else:
                block.view(left.shape[0], right.shape[1]).addmm_(left, right)
        else:
            part = factor_gram(a, b, trace)
            block = part if block is None else block.add_(part)
    return block


def _dtype_of(factor) -> torch.dtype:
    return factor.inputs.dtype if isinstance(factor, OuterFactor) else factor.grads.dtype


def _transposed(block: Tensor, trace: bool) -> Tensor:
    return block.T if trace else block.permute(2, 3, 0, 1)


def _add_upper(gram, rows: slice, block: Tensor, trace: bool) -> None:
    """A block row of a symmetric Gram, columns from rows.start on: its square part made exactly
    symmetric (as eigensolvers expect), the rest added and mirrored below the diagonal."""
    size = rows.stop - rows.start
    square = block[:, :size] if trace else block[:, :, :size]
    _add(gram, rows, rows, (square + _transposed(square, trace)) / 2, trace, mirror=False)
    if rows.stop < gram.shape[0]:
        right = block[:, size:] if trace else block[:, :, size:]
        _add(gram, rows, slice(rows.stop, gram.shape[0]), right, trace, mirror=True)


def _add(gram, rows, cols, block, trace, mirror):
    if trace:
        gram[rows, cols] += block
    else:
        gram[rows, :, cols, :] += block
    if mirror:
        _add(gram, cols, rows, _transposed(block, trace), trace, mirror=False)


@full_float32()
def ntk_block(model: nn.Module, x: Tensor, columns: Tensor, *, output: str | int = "full") -> Tensor:
    """K(x, x[columns]): the Gram between a set and a subset of it (the per-step kernel block of
    a training batch against all tracked points), from one forward and backward pass over ``x``.
    Unchunked: for the small networks whose training is tracked step by step."""
    capture.check_independent_examples(model)
    outputs, trace = _output_indices(model, x, output)
    blocks = [factor_gram(f, _factor_slice(f, columns), trace)
              for f in layer_factors(model, x, outputs).values()]
    return sum(blocks).detach()


@full_float32()
def ntk_diagonal(model: nn.Module, x: Tensor, *, output: str | int = "full",
                 per_layer: bool = False, chunk_size: int | None = None,
                 memory_bytes: int = FACTOR_MEMORY_BYTES) -> Tensor | dict[str, Tensor]:
    """K(x, x) for each example alone: (n, c, c) for "full", (n,) for an index or "trace"."""
    capture.check_independent_examples(model)
    outputs, trace = _output_indices(model, x, output)
    chunk_size = chunk_size or _pass_size(model, x, outputs, memory_bytes)
    parts: dict[str, list[Tensor]] = {}
    for _, x_chunk in _chunks(x, chunk_size):
        for name, factor in layer_factors(model, x_chunk, outputs).items():
            parts.setdefault(name, []).append(factor_diagonal(factor, trace).detach())
    diagonals = {name: torch.cat(blocks) for name, blocks in parts.items()}
    return diagonals if per_layer else sum(diagonals.values())


# --- the reference route -----------------------------------------------------------------------

@full_float32()
def jacobian_from_factors(model: nn.Module, x: Tensor, output: str | int = "full") -> Tensor:
    """(n, c, P) per-example Jacobian (c = 1 for an output index) over every trainable parameter, in
    ``model.named_parameters()`` order, assembled from the layer factors (one forward and one
    backward pass; no vmap). For the small networks whose training is tracked step by step."""
    capture.check_independent_examples(model)
    outputs, _ = _output_indices(model, x, output)
    return capture.per_example_gradients(model, x, capture.one_hot_seeds(outputs), outputs=outputs)


@full_float32()
def per_example_jacobian(model: nn.Module, x: Tensor, chunk_size: int = 256) -> Tensor:
    """(n, c, P) Jacobian of the outputs over every trainable parameter. The plain route that
    ``empirical_ntk`` replaces: the tests' reference and the benchmark's baseline."""
    trainable = {name: p.detach() for name, p in trainable_parameters(model).items()}
    blocks = [capture.per_example_jacobians(model, part, trainable) for _, part in _chunks(x, chunk_size)]
    return torch.cat([torch.cat(list(block.values()), dim=2) for block in blocks])


@full_float32()
def ntk_by_jacobian(model: nn.Module, x1: Tensor, x2: Tensor | None = None,
                    chunk_size: int = 256) -> Tensor:
    """J(x₁) J(x₂)ᵀ as (n₁, c, n₂, c) from the materialised Jacobians."""
    j1 = per_example_jacobian(model, x1, chunk_size)
    j2 = j1 if x2 is None else per_example_jacobian(model, x2, chunk_size)
    return torch.einsum("iap,jbp->iajb", j1, j2)
