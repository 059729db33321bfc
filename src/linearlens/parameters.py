"""The parameter space of a model: its trainable parameters as one flat vector θ, in
``model.named_parameters()`` order (the order of optimisers, of ``torch.func`` parameter dicts and
of the Jacobian's columns in ``kernels.ntk``), cut into one span per parameter and one per owning
layer. Every flat view of parameters in the library goes through ``ParameterLayout``: the vector of
the parameters, of their gradients or of any per-parameter tensors, and a flat vector split back
into named, shaped pieces."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import Tensor, nn


def trainable_parameters(model: nn.Module) -> dict[str, nn.Parameter]:
    """The model's trainable parameters by name, in ``named_parameters`` order (a shared parameter
    once, under the name of its first owner)."""
    return {name: p for name, p in model.named_parameters() if p.requires_grad}


@dataclass(frozen=True)
class Layer:
    name: str  # module name, "" for the root
    module: nn.Module
    span: slice  # the layer's entries in the flat vector

    @property
    def size(self) -> int:
        return self.span.stop - self.span.start


class ParameterLayout:
    """Which entries of the flat parameter vector belong to which parameter and which layer (the
    module that owns them: ``named_parameters`` lists a module's own parameters together, so each
    layer's entries are contiguous)."""

    def __init__(self, model: nn.Module):
        self.model = model
        modules = dict(model.named_modules())
        self.spans: dict[str, slice] = {}  # parameter name -> its entries
        owned: dict[str, slice] = {}  # owning module's name -> its entries, in flat order
        start = 0
        for name, p in trainable_parameters(model).items():
            self.spans[name] = slice(start, start + p.numel())
            owner = name.rpartition(".")[0]
            owned[owner] = slice(owned.get(owner, self.spans[name]).start, start + p.numel())
            start += p.numel()
        self.names: list[str] = list(self.spans)  # parameter names, in flat order
        self.layers = [Layer(owner, modules[owner], span) for owner, span in owned.items()]
        self.size = start

    def layer(self, name: str) -> Layer:
        return next(layer for layer in self.layers if layer.name == name)

    def parameters(self) -> dict[str, nn.Parameter]:
        params = dict(self.model.named_parameters())
        return {name: params[name] for name in self.names}

    def flatten(self, tensors: Mapping[str, Tensor]) -> Tensor:
        """Per-parameter tensors (gradients, optimiser moments, …), by parameter name, as one flat
        vector in the layout's order."""
        return torch.cat([tensors[name].reshape(-1) for name in self.names])

    def vector(self) -> Tensor:
        """The model's current parameters as a flat vector (a detached copy)."""
        return self.flatten({name: p.detach() for name, p in self.parameters().items()})

    def gradient(self) -> Tensor:
        """The parameters' ``.grad`` as a flat vector."""
        return self.flatten({name: p.grad for name, p in self.parameters().items()})

    def split(self, v: Tensor) -> dict[str, Tensor]:
        """A flat vector as views shaped like the parameters, by parameter name."""
        if v.shape != (self.size,):
            raise ValueError(f"a parameter vector of this model has {self.size} entries, got shape {tuple(v.shape)}")
        params = self.parameters()
        return {name: v[span].view_as(params[name]) for name, span in self.spans.items()}
