"""Deep linear networks: bias-free Linear layers with no activation between them."""

from __future__ import annotations

import torch
from torch import Tensor, nn


class DeepLinear(nn.Module):
    """f(x) = W_L ⋯ W_1 x with dense W_l (``nn.Linear`` layers without bias, PyTorch's default
    init times ``init_scale``): the same function and parameters as ``nn.Sequential`` of the
    layers, evaluated as x (W_L ⋯ W_1)ᵀ, which for a batch of n inputs costs the product of the
    weights once instead of n passes through the widest layer."""

    def __init__(self, widths: list[int], init_scale: float = 1.0):
        super().__init__()
        if len(widths) < 2:
            raise ValueError(f"a deep linear network needs an input and an output width, got {widths}")
        self.layers = nn.ModuleList(nn.Linear(w_in, w_out, bias=False) for w_in, w_out in zip(widths, widths[1:]))
        with torch.no_grad():
            for layer in self.layers:
                layer.weight.mul_(init_scale)

    def end_to_end(self) -> Tensor:
        """W_L ⋯ W_1 (out × in)."""
        first, *rest = self.layers  # (slicing a ModuleList builds a new one on every call)
        product = first.weight
        for layer in rest:
            product = layer.weight @ product
        return product

    def forward(self, x: Tensor) -> Tensor:
        return x @ self.end_to_end().T
