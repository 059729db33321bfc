"""α-scaling (Chizat et al. 2019; George thesis eq. 5.2.4): a knob between a network's standard
training (α = 1) and its linearised, lazy training (α → ∞).

    f^α_θ(x) = α (f_θ(x) − f_θ₀(x))  [+ f_θ₀(x) with ``keep_initial_output``]

with θ₀ the frozen initial parameters, trained with the learning rate η/α² on the gradient of
ℓ(f^α): parameters move O(1/α) while the function moves O(1), so for large α the tangent kernel
stays at its initial value. The author's code subtracts the initial output (every run starts from
the zero function, an initial loss of exactly log C): ``keep_initial_output=False`` is that, and
the default; eq. 5.2.4 keeps it.

The learning-rate rule is applied once, to the optimiser's rate, whatever the optimiser (as in
the author's code: takes 1/α from back-propagating through the unscaled output and 1/α in the
rate, the same step for SGD with momentum; applying both to the autograd gradient of ℓ(f^α)
would give η/α³).

BatchNorm in training mode makes α-scaling ill-defined (App. C.4: the batch statistics move
with θ and α amplifies them): it is refused, unless ``frozen_batch_norm`` keeps every BatchNorm
layer in evaluation mode with its running statistics fixed (γ and β still train), as the
Waterbirds runs do.
"""

from __future__ import annotations

import copy

import torch
from torch import Tensor, nn

from ..train.optimisers import build_optimiser

BATCH_NORMS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)


def alpha_learning_rate(lr: float, alpha: float) -> float:
    """The optimiser's rate for the base rate η at scale α: η / α²."""
    if alpha <= 0:
        raise ValueError(f"α must be positive, got {alpha}")
    return lr / alpha**2


def alpha_scaled(outputs: Tensor, initial_outputs: Tensor, alpha: float, keep_initial_output: bool = False) -> Tensor:
    """f^α from f_θ(x) and f_θ₀(x): the one formula every α-scaled model uses."""
    scaled = alpha * (outputs - initial_outputs)
    return scaled + initial_outputs if keep_initial_output else scaled


def _batch_norms(model: nn.Module) -> list[nn.Module]:
    return [m for m in model.modules() if isinstance(m, BATCH_NORMS)]


class AlphaScaled(nn.Module):
    """``network`` seen through α-scaling. ``network`` is the trained f_θ (its parameters are the
    wrapper's trainable ones); ``initial`` is a frozen copy made at construction, θ₀. Both are
    submodules, so θ₀ travels with the wrapper's state dict (a resumed run keeps its θ₀)."""

    def __init__(self, network: nn.Module, alpha: float, keep_initial_output: bool = False,
                 frozen_batch_norm: bool = False):
        super().__init__()
        if alpha <= 0:
            raise ValueError(f"α must be positive, got {alpha}")
        if _batch_norms(network) and not frozen_batch_norm:
            raise ValueError("α-scaling is ill-defined with BatchNorm in training mode (thesis App. C.4): "
                             "remove the BatchNorm layers or pass frozen_batch_norm=True to keep their "
                             "running statistics fixed")
        self.network = network
        self.initial = copy.deepcopy(network)
        for parameter in self.initial.parameters():
            parameter.requires_grad_(False)
        self.alpha, self.keep_initial_output = float(alpha), keep_initial_output
        self.frozen_batch_norm = frozen_batch_norm
        self.train(network.training)

    def train(self, mode: bool = True) -> AlphaScaled:
        super().train(mode)
        self.initial.eval()  # θ₀'s function is fixed: no dropout, no batch statistics
        if self.frozen_batch_norm:
            for norm in _batch_norms(self.network):
                norm.eval()
        return self

    def forward(self, x: Tensor) -> Tensor:
        with torch.no_grad():
            initial = self.initial(x)
        return alpha_scaled(self.network(x), initial, self.alpha, self.keep_initial_output)


def alpha_scaled_optimiser(model: AlphaScaled, spec: dict) -> torch.optim.Optimizer:
    """Any optimiser of ``train.optimisers`` (``{"name": "sgd", "lr": η, "momentum": 0.9}``) on
    f^α's trainable parameters, its rate set to the effective η/α²."""
    spec = {**spec, "lr": alpha_learning_rate(spec["lr"], model.alpha)}
    return build_optimiser(spec, [p for p in model.network.parameters() if p.requires_grad])
