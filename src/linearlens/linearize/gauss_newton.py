"""Damped Gauss-Newton for a squared loss (Goldwaser & Ge, Eqs. 5-6): every iteration re-linearises
at the current θ and takes the exact minimiser of the damped linearised problem

    ‖f_θ(X) + J Δθ − Y‖² + λ ‖Δθ‖²,   Δθ = −η Jᵀ (J Jᵀ + λ I)⁻¹ r,   r = f_θ(X) − Y,

in its kernel form (n × n with n training outputs, by the push-through identity; the P × P form
(JᵀJ + λI)⁻¹ Jᵀ r is the same step). λ = 0 is the Gauss-Newton step with the pseudo-inverse, the
minimum-norm interpolant of the linearisation; λ → ∞ tends to a gradient step of size η/λ.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ..kernels.ntk import jacobian_from_factors
from ..parameters import ParameterLayout


def damped_gauss_newton_direction(jacobian: Tensor, residuals: Tensor, damping: float) -> Tensor:
    """−Jᵀ (J Jᵀ + λI)⁻¹ r for an (n, P) Jacobian and n residuals (pseudo-inverse when λ = 0)."""
    gram = jacobian @ jacobian.T
    if damping == 0:
        coefficients = torch.linalg.pinv(gram, hermitian=True) @ residuals
    else:
        identity = torch.eye(len(gram), dtype=gram.dtype, device=gram.device)
        coefficients = torch.linalg.solve(gram + damping * identity, residuals)
    return -jacobian.T @ coefficients


@torch.no_grad()
def damped_gauss_newton_step(model: nn.Module, x: Tensor, y: Tensor, damping: float, step_size: float = 1.0) -> bool:
    """One damped Gauss-Newton step of a one-output network on (x, y), in place. Returns False
    (leaving θ unchanged) when the step is not finite."""
    with torch.enable_grad():
        jacobian = jacobian_from_factors(model, x)[:, 0, :]  # (n, P) in named_parameters order
    residuals = model(x).reshape(-1) - y.reshape(-1)
    step = step_size * damped_gauss_newton_direction(jacobian, residuals, damping)
    if not torch.isfinite(step).all():
        return False
    layout = ParameterLayout(model)
    parameters = layout.parameters()
    for name, piece in layout.split(step).items():
        parameters[name] += piece
    return True


def rmse(predictions: Tensor, targets: Tensor) -> float:
    return float(torch.sqrt(((predictions.reshape(-1) - targets.reshape(-1)) ** 2).mean()))


class GaussNewtonLearner:
    """Damped Gauss-Newton as a training session's learner: every step is full batch (the
    session's indices are ignored) and ``finite`` says whether the last step could be taken
    (a stopping rule ends the run when it could not)."""

    def __init__(self, model: nn.Module, x: Tensor, y: Tensor, damping: float, step_size: float = 1.0):
        self.model, self.x, self.y, self.damping, self.step_size = model, x, y, damping, step_size
        self.finite = True

    def step(self, indices: Tensor, step: int) -> Tensor:
        with torch.no_grad():
            loss = ((self.model(self.x).reshape(-1) - self.y.reshape(-1)) ** 2).mean()
        self.finite = damped_gauss_newton_step(self.model, self.x, self.y, self.damping, self.step_size)
        return loss

    def stopped(self, session) -> bool:
        return not self.finite
