"""A network's first-order Taylor expansion at its initialisation, as a module any optimiser and
training loop can train:

    f_lin(x; θ) = f(x; θ₀) + J_θ f(x; θ₀) (θ − θ₀),

the finite-width "NTK" model of Karp's chapter 3 (a kernel machine with the empirical tangent
kernel at θ₀, trained in parameter space). The wrapped network's parameters are θ; a frozen copy
holds θ₀. One forward is one forward-mode JVP at θ₀ with tangent θ − θ₀ (``iterative``'s
``linearised_outputs``); backpropagating through its tangent gives J₀ᵀ ∂ℓ/∂f.

BatchNorm: the expansion is taken of the network in inference form, on per-channel statistics
computed at θ₀ over the training inputs (``statistics_inputs``), so f_lin is a per-example function
and exactly affine in θ (γ and β are linearised like every other parameter). The authors' JAX model
kept batch statistics inside its linearisation instead; runs record which one they use.
The network must therefore be built with running-statistics BatchNorm layers.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable

from torch import Tensor, nn
from torch.nn.modules.batchnorm import _BatchNorm

from ..parameters import trainable_parameters
from .iterative import batchnorm_statistics, linearised_outputs


class Linearised(nn.Module):
    """``network`` linearised at its current parameters θ₀. ``statistics_inputs`` (a callable giving
    training batches) is needed exactly when the network has BatchNorm layers."""

    def __init__(self, network: nn.Module, statistics_inputs: Callable[[], Iterable[Tensor]] | None = None):
        super().__init__()
        norms = [m for m in network.modules() if isinstance(m, _BatchNorm)]
        if any(not norm.track_running_stats for norm in norms):
            raise ValueError("the linearisation runs BatchNorm on statistics frozen at θ₀: build the network "
                             "with running-statistics BatchNorm (batch_statistics='running')")
        if norms and statistics_inputs is None:
            raise ValueError("a BatchNorm network needs statistics_inputs (training batches) for θ₀'s statistics")
        self.network = network
        self.initial = copy.deepcopy(network)
        for parameter in self.initial.parameters():
            parameter.requires_grad_(False)
        if norms:
            statistics = batchnorm_statistics(self.initial, dict(self.initial.named_parameters()),
                                              statistics_inputs())
            for name, buffer in self.initial.named_buffers():
                buffer.copy_(statistics[name])
        self.initial.eval()

    def train(self, mode: bool = True) -> Linearised:
        super().train(mode)
        self.initial.eval()  # f(·; θ₀) and its JVP are evaluated in inference form, always
        return self

    def forward(self, x: Tensor) -> Tensor:
        base = dict(self.initial.named_parameters())
        delta = {name: p - base[name] for name, p in trainable_parameters(self.network).items()}
        return linearised_outputs(self.initial, base, delta, x, dict(self.initial.named_buffers()))
