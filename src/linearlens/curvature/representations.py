"""Representations of a curvature matrix M over the flat parameter space, behind one interface
(NNGeometry's ``PMat*`` abstraction):

    mv(v) = M v,  vTMv(v) = vᵀ M v,  solve(v, λ) = (M + λI)⁻¹ v,  trace(),  diag(),  dense().

``solve`` is the exact damped inverse of the represented matrix in every representation (closed
form per structure; the implicit one runs conjugate gradients to round-off). It is not the
factor-wise damping some libraries use for KFAC, (A + √λ I) ⊗ (B + √λ I), nor a low-rank inverse
that drops the null space.

Layer-structured representations are block diagonal: one block per layer (``BlockDiagonal``),
each block a representation of its own slice. Kronecker blocks act on a layer's W̃ = [W, b]
(``layout.AffineForm``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import cached_property

import torch
from torch import Tensor

from .layout import AffineForm, ParameterLayout


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


def symmetric_eigen(matrix: Tensor) -> tuple[Tensor, Tensor]:
    """eigh in float64, returned in the matrix's dtype: float32's eigh fails to converge on the
    rank-deficient factors of wide convolutions (a ResNet-50's 4,608-wide A of a 3x3 conv over
    few positions, many of them zero padding)."""
    values, vectors = torch.linalg.eigh(matrix.double())
    return values.to(matrix.dtype), vectors.to(matrix.dtype)


class Kronecker(CurvatureMatrix):
    """KFAC's block of an affine layer, A ⊗ B acting as W̃ ↦ B W̃ A: A (width × width) the second
    moment of the layer's inputs, B (out × out) that of its output gradients."""

    def __init__(self, form: AffineForm, a: Tensor, b: Tensor):
        self.form, self.a, self.b = form, a, b

    @cached_property
    def eigen(self) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """(eigenvalues of A, eigenvectors of A, eigenvalues of B, eigenvectors of B)."""
        sa, ua = symmetric_eigen(self.a)
        sb, ub = symmetric_eigen(self.b)
        return sa, ua, sb, ub

    def mv(self, v):
        return self.form.vector(self.b @ self.form.matrix(v) @ self.a)

    def solve(self, v, damping):
        sa, ua, sb, ub = self.eigen
        rotated = ub.T @ self.form.matrix(v) @ ua
        return self.form.vector(ub @ (rotated / (sb[:, None] * sa[None, :] + damping)) @ ua.T)

    def trace(self):
        return self.a.trace() * self.b.trace()

    def diag(self):
        return self.form.vector(torch.outer(self.b.diagonal(), self.a.diagonal()))

    def dense(self):
        return self.form.permuted(torch.kron(self.b, self.a))


class EigenKronecker(CurvatureMatrix):
    """EKFAC's block: the Kronecker-factored eigenbasis (KFE) U_A ⊗ U_B of KFAC's factors with its
    own diagonal s* = E[(U_Bᵀ G U_A)²] over per-example gradients G, acting as
    W̃ ↦ U_B (s* ∘ (U_Bᵀ W̃ U_A)) U_Aᵀ."""

    def __init__(self, form: AffineForm, ua: Tensor, ub: Tensor, scales: Tensor):
        self.form, self.ua, self.ub = form, ua, ub
        self.scales = scales  # s*, (out, width)

    def _apply(self, v, scale):
        rotated = self.ub.T @ self.form.matrix(v) @ self.ua
        return self.form.vector(self.ub @ scale(rotated) @ self.ua.T)

    def mv(self, v):
        return self._apply(v, lambda r: self.scales * r)

    def solve(self, v, damping):
        return self._apply(v, lambda r: r / (self.scales + damping))

    def trace(self):
        return self.scales.sum()

    def diag(self):
        return self.form.vector((self.ub ** 2) @ self.scales @ (self.ua ** 2).T)

    def dense(self):
        basis = torch.kron(self.ub, self.ua)
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
