"""Fisher matrices F = (1/n) Σ_i Σ_k g_ik g_ikᵀ (``sources``) in every representation, built in
passes over the data, chunk by chunk, from the per-layer capture that the tangent kernels use.

``fisher(model, x, representation=...)`` is the entry point. The Kronecker factors and the EKFAC
eigenbasis and diagonal are the blocks' own attributes (``Kronecker.a``/``.b``,
``EigenKronecker.ua``/``.ub``/``.scales``), and ``kfe_diagonal`` re-estimates s* on other data, so
an optimiser reuses them.

Linear and convolution layers take their structure (quasi-diagonal arrows, KFAC, EKFAC); every
other layer (normalisation, embeddings, modules differentiated by torch.func) gets a dense block,
since those structures are not defined there.

A convolution's KFAC input factor is KFC's by default (``conv_factors="kfc"``): the patches'
second moment Ω = (1/n) Σ_i Σ_t ã_it ã_itᵀ over the T output positions (width = C_in·K + 1 with
a bias, K kernel positions). ``conv_factors="sua"`` (spatially uncorrelated activations, Grosse &
Martens 2016) replaces it by the matrix below, defined on Ω's entries (indices (c, p), c the input
channel, p the kernel position, row-major; p₀ the kernel's centre, ``kernel_centre``):

    A_SUA[(c, p), (c', p')] = δ_pp' Ā[c, c'],   Ā = (1/K) Σ_p Ω_pp  (Ω's position-diagonal blocks,
                                                                     averaged: spatial homogeneity)
    A_SUA[(c, p₀), bias] = μ̄_c = (1/K) Σ_p Ω[(c, p), bias],   A_SUA[bias, bias] = Ω[bias, bias],

and zero between the bias and every other position: K − 1 copies of Ā and one centre block
[[Ā, μ̄], [μ̄ᵀ, Ω_bb]] (``input_factors.PerPositionFactor``), computed from the patches without
forming Ω; its eigendecomposition is that of those two blocks. B is KFC's. Conv1d layers take the
same construction (K = k); Linear layers keep their factor (one position: SUA is KFAC there).
"""

from __future__ import annotations

import math

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
    is_affine,
    layer_captures,
    per_example_gradients,
    write_gradients,
)
from ..parameters import ParameterLayout
from ..train.runtime import full_float32
from .input_factors import PerPositionFactor, kernel_centre
from .layout import AffineForm
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
CONV_FACTORS = ("kfc", "sua")  # a convolution's KFAC input factor (the module's docstring)
# Examples per pass, by default: as many as fit here (larger passes fault in more fresh memory
# than they save in per-pass overhead on a ResNet; a small network takes all examples at once).
PASS_MEMORY_BYTES = 2**31


@full_float32()
def fisher(model: nn.Module, x: Tensor, labels: Tensor | None = None, *, representation: str,
           likelihood: str = "categorical", variant: str = "exact", samples: int = 1,
           seed: int = 0, chunk_size: int | None = None, conv_factors: str = "kfc") -> CurvatureMatrix:
    """The Fisher matrix of ``model`` on the examples ``x`` (normalised by their number) in one of
    ``REPRESENTATIONS``; likelihood, variant, samples and seed as in ``FisherSource``; examples
    taken ``chunk_size`` at a time (by default as many as ``PASS_MEMORY_BYTES`` holds);
    ``conv_factors`` one of ``CONV_FACTORS`` for kfac and ekfac (the module's docstring)."""
    return build(FisherSource(model, x, labels, likelihood, variant, samples, seed),
                 representation, chunk_size, conv_factors)


def build(source: FisherSource, representation: str, chunk_size: int | None = None,
          conv_factors: str = "kfc") -> CurvatureMatrix:
    if representation not in REPRESENTATIONS:
        raise ValueError(f"representation must be one of {REPRESENTATIONS}, got {representation!r}")
    if conv_factors not in CONV_FACTORS:
        raise ValueError(f"conv_factors must be one of {CONV_FACTORS}, got {conv_factors!r}")
    if conv_factors != "kfc" and representation not in ("kfac", "ekfac"):
        raise ValueError(f"conv_factors={conv_factors!r} applies to kfac and ekfac, not {representation!r}")
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
        representation, layer, structured, conv_factors))
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
                sums[name] = sums_for(layer, is_affine(layer.module) and isinstance(item, Captured))
            if sums[name] is not None:
                sums[name].add(layer, item)
    return {name: s.block(source.n) for name, s in sums.items() if s is not None}


def _sums_for(representation, layer, structured, conv_factors):
    if representation == "diag":
        return _DiagonalSums()
    if not structured or representation == "block_diag":
        return _DenseSums()
    if representation == "quasi_diag":
        return _QuasiDiagonalSums()
    sua = conv_factors == "sua" and not isinstance(layer.module, nn.Linear)
    return _KroneckerSums(_PositionInputSums(layer.module) if sua else _DenseInputSums())


def _gradients(layer, item) -> Tensor:
    """A layer's (m, k, p) per-example, per-seed gradients from its capture or torch.func."""
    factor = captured_factor(item) if isinstance(item, Captured) else item
    if isinstance(factor, DenseFactor):
        return factor.grads.detach()
    grads = factor.output_grads
    target = grads.new_empty(grads.shape[0], grads.shape[1], layer.size)
    write_gradients(layer.module, factor, target)
    return target


def _matrix_gradients(item: Captured, kfe: EigenKronecker | None = None) -> Tensor:
    """An affine layer's (m, k, out, width) per-example gradients in W̃ form, summed over its
    calls and positions; with a block's KFE, those of U_Bᵀ W̃ U_A (each factor rotated first)."""
    total = 0
    for h, g in zip(item.inputs, item.output_grads):
        inputs, grads = affine_terms(item.module, h, g)
        if kfe is not None:
            grads = torch.einsum("mkot,op->mkpt", grads, kfe.ub)
            inputs = kfe.input_basis.times(inputs.transpose(1, 2)).transpose(1, 2)
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
        single = _single_position(item) if is_affine(layer.module) and isinstance(item, Captured) else None
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
    """KFAC: A from the inputs' sums (``inputs``: KFC's Ω, or SUA's per-position blocks),
    B = (1/n) Σ_i Σ_k Σ_t Ds_ikt Ds_iktᵀ / T (NNGeometry's split of the scale)."""

    def __init__(self, inputs: _DenseInputSums | _PositionInputSums):
        self.inputs, self.b = inputs, 0

    def add(self, layer, item):
        self.form = AffineForm.of(layer.module)
        positions = 0
        b = 0
        for h, g in zip(item.inputs, item.output_grads):
            inputs, grads = affine_terms(item.module, h, g)
            self.inputs.add(inputs)
            b = b + _summed_squares(grads)
            positions += inputs.shape[2]
        self.b = self.b + b / positions

    def block(self, n):
        return Kronecker(self.form, self.inputs.factor(n), self.b / n)


class _DenseInputSums:
    """KFAC's A = (1/n) Σ_i Σ_t ã_it ã_itᵀ over the T positions (KFC's Ω for a convolution)."""

    def __init__(self):
        self.total = 0

    def add(self, inputs: Tensor) -> None:
        self.total = self.total + torch.einsum("mit,mjt->ij", inputs, inputs)  # inputs are stored (i, m, t)

    def factor(self, n: int) -> Tensor:
        return self.total / n


class _PositionInputSums:
    """SUA's A (the module's docstring) from the patches (m, C·K + bias, T), Ω never formed:
    Σ_p Ω_pp as one product over (m, p, t), Σ_p Ω[(c, p), bias], and Ω[bias, bias]."""

    def __init__(self, module: nn.Module):
        self.channels = module.in_channels
        self.positions = math.prod(module.kernel_size)
        self.centre_position = kernel_centre(module.kernel_size)
        self.shared, self.cross, self.bias = 0, 0, 0

    def add(self, inputs: Tensor) -> None:
        rows = inputs.transpose(0, 1)  # (width, m, T): the order the patches are stored in
        weights = self.channels * self.positions
        by_channel = rows[:weights].reshape(self.channels, -1)  # (C, K·m·T), a view of the patches
        bias = rows[weights:].flatten(1)  # (1 or 0, m·T): the bias's ones
        self.shared = self.shared + by_channel @ by_channel.T
        per_position = by_channel.view(self.channels, self.positions, -1).sum(1)
        self.cross = self.cross + per_position @ bias.T
        self.bias = self.bias + bias @ bias.T

    def factor(self, n: int) -> PerPositionFactor:
        shared, cross = self.shared / (self.positions * n), self.cross / (self.positions * n)
        centre = torch.cat([torch.cat([shared, cross], 1), torch.cat([cross.T, self.bias / n], 1)])
        return PerPositionFactor(shared, centre, self.positions, self.centre_position)


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
        single = _single_position(item)
        if single is not None:  # ((Ds U_B)²)ᵀ ((ã U_A)²): no per-example gradient formed
            inputs, grads = single
            rotated_inputs = self.kfe.input_basis.times(inputs)
            part = torch.einsum("mko,mi->oi", (grads @ self.kfe.ub).square(), rotated_inputs.square())
        else:
            part = _matrix_gradients(item, self.kfe).square().sum((0, 1))
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
            total += self.layout.flatten(grads)
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
