"""Representations of a curvature matrix M over the flat parameter space, behind one interface
(NNGeometry's ``PMat*`` abstraction):

    mv(v) = M v,  vTMv(v) = vᵀ M v,  solve(v, λ) = (M + λI)⁻¹ v,  trace(),  diag(),  dense().

``solve`` is the exact damped inverse of the represented matrix in every representation (closed
form per structure; the implicit one runs conjugate gradients to round-off), never a low-rank
inverse that drops the null space. KFAC's factor-wise damping, (A + π√λ I) ⊗ (B + √λ/π I) in place
of A ⊗ B + λI (NNGeometry's ``PMatKFAC.solve``; EKFAC-pytorch's KFAC with π = 1), is what
``factored_damping`` adds to a Kronecker block's eigenvalues: pass it to ``solve`` as the damping.

Layer-structured representations are block diagonal: one block per layer (``BlockDiagonal``),
each block a representation of its own slice. Kronecker blocks act on a layer's W̃ = [W, b]
(``layout.AffineForm``), their input side through ``input_factors.InputFactor`` (dense, or
per kernel position under SUA).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import cached_property

import torch
from torch import Tensor

from ..parameters import ParameterLayout
from .input_factors import InputFactor, as_input_factor, kron, symmetric_eigen
from .layout import AffineForm


def factored_damping(sa: Tensor, sb: Tensor, damping: float, pi: float | Tensor = 1.0) -> Tensor:
    """The eigenvalues of (A + π√λ I) ⊗ (B + √λ/π I) less those of A ⊗ B, laid out as a Kronecker
    block's (out, width) eigenvalues: λ + √λ (π S_B ⊗ 1 + 1 ⊗ S_A/π), from A's eigenvalues ``sa`` and
    B's ``sb``."""
    root = damping ** 0.5
    return damping + root * (pi * sb[:, None] + sa[None, :] / pi)


def balancing_pi(sa: Tensor, sb: Tensor) -> Tensor:
    """Martens & Grosse's π = √((tr A / dim A) / (tr B / dim B)), which NNGeometry's KFAC solve uses:
    the damping split between the factors in proportion to their mean eigenvalues."""
    return (sa.mean() / sb.mean()).sqrt()


class CurvatureMatrix(ABC):
    """A symmetric positive semi-definite matrix over a flat parameter vector."""

    @abstractmethod
    def mv(self, v: Tensor) -> Tensor: ...

    def vTMv(self, v: Tensor) -> Tensor:  # NNGeometry's name
        return v @ self.mv(v)

    @abstractmethod
    def solve(self, v: Tensor, damping: float) -> Tensor: ...

    @abstractmethod
    def trace(self) -> Tensor: ...

    @abstractmethod
    def diag(self) -> Tensor: ...

    @abstractmethod
    def dense(self) -> Tensor: ...


class Dense(CurvatureMatrix):
    def __init__(self, matrix: Tensor):
        self.matrix = matrix

    def mv(self, v):
        return self.matrix @ v

    def solve(self, v, damping):
        eye = torch.eye(len(self.matrix), dtype=self.matrix.dtype, device=self.matrix.device)
        return torch.linalg.solve(self.matrix + damping * eye, v)

    def trace(self):
        return self.matrix.trace()

    def diag(self):
        return self.matrix.diagonal().clone()

    def dense(self):
        return self.matrix


class Diagonal(CurvatureMatrix):
    def __init__(self, diagonal: Tensor):
        self.diagonal = diagonal

    def mv(self, v):
        return self.diagonal * v

    def solve(self, v, damping):
        return v / (self.diagonal + damping)

    def trace(self):
        return self.diagonal.sum()

    def diag(self):
        return self.diagonal.clone()

    def dense(self):
        return torch.diag(self.diagonal)


class QuasiDiagonal(CurvatureMatrix):
    """Ollivier's quasi-diagonal block of an affine layer: the full diagonal, plus for each output
    unit the covariances of its bias with the weights of its own row (an arrow per unit)."""

    def __init__(self, form: AffineForm, diagonal: Tensor, cross: Tensor | None):
        self.form = form
        self.diagonal = diagonal  # (out, width) on W̃
        self.cross = cross  # (out, width − 1): bias × weights of the same row; None without a bias

    def mv(self, v):
        m = self.form.matrix(v)
        y = self.diagonal * m
        if self.cross is not None:
            y[:, :-1] += self.cross * m[:, -1:]
            y[:, -1] += (self.cross * m[:, :-1]).sum(1)
        return self.form.vector(y)

    def solve(self, v, damping):
        m, d = self.form.matrix(v), self.diagonal + damping
        if self.cross is None:
            return self.form.vector(m / d)
        dw, c = d[:, :-1], self.cross  # each unit: [[Dw, c], [cᵀ, d_b]], solved by its Schur complement
        bias = (m[:, -1] - (c * m[:, :-1] / dw).sum(1)) / (d[:, -1] - (c * c / dw).sum(1))
        weights = (m[:, :-1] - c * bias[:, None]) / dw
        return self.form.vector(torch.cat([weights, bias[:, None]], dim=1))

    def trace(self):
        return self.diagonal.sum()

    def diag(self):
        return self.form.vector(self.diagonal)

    def dense(self):
        out, width = self.diagonal.shape
        matrix = torch.diag(self.diagonal.reshape(-1))
        if self.cross is not None:
            rows = torch.arange(out, device=matrix.device)[:, None] * width
            weights = (rows + torch.arange(width - 1, device=matrix.device)).reshape(-1)
            bias = (rows + width - 1).expand(-1, width - 1).reshape(-1)
            matrix[weights, bias] = self.cross.reshape(-1)
            matrix[bias, weights] = self.cross.reshape(-1)
        return self.form.permuted(matrix)


class KroneckerEigenbasis:
    """The rotation of a Kronecker block's W̃ into its KFE U_A ⊗ U_B and back, for a block that
    gives its eigenvectors as ``_eigenvectors()``: (U_B, U_A as an ``InputFactor``)."""

    def _eigenvectors(self) -> tuple[Tensor, InputFactor]: ...

    def to_kfe(self, w: Tensor) -> Tensor:
        """U_Bᵀ W̃ U_A, for W̃ (..., out, width)."""
        ub, ua = self._eigenvectors()
        return ub.T @ ua.times(w)

    def from_kfe(self, rotated: Tensor) -> Tensor:
        """U_B R U_Aᵀ: ``to_kfe``'s inverse."""
        ub, ua = self._eigenvectors()
        return ub @ ua.times(rotated, transposed=True)


class Kronecker(KroneckerEigenbasis, CurvatureMatrix):
    """KFAC's block of an affine layer, A ⊗ B acting as W̃ ↦ B W̃ A: A (width × width) the second
    moment of the layer's inputs, B (out × out) that of its output gradients. A is a Tensor, or an
    ``InputFactor`` that keeps its structure (SUA's ``PerPositionFactor`` for a convolution)."""

    def __init__(self, form: AffineForm, a: Tensor | InputFactor, b: Tensor):
        self.form, self.a, self.b = form, a, b

    @property
    def input_factor(self) -> InputFactor:
        return as_input_factor(self.a)

    @cached_property
    def eigen(self) -> tuple[Tensor, Tensor | InputFactor, Tensor, Tensor]:
        """(eigenvalues of A, eigenvectors of A, eigenvalues of B, eigenvectors of B); A's as
        ``InputFactor.eigen`` lays them out."""
        sa, ua = self.input_factor.eigen()
        sb, ub = symmetric_eigen(self.b)
        return sa, ua, sb, ub

    def _eigenvectors(self):
        _, ua, _, ub = self.eigen
        return ub, as_input_factor(ua)

    def mv(self, v):
        return self.form.vector(self.b @ self.input_factor.times(self.form.matrix(v)))

    def pi_damping(self, damping: float) -> Tensor:
        """NNGeometry's damping of this block for ``solve``: (A + π√λ I) ⊗ (B + √λ/π I)."""
        sa, _, sb, _ = self.eigen
        return factored_damping(sa, sb, damping, balancing_pi(sa, sb))

    def solve(self, v, damping):
        sa, _, sb, _ = self.eigen
        rotated = self.to_kfe(self.form.matrix(v))
        return self.form.vector(self.from_kfe(rotated / (sb[:, None] * sa[None, :] + damping)))

    def trace(self):
        return self.input_factor.trace() * self.b.trace()

    def diag(self):
        return self.form.vector(torch.outer(self.b.diagonal(), self.input_factor.diagonal()))

    def dense(self):
        return self.form.permuted(kron(self.b, self.input_factor.dense()))


class EigenKronecker(KroneckerEigenbasis, CurvatureMatrix):
    """EKFAC's block: the Kronecker-factored eigenbasis (KFE) U_A ⊗ U_B of KFAC's factors with its
    own diagonal s* = E[(U_Bᵀ G U_A)²] over per-example gradients G, acting as
    W̃ ↦ U_B (s* ∘ (U_Bᵀ W̃ U_A)) U_Aᵀ. U_A is a Tensor or an ``InputFactor`` (SUA's per-position
    eigenvectors); s* is laid out as ``to_kfe``'s result."""

    def __init__(self, form: AffineForm, ua: Tensor | InputFactor, ub: Tensor, scales: Tensor):
        self.form, self.ua, self.ub = form, ua, ub
        self.scales = scales  # s*, (out, width)

    @property
    def input_basis(self) -> InputFactor:
        return as_input_factor(self.ua)

    def _eigenvectors(self):
        return self.ub, self.input_basis

    def _apply(self, v, scale):
        return self.form.vector(self.from_kfe(scale(self.to_kfe(self.form.matrix(v)))))

    def mv(self, v):
        return self._apply(v, lambda r: self.scales * r)

    def solve(self, v, damping):
        return self._apply(v, lambda r: r / (self.scales + damping))

    def trace(self):
        return self.scales.sum()

    def diag(self):
        squares = self.input_basis.squared().times(self.scales, transposed=True)
        return self.form.vector(self.ub.square() @ squares)

    def dense(self):
        basis = kron(self.ub, self.input_basis.dense())
        return self.form.permuted((basis * self.scales.reshape(-1)) @ basis.T)


class BlockDiagonal(CurvatureMatrix):
    """One block per layer of the layout, no coupling between layers."""

    def __init__(self, layout: ParameterLayout, blocks: dict[str, CurvatureMatrix]):
        self.layout, self.blocks = layout, blocks

    def _per_block(self, v, operation) -> Tensor:
        return torch.cat([operation(self.blocks[layer.name], v[layer.span]) for layer in self.layout.layers])

    def mv(self, v):
        return self._per_block(v, lambda block, part: block.mv(part))

    def vTMv(self, v):
        return sum(self.blocks[layer.name].vTMv(v[layer.span]) for layer in self.layout.layers)

    def solve(self, v, damping):
        return self._per_block(v, lambda block, part: block.solve(part, damping))

    def solve_per_block(self, v: Tensor, damping_of) -> Tensor:
        """(M + D)⁻¹ v with each block's own damping ``damping_of(block)`` (a number, or what its
        eigenvalues get added)."""
        return self._per_block(v, lambda block, part: block.solve(part, damping_of(block)))

    def trace(self):
        return sum(block.trace() for block in self.blocks.values())

    def diag(self):
        return torch.cat([self.blocks[layer.name].diag() for layer in self.layout.layers])

    def dense(self):
        return torch.block_diag(*[self.blocks[layer.name].dense() for layer in self.layout.layers])


class LowRank(CurvatureMatrix):
    """M = Jᵀ J from the (m, d) matrix J of the scaled per-example gradients (rank ≤ m)."""

    def __init__(self, rows: Tensor):
        self.rows = rows

    def mv(self, v):
        return self.rows.T @ (self.rows @ v)

    def vTMv(self, v):
        return (self.rows @ v).square().sum()

    def solve(self, v, damping):
        if damping <= 0:
            raise ValueError("a low-rank matrix has a null space: solve needs a positive damping")
        small = self.rows @ self.rows.T  # Woodbury, keeping the null-space term v/λ
        small.diagonal().add_(damping)
        return (v - self.rows.T @ torch.linalg.solve(small, self.rows @ v)) / damping

    def trace(self):
        return self.rows.square().sum()

    def diag(self):
        return self.rows.square().sum(0)

    def dense(self):
        return self.rows.T @ self.rows
