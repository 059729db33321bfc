"""Models of one architecture as one batched computation (as ``torch.func.stack_module_state`` and
``vmap``): each member's parameters (and buffers) stacked on a new leading member axis, and every
member's forward pass at once. Karp ch. 2's lockstep pairs, George ch. 5's α-scaled runs and the
interpolation curves all batch their members this way."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn
from torch.func import functional_call, vmap


def stacked(states: Sequence[dict[str, Tensor]]) -> dict[str, Tensor]:
    """{name: tensor with a leading member axis} of M parameter (or buffer) dicts of one
    architecture (detached)."""
    return {name: torch.stack([state[name].detach() for state in states]) for name in states[0]}


def stacked_parameters(models: Sequence[nn.Module]) -> dict[str, Tensor]:
    """The parameters of M models of one architecture, stacked (detached)."""
    return stacked([dict(model.named_parameters()) for model in models])


def unstacked(params: dict[str, Tensor], member: int) -> dict[str, Tensor]:
    """Member ``member``'s tensors (copies)."""
    return {name: tensor[member].detach().clone() for name, tensor in params.items()}


def member_outputs(model: nn.Module, params: dict[str, Tensor], buffers: dict[str, Tensor], inputs: Tensor, *,
                   train: bool, shared_inputs: bool = False) -> Tensor:
    """The outputs (M, B, …) of M members of ``model`` (stacked parameters and buffers) on their own
    inputs (M, B, …), or on the same inputs (B, …) with ``shared_inputs``. ``train``: BatchNorm on
    batch statistics, updating each member's running statistics in place; else on them."""
    model.train(train)
    call = vmap(lambda p, b, xb: functional_call(model, (p, b), (xb,)), in_dims=(0, 0, None if shared_inputs else 0))
    return call(params, buffers, inputs)
