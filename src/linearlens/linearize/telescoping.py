"""The telescoping model (Jeffares et al. 2024, Eq. 5) and the model
linearised at initialisation, tracked on evaluation points during training.

    f̃_T(x) = f₀(x) + Σ_t ∇f_{t−1}(x)ᵀ Δθ_t,     f^lin_t(x) = f₀(x) + ∇f₀(x)ᵀ (θ_t − θ₀)

Δθ_t is the real parameter change of the step, whatever the optimiser did (momentum, decay,
Adam's scaling), so the accumulator needs no knowledge of the optimiser: one forward-mode JVP per
step at θ_{t−1}. Accumulation is in float64 (10⁵ small increments).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ..parameters import ParameterLayout
from .functional import directional_derivative, scalar_outputs


class TelescopingTracker:
    """Call ``before_step`` before and ``after_step`` after every optimiser step."""

    def __init__(self, model: nn.Module, x_eval: Tensor):
        self.model, self.x_eval = model, x_eval
        self.layout = ParameterLayout(model)
        self.initial = self.layout.vector()
        with torch.no_grad():
            self.initial_outputs = scalar_outputs(model(x_eval)).double()
        self.telescoped = self.initial_outputs.clone()
        self._before: Tensor | None = None

    def before_step(self, batch: Tensor | None = None) -> None:
        self._before = self.layout.vector()

    def after_step(self) -> None:
        if self._before is None:
            raise RuntimeError("after_step without before_step")
        step = self.layout.vector() - self._before
        with torch.no_grad():
            _, change = directional_derivative(self.layout, self._before, step, self.x_eval)
        self.telescoped += change.double()
        self._before = None

    def state_dict(self) -> dict:
        return {"initial": self.initial.clone(), "initial_outputs": self.initial_outputs.clone(),
                "telescoped": self.telescoped.clone()}

    def load_state_dict(self, state: dict) -> None:
        self.initial, self.initial_outputs = state["initial"].clone(), state["initial_outputs"].clone()
        self.telescoped = state["telescoped"].clone()

    def linearised(self) -> Tensor:
        """f^lin at the model's current parameters (one JVP at θ₀; not accumulated)."""
        with torch.no_grad():
            _, change = directional_derivative(self.layout, self.initial, self.layout.vector() - self.initial,
                                               self.x_eval)
        return self.initial_outputs + change.double()
