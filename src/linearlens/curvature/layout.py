"""The parameter space: a model's trainable parameters as one flat vector, in
``model.named_parameters()`` order, cut into one slice per owning layer."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ..capture import is_affine, trainable


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


@dataclass(frozen=True)
class Layer:
    name: str  # module name, "" for the root
    module: nn.Module
    span: slice  # the layer's entries in the flat vector

    @property
    def size(self) -> int:
        return self.span.stop - self.span.start

    @property
    def affine(self) -> bool:
        return is_affine(self.module)


class ParameterLayout:
    """Which entries of the flat parameter vector belong to which layer. A parameter shared by
    several modules belongs to the first that owns it (as ``named_parameters`` counts it once)."""

    def __init__(self, model: nn.Module):
        self.model = model
        seen: set[int] = set()
        self.layers: list[Layer] = []
        self.names: list[str] = []  # parameter names, in flat order
        start = 0
        for name, module in model.named_modules():
            own = {pname: p for pname, p in trainable(module).items() if id(p) not in seen}
            if not own:
                continue
            seen.update(id(p) for p in own.values())
            size = sum(p.numel() for p in own.values())
            self.layers.append(Layer(name, module, slice(start, start + size)))
            self.names += [f"{name}.{pname}" if name else pname for pname in own]
            start += size
        self.size = start

    def layer(self, name: str) -> Layer:
        return next(layer for layer in self.layers if layer.name == name)

    def parameters(self) -> dict[str, Tensor]:
        params = dict(self.model.named_parameters())
        return {name: params[name] for name in self.names}

    def vector(self) -> Tensor:
        """The model's current parameters as a flat vector."""
        return torch.cat([p.detach().reshape(-1) for p in self.parameters().values()])

    def split(self, v: Tensor) -> dict[str, Tensor]:
        """A flat vector as tensors shaped like the parameters, by parameter name."""
        parts, start = {}, 0
        for name, p in self.parameters().items():
            parts[name] = v[start:start + p.numel()].view_as(p)
            start += p.numel()
        return parts
