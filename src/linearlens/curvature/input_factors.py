"""The input side of a Kronecker block: a width × width matrix acting on the columns of a layer's
W̃ = [W, b] (out × width), either KFAC's factor A or the eigenvectors U_A of the KFE.

Two structures behind one interface (``InputFactor``):

* ``DenseInputFactor``: any matrix, stored whole (KFAC's A of a Linear layer, KFC's Ω of a
  convolution, and their eigenvectors);
* ``PerPositionFactor``: SUA's block diagonal over a convolution's kernel positions (Grosse &
  Martens 2016), stored as one C_in × C_in block shared by all positions but the centre and one
  centre block that the bias joins, so neither A nor U_A is ever width × width (VGG11's widest
  convolution has width 4,609 against C_in + 1 = 513).

The blocks keep a dense factor as a plain Tensor (their public ``a`` and ``ua``, as before this
interface); ``as_input_factor`` wraps it where they operate on it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import cached_property

import torch
from torch import Tensor

# Up to this width a SUA factor multiplies as its dense matrix (at most 65,536 entries): on small
# convolutions the structured product's splitting and joining cost more than the product itself
# (3 of the 18 ms of an EKFAC s* refit on the digits ResNet, batch 64).
DENSE_PRODUCT_WIDTH = 256


def symmetric_eigen(matrix: Tensor) -> tuple[Tensor, Tensor]:
    """eigh in float64, returned in the matrix's dtype: float32's eigh fails to converge on the
    rank-deficient factors of wide convolutions (a ResNet-50's 4,608-wide A of a 3x3 conv over
    few positions, many of them zero padding)."""
    values, vectors = torch.linalg.eigh(matrix.double())
    return values.to(matrix.dtype), vectors.to(matrix.dtype)


def kron(a: Tensor, b: Tensor) -> Tensor:
    """The Kronecker product; torch.kron (2.13) fails on factors of different memory layouts, as
    eigh's column-major eigenvectors next to a row-major matrix."""
    return torch.einsum("ij,kl->ikjl", a, b).reshape(a.shape[0] * b.shape[0], a.shape[1] * b.shape[1])


class InputFactor(ABC):
    """A width × width matrix M on the input side of a Kronecker block."""

    @abstractmethod
    def times(self, w: Tensor, transposed: bool = False) -> Tensor:
        """w M (or w Mᵀ) for w (..., width): M applied to the last dimension."""

    @abstractmethod
    def diagonal(self) -> Tensor: ...

    def trace(self) -> Tensor:
        return self.diagonal().sum()

    @abstractmethod
    def dense(self) -> Tensor: ...

    @abstractmethod
    def squared(self) -> InputFactor:
        """M ∘ M, entry by entry (the same structure)."""

    @abstractmethod
    def eigen(self) -> tuple[Tensor, Tensor | InputFactor]:
        """(eigenvalues (width,), eigenvectors U): the values laid out in the columns of W̃ U, the
        vectors in the form a block holds them (a plain Tensor for a dense factor)."""


def as_input_factor(matrix: Tensor | InputFactor) -> InputFactor:
    return matrix if isinstance(matrix, InputFactor) else DenseInputFactor(matrix)


class DenseInputFactor(InputFactor):
    def __init__(self, matrix: Tensor):
        self.matrix = matrix

    def times(self, w, transposed=False):
        return w @ (self.matrix.mT if transposed else self.matrix)

    def diagonal(self):
        return self.matrix.diagonal()

    def trace(self):
        return self.matrix.trace()

    def dense(self):
        return self.matrix

    def squared(self):
        return DenseInputFactor(self.matrix.square())

    def eigen(self):
        return symmetric_eigen(self.matrix)


def kernel_centre(kernel_size: tuple[int, ...]) -> int:
    """p₀: the kernel's centre position (k_d // 2 in every dimension), row-major, as in W̃'s
    columns c·K + p; (k_h // 2)·k_w + k_w // 2 for a 2-D kernel."""
    index = 0
    for size in kernel_size:
        index = index * size + size // 2
    return index


class PerPositionFactor(InputFactor):
    """A convolution's input-side matrix under SUA, block diagonal over the K kernel positions of
    W̃'s columns (c·K + p, then the bias): the C × C block ``shared`` at every position but the
    centre p₀, and ``centre`` at p₀, which the bias's homogeneous coordinate joins as its last row
    and column ((C + 1) × (C + 1); just C × C without a bias). Nothing couples two positions, nor
    the bias and a position other than p₀.

    Its eigenvectors have the same structure (``eigen``); the rotated coordinates keep W̃'s column
    layout: direction d of position p at column d·K + p, the centre's last direction at the bias
    column."""

    def __init__(self, shared: Tensor, centre: Tensor, positions: int, centre_position: int):
        self.shared, self.centre = shared, centre
        self.positions, self.centre_position = positions, centre_position

    @property
    def channels(self) -> int:
        return self.shared.shape[0]

    @property
    def width(self) -> int:
        return self.channels * (self.positions - 1) + len(self.centre)

    def _split(self, w: Tensor) -> tuple[Tensor, Tensor]:
        """w (..., width) as (..., C, K) by channel and position, and the centre block's entries
        (..., C + bias): those of position p₀, then the bias's."""
        weights = self.channels * self.positions
        by_position = w[..., :weights].unflatten(-1, (self.channels, self.positions))
        return by_position, torch.cat([by_position[..., self.centre_position], w[..., weights:]], dim=-1)

    def _joined(self, by_position: Tensor, centre: Tensor) -> Tensor:
        """``_split``'s inverse: position p₀ of ``by_position`` replaced by the centre's entries."""
        c = self.channels
        index = torch.tensor([self.centre_position], device=by_position.device)
        by_position = by_position.index_copy(-1, index, centre[..., :c, None])
        return torch.cat([by_position.flatten(-2), centre[..., c:]], dim=-1)

    def times(self, w, transposed=False):
        if self.width <= DENSE_PRODUCT_WIDTH:  # one matmul beats the per-position split's dozen small ops
            return w @ (self._small_dense.mT if transposed else self._small_dense)
        shared, centre = (self.shared.mT, self.centre.mT) if transposed else (self.shared, self.centre)
        by_position, at_centre = self._split(w)
        return self._joined(torch.einsum("...cp,cd->...dp", by_position, shared), at_centre @ centre)

    @cached_property
    def _small_dense(self) -> Tensor:
        return self.dense()

    def diagonal(self):
        return self._joined(self.shared.diagonal()[:, None].expand(-1, self.positions), self.centre.diagonal())

    def dense(self):
        c, k = self.channels, self.positions
        matrix = self.shared.new_zeros(self.width, self.width)
        matrix[:c * k, :c * k] = kron(self.shared, torch.eye(k, dtype=matrix.dtype, device=matrix.device))
        columns = torch.cat([torch.arange(c) * k + self.centre_position,
                             torch.arange(c * k, len(matrix))]).to(matrix.device)
        matrix[columns[:, None], columns] = self.centre  # the centre's entries, over kron's at p₀
        return matrix

    def squared(self):
        return PerPositionFactor(self.shared.square(), self.centre.square(), self.positions, self.centre_position)

    def eigen(self):
        shared_values, shared_vectors = symmetric_eigen(self.shared)
        centre_values, centre_vectors = symmetric_eigen(self.centre)
        values = self._joined(shared_values[:, None].expand(-1, self.positions), centre_values)
        return values, PerPositionFactor(shared_vectors, centre_vectors, self.positions, self.centre_position)
