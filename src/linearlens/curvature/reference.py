"""The plain route that the representations replace: the dense Fisher from per-example Jacobians
materialised by torch.func (vmap over jacrev), then (1/n) Σ_i J_iᵀ S_iᵀ S_i J_i. The tests'
reference and the benchmark's baseline."""

from __future__ import annotations

import torch
from torch import Tensor

from ..capture import flat_outputs, per_example_jacobians
from ..parameters import ParameterLayout
from ..train.runtime import full_float32
from .sources import FisherSource


@full_float32()
def fisher_by_jacobian(source: FisherSource, chunk_size: int = 64) -> Tensor:
    layout = ParameterLayout(source.model)
    wanted = {name: p.detach() for name, p in layout.parameters().items()}
    total = 0
    for x, seeds in source.chunks(chunk_size):
        jacobians = per_example_jacobians(source.model, x, wanted)
        jacobian = torch.cat([jacobians[name] for name in layout.names], dim=2)  # (m, c, P)
        with torch.no_grad():
            s = seeds(flat_outputs(source.model(x)))
        g = torch.einsum("mkc,mcp->mkp", s, jacobian).flatten(0, 1)
        total = total + g.T @ g
    return total / source.n
