"""Fisher matrices F = (1/n) Σ_i Σ_k g_ik g_ikᵀ (``sources``) in every representation, built in
passes over the data, chunk by chunk, from the per-layer capture that the tangent kernels use.

``fisher(model, x, representation=...)`` is the entry point. The Kronecker factors and the EKFAC
eigenbasis and diagonal are the blocks' own attributes (``Kronecker.a``/``.b``,
``EigenKronecker.ua``/``.ub``/``.scales``), and ``kfe_diagonal`` re-estimates s* on other data, so
an optimiser reuses them.

Linear and convolution layers take their structure (quasi-diagonal arrows, KFAC, EKFAC); every
other layer (normalisation, embeddings, modules differentiated by torch.func) gets a dense block,
since those structures are not defined there.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.func import functional_call, jvp, vjp

from ..capture import (
    Captured,
    DenseFactor,
    Scratch,
    affine_terms,
    auto_chunk_size,
    captured_factor,
    check_independent_examples,
    flat_outputs,
    layer_captures,
    per_example_gradients,
    write_gradients,
)
from ..train.runtime import full_float32
from .layout import AffineForm, ParameterLayout
from .representations import (
    BlockDiagonal,
    CurvatureMatrix,
    Dense,
    Diagonal,
    EigenKronecker,
    Kronecker,
    LowRank,
    QuasiDiagonal,
)
from .sources import FisherSource

REPRESENTATIONS = ("dense", "diag", "block_diag", "quasi_diag", "kfac", "ekfac", "low_rank", "implicit")
# Examples per pass, by default: as many as fit here (larger passes fault in more fresh memory
# than they save in per-pass overhead on a ResNet; a small network takes all examples at once).
PASS_MEMORY_BYTES = 2**31


@full_float32()
def fisher(model: nn.Module, x: Tensor, labels: Tensor | None = None, *, representation: str,
           likelihood: str = "categorical", variant: str = "exact", samples: int = 1,
           seed: int = 0, chunk_size: int | None = None) -> CurvatureMatrix:
    """The Fisher matrix of ``model`` on the examples ``x`` (normalised by their number) in one of
    ``REPRESENTATIONS``; likelihood, variant, samples and seed as in ``FisherSource``; examples
    taken ``chunk_size`` at a time (by default as many as ``PASS_MEMORY_BYTES`` holds)."""
    return build(FisherSource(model, x, labels, likelihood, variant, samples, seed),
                 representation, chunk_size)


def build(source: FisherSource, representation: str, chunk_size: int | None = None) -> CurvatureMatrix:
    if representation not in REPRESENTATIONS:
        raise ValueError(f"representation must be one of {REPRESENTATIONS}, got {representation!r}")
    check_independent_examples(source.model)
    chunk_size = chunk_size or default_chunk_size(source)
    layout = ParameterLayout(source.model)
    if representation == "implicit":
        return Implicit(source, layout, chunk_size)
    if representation in ("dense", "low_rank"):
        rows = torch.cat([per_example_gradients(source.model, x, seeds).reshape(-1, layout.size)
                          for x, seeds in source.chunks(chunk_size)]) / source.n ** 0.5
        return Dense(rows.T @ rows) if representation == "dense" else LowRank(rows)
    blocks = _one_pass(source, layout, chunk_size, lambda layer, structured: _sums_for(
        representation, layer, structured))
    if representation == "diag":
        return Diagonal(torch.cat([blocks[layer.name].diag() for layer in layout.layers]))
    matrix = BlockDiagonal(layout, blocks)
    if representation == "ekfac":
        matrix = in_eigenbasis(matrix)
        refit_kfe_diagonal(matrix, source, chunk_size)
    return matrix


def default_chunk_size(source: FisherSource) -> int:
    return auto_chunk_size(source.model, source.x, source.seeds_per_example(), PASS_MEMORY_BYTES)


def refit_kfe_diagonal(matrix: BlockDiagonal, source: FisherSource, chunk_size: int | None = None) -> None:
    """EKFAC's s* re-estimated in place on ``source``'s examples, in each block's current KFE (the
    eigenbasis stays; the other layers' dense blocks are left as they are)."""
    chunk_size = chunk_size or default_chunk_size(source)
    kfe = {name: block for name, block in matrix.blocks.items() if isinstance(block, EigenKronecker)}
    sums = _one_pass(source, matrix.layout, chunk_size,
                     lambda layer, structured: _KfeDiagonalSums(kfe[layer.name]) if layer.name in kfe else None)
    for name, block in sums.items():
        kfe[name].scales = block.scales


def in_eigenbasis(matrix: BlockDiagonal) -> BlockDiagonal:
    """KFAC's blocks in their eigenbasis (s* = s_B ⊗ s_A until refitted: the same matrix); other
    blocks unchanged."""
    return BlockDiagonal(matrix.layout, {name: _eigenbasis(block) for name, block in matrix.blocks.items()})


def _eigenbasis(block: CurvatureMatrix) -> CurvatureMatrix:
    if not isinstance(block, Kronecker):
        return block
    sa, ua, sb, ub = block.eigen
    return EigenKronecker(block.form, ua, ub, torch.outer(sb, sa))


# --- one pass over the data, per-layer sums -----------------------------------------------------

def _one_pass(source, layout, chunk_size, sums_for) -> dict[str, CurvatureMatrix]:
    """Each layer's sums over all chunks, made into its block. ``sums_for(layer, structured)``
    picks the accumulator (None: leave the layer out); ``structured`` is whether the layer's
    capture has its affine terms (an affine layer differentiated by torch.func has not)."""
    sums: dict[str, _Sums | None] = {}
    scratch = Scratch()  # each chunk's captures are summed before the next chunk is captured
    for x, seeds in source.chunks(chunk_size):
        for name, item in layer_captures(source.model, x, seeds, scratch=scratch).items():
            layer = layout.layer(name)
            if name not in sums:
                sums[name] = sums_for(layer, layer.affine and isinstance(item, Captured))
            if sums[name] is not None:
                sums[name].add(layer, item)
    return {name: s.block(source.n) for name, s in sums.items() if s is not None}


def _sums_for(representation, layer, structured):
    if representation == "diag":
        return _DiagonalSums()
    if not structured or representation == "block_diag":
        return _DenseSums()
    return _QuasiDiagonalSums() if representation == "quasi_diag" else _KroneckerSums()


def _gradients(layer, item) -> Tensor:
    """A layer's (m, k, p) per-example, per-seed gradients from its capture or torch.func."""
    factor = captured_factor(item) if isinstance(item, Captured) else item
    if isinstance(factor, DenseFactor):
        return factor.grads.detach()
    grads = factor.output_grads
    target = grads.new_empty(grads.shape[0], grads.shape[1], layer.size)
    write_gradients(layer.module, factor, target)
    return target


def _matrix_gradients(item: Captured, rotation: tuple[Tensor, Tensor] | None = None) -> Tensor:
    """An affine layer's (m, k, out, width) per-example gradients in W̃ form, summed over its
    calls and positions; with a rotation (U_B, U_A), those of U_Bᵀ W̃ U_A."""
    total = 0
    for h, g in zip(item.inputs, item.output_grads):
        inputs, grads = affine_terms(item.module, h, g)
        if rotation is not None:
            grads = torch.einsum("mkot,op->mkpt", grads, rotation[0])
            inputs = torch.einsum("mit,ij->mjt", inputs, rotation[1])
        total = total + torch.einsum("mkot,mit->mkoi", grads, inputs)
    return total


def _single_position(item) -> tuple[Tensor, Tensor] | None:
    """A Linear layer called once on flat inputs: (inputs (m, width), output grads (m, k, out))."""
    if isinstance(item.module, nn.Linear) and len(item.inputs) == 1 and item.inputs[0].dim() == 2:
        inputs, grads = affine_terms(item.module, item.inputs[0], item.output_grads[0])
        return inputs[..., 0], grads[..., 0]
    return None


class _Sums:
    total: Tensor | float = 0.0

    def add(self, layer, item) -> None: ...

    def block(self, n: int) -> CurvatureMatrix: ...


class _DenseSums(_Sums):
    def add(self, layer, item):
        g = _gradients(layer, item).flatten(0, 1)
        self.total = self.total + g.T @ g

    def block(self, n):
        return Dense(self.total / n)


class _DiagonalSums(_Sums):
    def add(self, layer, item):
        single = _single_position(item) if layer.affine and isinstance(item, Captured) else None
        if single is not None:  # Σ (Ds ⊗ ã)² = (Ds²)ᵀ (ã²): no per-example gradient formed
            inputs, grads = single
            squares = torch.einsum("mko,mi->oi", grads.square(), inputs.square())
            self.total = self.total + AffineForm.of(layer.module).vector(squares)
        else:
            self.total = self.total + _gradients(layer, item).square().sum((0, 1))

    def block(self, n):
        return Diagonal(self.total / n)


class _QuasiDiagonalSums(_Sums):
    def __init__(self):
        self.diagonal, self.cross = 0, 0

    def add(self, layer, item):
        self.form = AffineForm.of(layer.module)
        self.has_cross = "bias" in dict(layer.module.named_parameters()) and self.form.width > 1
        single = _single_position(item)
        if single is not None:  # the bias column of ã is 1: the cross terms are (Ds²)ᵀ ã
            inputs, grads = single
            squares = grads.square().sum(1)
            self.diagonal = self.diagonal + squares.T @ inputs.square()
            self.cross = self.cross + squares.T @ inputs[:, :-1]
        else:
            g = _matrix_gradients(item)
            self.diagonal = self.diagonal + g.square().sum((0, 1))
            self.cross = self.cross + (g[..., :-1] * g[..., -1:]).sum((0, 1))

    def block(self, n):
        return QuasiDiagonal(self.form, self.diagonal / n, self.cross / n if self.has_cross else None)


class _KroneckerSums(_Sums):
    """KFAC (KFC for convolutions): A = (1/n) Σ_i Σ_t ã_it ã_itᵀ over the T positions,
    B = (1/n) Σ_i Σ_k Σ_t Ds_ikt Ds_iktᵀ / T (NNGeometry's split of the scale)."""

    def __init__(self):
        self.a, self.b = 0, 0

    def add(self, layer, item):
        self.form = AffineForm.of(layer.module)
        positions = 0
        b = 0
        for h, g in zip(item.inputs, item.output_grads):
            inputs, grads = affine_terms(item.module, h, g)
            self.a = self.a + torch.einsum("mit,mjt->ij", inputs, inputs)  # inputs are stored (i, m, t)
            b = b + _summed_squares(grads)
            positions += inputs.shape[2]
        self.b = self.b + b / positions

    def block(self, n):
        return Kronecker(self.form, self.a / n, self.b / n)


def _summed_squares(grads: Tensor) -> Tensor:
    """Σ over examples, seeds and positions of g gᵀ for output gradients (m, k, out, T). When
    out ≤ T, one small product per (example, seed), summed: a single product over (m, k, t) would
    first copy the gradients into that order."""
    m, k, out, positions = grads.shape
    if positions == 1 or out > positions or not grads.is_contiguous():
        return torch.einsum("mkot,mkpt->op", grads, grads)
    flat = grads.reshape(m * k, out, positions)
    return torch.bmm(flat, flat.transpose(1, 2)).sum(0)


class _KfeDiagonalSums(_Sums):
    """s* = (1/n) Σ_i Σ_k (U_Bᵀ G_ik U_A)² in the block's eigenbasis."""

    def __init__(self, block: EigenKronecker):
        self.kfe = block

    def add(self, layer, item):
        ub, ua = self.kfe.ub, self.kfe.ua
        single = _single_position(item)
        if single is not None:  # ((Ds U_B)²)ᵀ ((ã U_A)²): no per-example gradient formed
            inputs, grads = single
            part = torch.einsum("mko,mi->oi", (grads @ ub).square(), (inputs @ ua).square())
        else:
            part = _matrix_gradients(item, (ub, ua)).square().sum((0, 1))
        self.total = self.total + part

    def block(self, n):
        return EigenKronecker(self.kfe.form, self.kfe.ua, self.kfe.ub, self.total / n)


# --- implicit: passes over the data for every operation -----------------------------------------

class Implicit(CurvatureMatrix):
    """F never stored: F v = (1/n) Σ_i J_iᵀ S_iᵀ S_i J_i v from one forward-mode and one reverse-mode
    pass per chunk; vᵀ F v from the forward-mode pass alone; trace and diagonal from the
    per-layer capture; solve by conjugate gradients."""

    def __init__(self, source: FisherSource, layout: ParameterLayout, chunk_size: int):
        self.source, self.layout, self.chunk_size = source, layout, chunk_size

    def _function(self, x):
        model, buffers = self.source.model, dict(self.source.model.named_buffers())
        return lambda params: flat_outputs(functional_call(model, (params, buffers), (x,)))

    def _projected(self, v):
        """Per chunk: the function, its parameters, the seeds S_i and S_i J_i v (m, k)."""
        params = {name: p.detach() for name, p in self.layout.parameters().items()}
        tangent = self.layout.split(v)
        for x, seeds in self.source.chunks(self.chunk_size):
            f = self._function(x)
            out, jv = jvp(f, (params,), (tangent,))
            s = seeds(out)
            yield f, params, s, torch.einsum("mkc,mc->mk", s, jv)

    def mv(self, v):
        total = torch.zeros_like(v)
        for f, params, s, projected in self._projected(v):
            _, pullback = vjp(f, params)
            (grads,) = pullback(torch.einsum("mkc,mk->mc", s, projected))
            total += torch.cat([grads[name].reshape(-1) for name in self.layout.names])
        return total / self.source.n

    def vTMv(self, v):
        return sum(projected.square().sum() for *_, projected in self._projected(v)) / self.source.n

    def solve(self, v, damping, rtol: float = 1e-13, max_iterations: int | None = None):
        """(F + λI)⁻¹ v by conjugate gradients, to a residual of ``rtol`` relative to v."""
        def operator(u):
            return self.mv(u) + damping * u
        solution = torch.zeros_like(v)
        residual = v.clone()
        direction = residual.clone()
        norm = residual @ residual
        for _ in range(max_iterations or 10 * len(v)):
            if norm.sqrt() <= rtol * v.norm():
                break
            image = operator(direction)
            step = norm / (direction @ image)
            solution += step * direction
            residual -= step * image
            new_norm = residual @ residual
            direction = residual + (new_norm / norm) * direction
            norm = new_norm
        return solution

    def trace(self):
        return self.diag().sum()

    def diag(self):
        return build(self.source, "diag", self.chunk_size).diag()

    def dense(self):
        return build(self.source, "dense", self.chunk_size).dense()
