"""Complexity measures of a trained network (George thesis §6.4.2, Fig 6.6): the norm- and
margin-based measures the literature compares against, and the thesis's learning-flow measure.

A network's *layers* are its modules that own a weight of two or more dimensions (Linear, Conv),
in forward order; W_l is layer l's weight (a convolution's kernel reshaped to out × in·k·k) and
W_l⁰ its initial value. Margin-based measures divide by γ, a low quantile of the training margins
f(x)_y − max_{y′≠y} f(x)_{y′} (Neyshabur et al. 2017a take the 5th percentile), so that rescaling
the outputs does not change them. Constants and logarithmic factors of the bounds are dropped:
only how a measure varies across networks matters.

* Sum and product of Frobenius norms: Σ_l ‖W_l‖_F, and Π_l ‖W_l‖_F / γ (Neyshabur et al. 2015).
* Spectral bound (Bartlett et al. 2017, Thm 1.1): R_A / γ with the spectral complexity
  R_A = (Π_l ‖W_l‖_σ) (Σ_l ‖(W_l − W_l⁰)ᵀ‖_{2,1}^{2/3} / ‖W_l‖_σ^{2/3})^{3/2}, reference
  matrices W_l⁰ (the initial weights) and 1-Lipschitz activations (ReLU, max-pooling); ‖Aᵀ‖_{2,1}
  sums the row norms of A. A convolution's ‖·‖_σ is that of its reshaped kernel (as Jiang et al.
  2020), not of the convolution operator.
* ℓ2 path-norm (Neyshabur et al. 2015): sqrt(Σ_paths Π_{edges} w²) / γ, a bias being the weight
  of an edge from a constant input 1; computed as the squared network (every parameter squared)
  applied to an all-ones input, summed over outputs (max-pooling keeps one path per window).
* Distance to initialisation ‖w − w⁰‖_2 over all parameters (Nagarajan & Kolter 2019).
* Fisher–Rao norm (Liang et al. 2019): ‖w‖²_fr = ⟨w, I(w) w⟩ with the empirical Fisher of the
  training loss, = (1/m) Σ_i ⟨w, ∇_w ℓ(f_w(x_i), y_i)⟩², reported as its square root; for a
  bias-free ReLU network with L hidden layers ⟨w, ∇_w ℓ⟩ = (L+1) ⟨∂ℓ/∂f, f⟩ (their Lemma 2.1).
* Neyshabur et al. 2019 (Thm 1, two-layer ReLU nets f(x) = V [U x]_+ only, None for any other
  network): (1/(γ m)) Σ_j ‖v_j‖_2 (‖u_j − u_j⁰‖_2 ‖X‖_F + ‖X u_j⁰‖_2), v_j the j-th column of V
  and u_j the j-th row of U; the hidden biases extend u_j with a weight on a constant input 1.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.func import functional_call, jvp

MEASURES = ("frobenius_sum", "frobenius_product", "spectral", "path_norm", "distance_to_init", "fisher_rao",
            "neyshabur")


def weight_layers(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """(name, module) of every module owning a weight of two or more dimensions, in module order."""
    return [(name, module) for name, module in model.named_modules()
            if isinstance(getattr(module, "weight", None), Tensor) and module.weight.dim() >= 2]


def weight_matrices(model: nn.Module, parameters: dict[str, Tensor] | None = None) -> list[Tensor]:
    """W_l of every layer as a float64 matrix out × (everything else); from ``parameters`` (by
    name, e.g. the initial weights) when given, else the model's own."""
    matrices = []
    for name, module in weight_layers(model):
        weight = module.weight if parameters is None else parameters[f"{name}.weight" if name else "weight"]
        matrices.append(weight.detach().double().reshape(weight.shape[0], -1))
    return matrices


def frobenius_sum(model: nn.Module) -> float:
    return float(sum(torch.linalg.matrix_norm(w) for w in weight_matrices(model)))


def frobenius_product(model: nn.Module, margin: float = 1.0) -> float:
    return math.prod(float(torch.linalg.matrix_norm(w)) for w in weight_matrices(model)) / margin


def spectral_complexity(model: nn.Module, initial: dict[str, Tensor]) -> float:
    """R_A of Bartlett et al. (2017) with the initial weights as reference matrices."""
    spectral, ratios = 1.0, 0.0
    for w, w0 in zip(weight_matrices(model), weight_matrices(model, initial)):
        sigma = float(torch.linalg.matrix_norm(w, ord=2))
        spectral *= sigma
        ratios += float((w - w0).norm(dim=1).sum()) ** (2 / 3) / sigma ** (2 / 3)
    return spectral * ratios ** 1.5


def path_norm(model: nn.Module, input_shape: tuple[int, ...], margin: float = 1.0) -> float:
    """ℓ2 path-norm: the squared network on an all-ones input of one example's ``input_shape``."""
    squared = {name: p.detach().double() ** 2 for name, p in model.named_parameters()}
    buffers = {name: b.double() if b.is_floating_point() else b for name, b in model.named_buffers()}
    ones = torch.ones((1, *input_shape), dtype=torch.float64, device=next(model.parameters()).device)
    with torch.no_grad():
        total = functional_call(model, (squared, buffers), (ones,)).sum()
    return float(total.sqrt()) / margin


def distance_to_init(model: nn.Module, initial: dict[str, Tensor]) -> float:
    return float(torch.sqrt(sum(((p.detach().double() - initial[name].double()) ** 2).sum()
                                for name, p in model.named_parameters())))


def fisher_rao_norm(model: nn.Module, x: Tensor, y: Tensor, batch_size: int = 1000) -> float:
    """sqrt((1/m) Σ_i ⟨w, ∇_w ℓ_i⟩²) with ℓ the cross-entropy on the labels trained on: one
    forward-mode derivative of the per-example losses along w itself per batch."""
    params = {name: p.detach() for name, p in model.named_parameters()}
    buffers = dict(model.named_buffers())
    total = 0.0
    for start in range(0, len(x), batch_size):
        xb, yb = x[start:start + batch_size], y[start:start + batch_size]

        def losses(p, xb=xb, yb=yb):
            return F.cross_entropy(functional_call(model, (p, buffers), (xb,)), yb, reduction="none")

        _, along_w = jvp(losses, (params,), (params,))
        total += float((along_w.double() ** 2).sum())
    return math.sqrt(total / len(x))


def two_layer_relu(model: nn.Module) -> tuple[nn.Linear, nn.Linear] | None:
    """(hidden, output) Linear layers of f(x) = V [U x + b]_+ + c (a Flatten allowed in front), or
    None for any other network."""
    body = [m for m in model.children() if not isinstance(m, nn.Flatten)] if isinstance(model, nn.Sequential) else []
    if len(body) == 3 and isinstance(body[0], nn.Linear) and isinstance(body[1], nn.ReLU) \
            and isinstance(body[2], nn.Linear):
        return body[0], body[2]
    return None


def _with_bias(layer: nn.Linear, weight: Tensor, bias: Tensor | None) -> Tensor:
    """[U, b]: the hidden layer's rows with the bias as the weight of a constant input."""
    weight = weight.detach().double()
    return weight if bias is None else torch.cat([weight, bias.detach().double()[:, None]], dim=1)


def neyshabur_two_layer(model: nn.Module, initial: dict[str, Tensor], x: Tensor, margin: float = 1.0,
                        batch_size: int = 4096) -> float | None:
    """Neyshabur et al. (2019), Thm 1's capacity term (constants dropped); None unless the model
    is a one-hidden-layer ReLU MLP."""
    layers = two_layer_relu(model)
    if layers is None:
        return None
    hidden, output = layers
    names = {module: name for name, module in model.named_modules()}
    prefix = names[hidden]
    u = _with_bias(hidden, hidden.weight, hidden.bias)
    u0 = _with_bias(hidden, initial[f"{prefix}.weight"], initial.get(f"{prefix}.bias") if hidden.bias is not None
                    else None)
    v_norms = output.weight.detach().double().norm(dim=0)  # ‖v_j‖: column j of V
    x_flat = x.reshape(len(x), -1).double()
    if hidden.bias is not None:
        x_flat = torch.cat([x_flat, x_flat.new_ones(len(x_flat), 1)], dim=1)
    initial_outputs = sum((x_flat[s:s + batch_size] @ u0.T).pow(2).sum(0)  # ‖X u_j⁰‖² per unit
                          for s in range(0, len(x_flat), batch_size)).sqrt()
    terms = v_norms * ((u - u0).norm(dim=1) * x_flat.norm() + initial_outputs)
    return float(terms.sum()) / (margin * len(x))


class UpdateNormTracker:
    """Σ_t ‖δw_t‖_2, the norms of the actual optimiser updates w_t − w_{t−1}, accumulated exactly at
    every step in float64 (a ``SupervisedLearner`` tracker). The norm of the displacement between
    two evaluations, which the authors' code logs, only bounds it from below (the triangle inequality)."""

    def __init__(self, model: nn.Module):
        self.parameters = [p for p in model.parameters() if p.requires_grad]
        self.total = torch.zeros((), dtype=torch.float64, device=self.parameters[0].device)
        self._before: list[Tensor] | None = None

    def before_step(self, indices: Tensor | None = None) -> None:
        self._before = [p.detach().clone() for p in self.parameters]

    def after_step(self) -> None:
        if self._before is None:
            raise RuntimeError("after_step without before_step")
        squared = sum(((p.detach() - b).double() ** 2).sum() for p, b in zip(self.parameters, self._before))
        self.total += squared.sqrt()
        self._before = None

    def state_dict(self) -> dict:
        return {"total": self.total.clone()}

    def load_state_dict(self, state: dict) -> None:
        self.total = state["total"].clone().to(self.total.device)


@torch.no_grad()
def margins(model: nn.Module, x: Tensor, y: Tensor, batch_size: int = 1000) -> Tensor:
    """f(x)_y − max_{y′≠y} f(x)_{y′} of every example (float64)."""
    values = []
    for start in range(0, len(x), batch_size):
        logits = model(x[start:start + batch_size]).double()
        labels = y[start:start + batch_size]
        true = logits.gather(1, labels[:, None])[:, 0]
        others = logits.scatter(1, labels[:, None], -math.inf).amax(1)
        values.append(true - others)
    return torch.cat(values)


def complexity_measures(model: nn.Module, initial: dict[str, Tensor], x: Tensor, y: Tensor,
                        margin_quantile: float = 0.05) -> dict[str, float | None]:
    """Every measure of ``MEASURES`` of the trained ``model`` (``initial``: its parameters at
    initialisation, by name) on its training set (x, y: the labels it was trained on), and the
    margin γ (the ``margin_quantile`` quantile of the training margins) the bounds divide by. A
    non-positive γ (a network that does not fit its training set) leaves the margin-based
    measures undefined (NaN)."""
    model.eval()
    gamma = float(torch.quantile(margins(model, x, y), margin_quantile))
    bound_margin = gamma if gamma > 0 else math.nan
    neyshabur = neyshabur_two_layer(model, initial, x, bound_margin)
    return {
        "margin": gamma,
        "frobenius_sum": frobenius_sum(model),
        "frobenius_product": frobenius_product(model, bound_margin),
        "spectral": spectral_complexity(model, initial) / bound_margin,
        "path_norm": path_norm(model, tuple(x.shape[1:]), bound_margin),
        "distance_to_init": distance_to_init(model, initial),
        "fisher_rao": fisher_rao_norm(model, x, y),
        "neyshabur": neyshabur,
    }
