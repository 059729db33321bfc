"""A network as a function of one flat parameter vector: the view the telescoping model, the
smoother and iterative linearisation share. The order is that of ``model.named_parameters()``
(trainable ones only), the order optimisers and ``per_example_jacobian`` use."""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.func import functional_call, jvp


def trainable(model: nn.Module) -> dict[str, nn.Parameter]:
    return {name: p for name, p in model.named_parameters() if p.requires_grad}


def flat_parameters(model: nn.Module) -> Tensor:
    """θ as one detached vector (a copy)."""
    return torch.cat([p.detach().reshape(-1) for p in trainable(model).values()])


def unflatten(model: nn.Module, flat: Tensor) -> dict[str, Tensor]:
    """A flat vector back as {name: tensor shaped like that parameter}."""
    shapes = {name: p.shape for name, p in trainable(model).items()}
    pieces = torch.split(flat, [s.numel() for s in shapes.values()])
    return {name: piece.view(shape) for (name, shape), piece in zip(shapes.items(), pieces)}


def scalar_outputs(out: Tensor) -> Tensor:
    """(n, 1) or (n,) network outputs as (n,); anything wider is refused: the telescoping
    smoother and effective parameters are defined for one output."""
    if out.dim() > 2 or (out.dim() == 2 and out.shape[1] != 1):
        raise ValueError(f"expected one output per example, got outputs of shape {tuple(out.shape)}")
    return out.reshape(-1)


def outputs_at(model: nn.Module, params: dict[str, Tensor], x: Tensor) -> Tensor:
    """f_θ(x) with the parameters ``params`` (by name), leaving the model's own untouched."""
    return scalar_outputs(functional_call(model, params, (x,)))


def directional_derivative(model: nn.Module, flat: Tensor, direction: Tensor, x: Tensor) -> tuple[Tensor, Tensor]:
    """(f_θ(x), ∇f_θ(x)ᵀ v) in one forward-mode pass, for θ = ``flat`` and v = ``direction``."""
    return jvp(lambda params: outputs_at(model, params, x),
               (unflatten(model, flat),), (unflatten(model, direction),))
