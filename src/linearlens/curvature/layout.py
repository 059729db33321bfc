"""An affine layer's slice of the flat parameter vector (``linearlens.parameters``) as the matrix
the Kronecker-factored curvature acts on."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ..capture import trainable


@dataclass(frozen=True)
class AffineForm:
    """A Linear or convolution layer's slice as the matrix W̃ = [W, b] (out × width): the weight
    flattened row-major (out × in·kernel), then the bias as a last column. Kronecker-factored
    curvature acts on W̃ as B W̃ A, i.e. on the row-major vector of W̃ as B ⊗ A; the flat vector
    holds the weight first and the bias after, and ``order`` maps one onto the other."""

    out: int
    width: int
    order: Tensor  # order[j] = the row-major index in W̃ of the layer's flat entry j

    @classmethod
    def of(cls, module: nn.Module) -> AffineForm:
        params = trainable(module)
        out = (params.get("weight", params.get("bias"))).shape[0]
        inputs = params["weight"][0].numel() if "weight" in params else 0
        bias = "bias" in params
        width = inputs + bias
        rows = torch.arange(out)
        order = []
        if inputs:
            order.append((rows[:, None] * width + torch.arange(inputs)[None, :]).reshape(-1))
        if bias:
            order.append(rows * width + inputs)
        return cls(out, width, torch.cat(order))

    def matrix(self, v: Tensor) -> Tensor:
        """The layer's flat slice as W̃ (out, width)."""
        m = v.new_empty(self.out * self.width)
        m[self.order.to(v.device)] = v
        return m.view(self.out, self.width)

    def vector(self, m: Tensor) -> Tensor:
        """W̃ back to the layer's flat slice."""
        return m.reshape(-1)[self.order.to(m.device)]

    def permuted(self, dense_in_matrix_order: Tensor) -> Tensor:
        """A (p, p) matrix over W̃'s row-major entries, in the flat slice's order."""
        order = self.order.to(dense_in_matrix_order.device)
        return dense_in_matrix_order[order][:, order]
