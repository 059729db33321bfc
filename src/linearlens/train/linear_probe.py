"""Linear probes (Alain & Bengio 2017): multinomial logistic regression with an L2 penalty on
standardised features, fitted full batch with L-BFGS on the features' own device and in their dtype.

The standardisation and the objective are scikit-learn's ``StandardScaler`` followed by
``LogisticRegression(C=c, max_iter=max_iter, tol=tol)`` (lbfgs, multinomial, intercept not
penalised): mean cross-entropy + ‖W‖² / (2·C·n), stopped when the largest gradient component is
at most ``tol`` or after ``max_iter`` iterations. So a probe reaches that pipeline's optimum, but
where the features are (a GPU at paper scale) instead of in float64 NumPy on the CPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from .runtime import full_float32


@dataclass
class Standardiser:
    """Per-feature centring and scaling with training-set statistics. A feature indistinguishable
    from a constant (a dead ReLU unit) keeps scale 1 instead of being divided by rounding noise."""

    mean: Tensor
    scale: Tensor

    @classmethod
    def fit(cls, x: Tensor, block: int = 1024) -> Standardiser:
        # float64 accumulators, a block of features at a time: no float64 copy of all features
        variance, mean = (torch.cat(parts) for parts in zip(*(
            torch.var_mean(features.double(), dim=0, correction=0) for features in x.split(block, dim=1))))
        n, eps = len(x), torch.finfo(torch.float64).eps
        # the error bound of two-pass variance (Chan, Golub & LeVeque): below it, no spread is seen
        constant = variance <= n * eps * variance + (n * mean * eps) ** 2
        scale = torch.where(constant, torch.ones_like(variance), variance.sqrt())
        return cls(mean.to(x.dtype), scale.to(x.dtype))

    def __call__(self, x: Tensor) -> Tensor:
        return (x - self.mean).div_(self.scale)  # one copy of the features, not two


def probe_objective(weight: Tensor, bias: Tensor, x: Tensor, targets: Tensor, c: float) -> Tensor:
    """Mean cross-entropy of the logits x·Wᵀ + b plus ‖W‖² / (2·C·n): scikit-learn's lbfgs
    objective (its C·Σ loss + ½‖W‖², divided by C·n). ``targets`` index the classes of ``weight``."""
    return F.cross_entropy(x @ weight.T + bias, targets) + weight.square().sum() / (2 * c * len(x))


@dataclass
class LinearProbe:
    standardiser: Standardiser
    weight: Tensor   # (classes, features), on standardised features
    bias: Tensor     # (classes,)
    classes: Tensor  # the labels seen in training, in the order of weight's rows
    iterations: int
    gradient_norm: float  # largest gradient component at the end (converged: ≤ tol)

    def predict(self, x: Tensor) -> Tensor:
        with torch.no_grad():
            return self.classes[(self.standardiser(x) @ self.weight.T + self.bias).argmax(1)]

    def accuracy(self, x: Tensor, y: Tensor) -> float:
        return float((self.predict(x) == y).double().mean())


@full_float32()  # TF32 products would leave the gradient too coarse to reach ``tol`` on CUDA
def fit_linear_probe(x: Tensor, y: Tensor, c: float = 1.0, max_iter: int = 100, tol: float = 1e-4,
                     history: int = 10) -> LinearProbe:
    """Fit the probe to features ``x`` (examples × features) and labels ``y`` on their device and
    in x's dtype (float32 reaches the optimum's test accuracy; float64 its objective to ~1e-12).
    ``history``: L-BFGS's stored curvature pairs (scipy's default, as scikit-learn uses)."""
    standardiser = Standardiser.fit(x)
    standardised = standardiser(x)
    classes, targets = torch.unique(y, return_inverse=True)
    weight = torch.zeros(len(classes), x.shape[1], dtype=x.dtype, device=x.device, requires_grad=True)
    bias = torch.zeros(len(classes), dtype=x.dtype, device=x.device, requires_grad=True)
    # strong-Wolfe line searches as scipy's L-BFGS-B; evaluations bounded only as a safeguard. It
    # also stops where scikit-learn's does once the objective (below 1 there) changes by less than
    # 64 float64 epsilons: float32's epsilon instead would stop a nearly separable probe (objective
    # ~1e-3) 1% above where scikit-learn gets.
    solver = torch.optim.LBFGS([weight, bias], lr=1, max_iter=max_iter, max_eval=20 * max_iter,
                               tolerance_grad=tol, tolerance_change=64 * torch.finfo(torch.float64).eps,
                               history_size=history, line_search_fn="strong_wolfe")

    def closure():
        solver.zero_grad()
        loss = probe_objective(weight, bias, standardised, targets, c)
        loss.backward()
        return loss

    solver.step(closure)
    closure()
    largest = max(float(weight.grad.abs().max()), float(bias.grad.abs().max()))
    return LinearProbe(standardiser, weight.detach(), bias.detach(), classes, solver.state[weight]["n_iter"],
                       largest)

