"""The trained network as a smoother of its training labels (Jeffares et al. 2024, Eqs. 7,
14–21), and its effective parameters (Curth, Jeffares & van der Schaar 2023).

Under the telescoping approximation every prediction is affine in the training labels y:
f̃_t(x) = s_t(x)·y + c_t(x). Each step's parameter change is affine in y too, because the loss
gradient uses the telescoped residuals f̃ − y, and every supported optimiser is affine in the
gradient given its state. So we carry ∂θ/∂y (p × n) and the y-free part (p) through exactly the
update the real optimiser makes (same learning rate, momentum flavour, weight-decay coupling, and
Adam's real second moments, taken as given), and map each step to the outputs with the
per-example gradients at θ_{t−1}:

    s(x) += ∇f_{t−1}(x)ᵀ ∂Δθ_t/∂y,     c(x) += ∇f_{t−1}(x)ᵀ Δθ_t|_{y=0}.

For plain SGD the parameter space can be skipped: s(x) −= (γκ/|B|) K_t(x, B)(s(B) − e_B), with
the tangent-kernel block K_t from the layer-wise identity (``SGDKernelSmoother``).
All accumulators are float64. The per-step products that map a step to the outputs may run in
float32 (``product_dtype``): each step's increment then carries a relative rounding error of about
1e-7, far below the telescoping approximation itself, and the dominant (n + m)·p·n product costs
half as much on a CPU and far less on a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ..kernels.ntk import jacobian_from_factors, ntk_block
from ..parameters import ParameterLayout, trainable_parameters
from ..train.losses import LOSS_SCALES
from ..train.optimisers import EMAMomentumSGD
from .functional import scalar_outputs


def effective_parameters(rows: Tensor, n_train: int) -> float:
    """p(I, s) = (n / |I|) Σ_{j∈I} ‖s(x_j)‖² for the smoother rows s(x_j) of the points I."""
    return n_train * float(rows.pow(2).sum()) / rows.shape[0]


@dataclass
class Affine:
    """A parameter-space quantity as a function of the labels: ``labels @ y + constant``."""

    labels: Tensor    # (p, n)
    constant: Tensor  # (p,)

    def __add__(self, other: Affine) -> Affine:
        return Affine(self.labels + other.labels, self.constant + other.constant)

    def __sub__(self, other: Affine) -> Affine:
        return Affine(self.labels - other.labels, self.constant - other.constant)

    def __mul__(self, factor) -> Affine:
        """A scalar, or a p-vector acting as a diagonal (per-parameter) factor."""
        if isinstance(factor, Tensor) and factor.dim() == 1:
            return Affine(self.labels * factor[:, None], self.constant * factor)
        return Affine(self.labels * factor, self.constant * factor)

    __rmul__ = __mul__

    def clone(self) -> Affine:
        return Affine(self.labels.clone(), self.constant.clone())

    def scale_add_(self, factor: float, other: Affine, alpha: float = 1.0) -> Affine:
        """In place: self ← factor · self + alpha · other (no p × n temporaries)."""
        self.labels.mul_(factor).add_(other.labels, alpha=alpha)
        self.constant.mul_(factor).add_(other.constant, alpha=alpha)
        return self


ROW_BLOCK = 256  # rows of a step's output product cast to product_dtype at a time


class Smoother:
    """Rows s(x) and constants c(x) for the training points followed by the evaluation points.
    ``product_dtype``: the precision of the per-step products (the accumulators stay float64)."""

    def __init__(self, model: nn.Module, x_train: Tensor, x_eval: Tensor, loss: str,
                 product_dtype: torch.dtype = torch.float64):
        if loss not in LOSS_SCALES:
            raise ValueError(f"loss must be one of {sorted(LOSS_SCALES)}, got {loss!r}")
        self.model, self.loss_scale = model, LOSS_SCALES[loss]
        self.product_dtype = product_dtype
        self.n_train = len(x_train)
        self.x_all = torch.cat([x_train, x_eval])
        with torch.no_grad():
            self.constants = scalar_outputs(model(self.x_all)).double()
        self.rows = self.constants.new_zeros(len(self.x_all), self.n_train)

    @property
    def train_rows(self) -> Tensor:
        return self.rows[:self.n_train]

    @property
    def eval_rows(self) -> Tensor:
        return self.rows[self.n_train:]

    def predictions(self, y_train: Tensor) -> tuple[Tensor, Tensor]:
        """f̃ = S y + c on the training and on the evaluation points."""
        f = self.rows @ y_train.double() + self.constants
        return f[:self.n_train], f[self.n_train:]

    def effective_parameters(self) -> tuple[float, float]:
        """(p^train, p^test)."""
        return (effective_parameters(self.train_rows, self.n_train),
                effective_parameters(self.eval_rows, self.n_train))

    def state_dict(self) -> dict:
        return {"rows": self.rows.clone(), "constants": self.constants.clone()}

    def load_state_dict(self, state: dict) -> None:
        self.rows.copy_(state["rows"])
        self.constants.copy_(state["constants"])

    def _add_to_rows(self, left: Tensor, right: Tensor, alpha: float = 1.0) -> None:
        """rows += alpha · left @ right: the step's dominant product, in ``product_dtype``,
        accumulated in float64."""
        if self.product_dtype == left.dtype:
            self.rows.addmm_(left, right, alpha=alpha)
            return
        # A block of rows at a time: a full-size copy of ``left`` ((n + m) × p) in product_dtype
        # was the largest allocation of a step at paper width (issue 42).
        right = right.to(self.product_dtype)
        for start in range(0, len(left), ROW_BLOCK):
            block = slice(start, start + ROW_BLOCK)
            self.rows[block].add_(left[block].to(self.product_dtype) @ right, alpha=alpha)

    def _residual(self, batch: Tensor) -> tuple[Tensor, Tensor]:
        """f̃(x_B) − y_B as (∂/∂y: (|B|, n), constant: (|B|,))."""
        labels = self.rows[batch].clone()
        labels[torch.arange(len(batch)), batch] -= 1.0
        return labels, self.constants[batch]


class LabelJacobianSmoother(Smoother):
    """Any supported optimiser: torch SGD (heavy-ball, dampening, Nesterov, coupled decay),
    ``EMAMomentumSGD`` (bias-corrected EMA momentum), Adam and AdamW; any other is refused when
    the smoother is built (``MIRRORED_OPTIONS``).
    Call ``before_step(batch)`` before and ``after_step()`` after every ``optimizer.step()``."""

    def __init__(self, model, optimizer: torch.optim.Optimizer, x_train, x_eval, loss: str,
                 product_dtype: torch.dtype = torch.float64):
        _check_mirrored(optimizer, type(self).__name__)
        super().__init__(model, x_train, x_eval, loss, product_dtype)
        self.optimizer = _single_group(optimizer, model)
        self.layout = ParameterLayout(model)
        theta = self.layout.vector().double()
        self.theta = Affine(theta.new_zeros(len(theta), self.n_train), theta)
        self.momentum: Affine | None = None
        self.steps = 0
        self._gradients = self._signal = None

    def state_dict(self) -> dict:
        momentum = None if self.momentum is None else self.momentum.clone()
        return {**super().state_dict(), "theta": self.theta.clone(), "momentum": momentum, "steps": self.steps}

    def load_state_dict(self, state: dict) -> None:
        super().load_state_dict(state)
        self.theta = state["theta"].clone()
        self.momentum = None if state["momentum"] is None else state["momentum"].clone()
        self.steps = state["steps"]

    def before_step(self, batch: Tensor) -> None:
        grads = jacobian_from_factors(self.model, self.x_all, output=0)[:, 0, :].double()  # (n + m, p) at θ_{t−1}
        labels, constant = self._residual(batch)
        scale = self.loss_scale / len(batch)
        batch_grads = grads[batch]
        self._gradients = grads
        self._signal = Affine(scale * batch_grads.T @ labels, scale * batch_grads.T @ constant)

    def after_step(self) -> None:
        self.steps += 1
        change = self._update(self._take_signal())  # the signal (p × n) is freed before the product
        self.theta.scale_add_(1.0, change)
        self._add_to_rows(self._gradients, change.labels)  # the (n + m)·p·n product
        self.constants.addmv_(self._gradients, change.constant)
        self._gradients = None

    def _take_signal(self) -> Affine:
        signal, self._signal = self._signal, None
        return signal

    def _update(self, gradient: Affine) -> Affine:
        """Δθ of this step as an affine function of the labels; ``gradient`` may be consumed."""
        group = self.optimizer.param_groups[0]
        if isinstance(self.optimizer, (torch.optim.Adam, torch.optim.AdamW)):
            return self._adam(group, gradient)
        if isinstance(self.optimizer, EMAMomentumSGD):
            beta = group["momentum"]
            self._average(beta, self._coupled_decay(gradient, group["weight_decay"]))
            return (-group["lr"] / (1 - beta ** self.steps)) * self.momentum
        return self._sgd(group, gradient)

    def _coupled_decay(self, gradient: Affine, decay: float) -> Affine:
        return gradient.scale_add_(1.0, self.theta, alpha=decay) if decay else gradient

    def _average(self, beta: float, gradient: Affine) -> None:
        """The EMA first moment m = β m + (1 − β) g, starting from m = 0."""
        if self.momentum is None:
            self.momentum = (1 - beta) * gradient
        else:
            self.momentum.scale_add_(beta, gradient, alpha=1 - beta)

    def _sgd(self, group: dict, gradient: Affine) -> Affine:
        direction = self._coupled_decay(gradient, group["weight_decay"])
        mu = group["momentum"]
        if mu:
            if self.momentum is None:
                self.momentum = direction.clone()
            else:
                self.momentum.scale_add_(mu, direction, alpha=1 - group["dampening"])
            direction = direction.scale_add_(1.0, self.momentum, alpha=mu) if group["nesterov"] \
                else self.momentum
        return -group["lr"] * direction

    def _adam(self, group: dict, gradient: Affine) -> Affine:
        beta1, beta2 = group["betas"]
        lr, decay = group["lr"], group["weight_decay"]
        decoupled = isinstance(self.optimizer, torch.optim.AdamW) or group.get("decoupled_weight_decay", False)
        self._average(beta1, gradient if decoupled else self._coupled_decay(gradient, decay))
        # φ_t from the real optimiser state after this step (it depends on y: taken as given).
        states = {name: self.optimizer.state[p] for name, p in self.layout.parameters().items()}
        second = self.layout.flatten({name: state["exp_avg_sq"] for name, state in states.items()}).double()
        step = float(next(iter(states.values()))["step"])
        denominator = second.sqrt() / (1 - beta2 ** step) ** 0.5 + group["eps"]
        change = self.momentum * ((-lr / (1 - beta1 ** step)) / denominator)
        return change.scale_add_(1.0, self.theta, alpha=-lr * decay) if decoupled and decay else change


class SGDKernelSmoother(Smoother):
    """Plain SGD (no momentum, no weight decay): the smoother from tangent-kernel blocks alone,
    (n + m)·|B|·(p + n) per step instead of (n + m)·p·n."""

    def __init__(self, model, optimizer: torch.optim.Optimizer, x_train, x_eval, loss: str,
                 product_dtype: torch.dtype = torch.float64):
        _check_mirrored(optimizer, type(self).__name__)
        _check_plain_sgd(optimizer)
        super().__init__(model, x_train, x_eval, loss, product_dtype)
        self.optimizer = _single_group(optimizer, model)
        self._kernel = self._batch = None

    def before_step(self, batch: Tensor) -> None:
        self._kernel = ntk_block(self.model, self.x_all, batch, output=0).double()  # batch ⊂ train rows
        self._batch = batch

    def after_step(self) -> None:
        labels, constant = self._residual(self._batch)
        factor = self.optimizer.param_groups[0]["lr"] * self.loss_scale / len(self._batch)
        self._add_to_rows(self._kernel, labels, alpha=-factor)  # the (n + m)·|B|·n product
        self.constants.addmv_(self._kernel, constant, alpha=-factor)
        self._kernel = self._batch = None


def _single_group(optimizer: torch.optim.Optimizer, model: nn.Module) -> torch.optim.Optimizer:
    """The smoother mirrors one parameter group holding the model's trainable parameters in
    order (its flat parameter vector)."""
    params = list(trainable_parameters(model).values())
    groups = optimizer.param_groups
    optimised = [p for p in groups[0]["params"] if p.requires_grad]
    if len(groups) != 1 or len(optimised) != len(params) or \
            any(a is not b for a, b in zip(optimised, params)):
        raise ValueError("the smoother needs one optimiser parameter group with the model's "
                         "trainable parameters in model.named_parameters() order")
    return optimizer


# The optimisers the smoother mirrors, by exact type (a subclass may change the update), with the
# options it replays. Any other option must be off (falsy): e.g. amsgrad and maximize, which change
# the update, and any flag a later torch adds. foreach, fused, capturable and differentiable only
# choose how the same update is computed.
_ADAM_OPTIONS = {"lr", "betas", "eps", "weight_decay", "decoupled_weight_decay"}
MIRRORED_OPTIONS: dict[type, set[str]] = {
    torch.optim.SGD: {"lr", "momentum", "dampening", "weight_decay", "nesterov"},
    EMAMomentumSGD: {"lr", "momentum", "weight_decay"},
    torch.optim.Adam: _ADAM_OPTIONS,
    torch.optim.AdamW: _ADAM_OPTIONS,
}
IMPLEMENTATION_OPTIONS = {"foreach", "fused", "capturable", "differentiable"}


def _check_mirrored(optimizer: torch.optim.Optimizer, smoother_name: str) -> None:
    """Refuse, before any step, an optimiser whose update the smoother would replay wrongly."""
    kind = type(optimizer)
    if kind not in MIRRORED_OPTIONS:
        mirrored = ", ".join(k.__name__ for k in MIRRORED_OPTIONS)
        raise ValueError(f"{smoother_name} cannot mirror {kind.__name__}: it mirrors exactly {mirrored} "
                         "(not subclasses, whose update may differ)")
    known = MIRRORED_OPTIONS[kind] | IMPLEMENTATION_OPTIONS
    for group in optimizer.param_groups:
        # The constructor's options only: a group also holds keys such as a scheduler's initial_lr.
        for option in sorted(optimizer.defaults.keys() - known):
            if group.get(option):
                raise ValueError(f"{smoother_name} cannot mirror {kind.__name__} with "
                                 f"{option}={group[option]!r}")


def _check_plain_sgd(optimizer: torch.optim.Optimizer) -> None:
    group = optimizer.param_groups[0]
    if type(optimizer) is not torch.optim.SGD:
        raise ValueError(f"SGDKernelSmoother mirrors plain SGD only, not {type(optimizer).__name__}; "
                         "use LabelJacobianSmoother")
    for option in ("momentum", "weight_decay"):
        if group[option]:
            raise ValueError("SGDKernelSmoother mirrors plain SGD only, not SGD with "
                             f"{option}={group[option]!r}; use LabelJacobianSmoother")


def smoother_for(model: nn.Module, optimizer: torch.optim.Optimizer, x_train: Tensor, x_eval: Tensor,
                 loss: str, product_dtype: torch.dtype = torch.float64) -> Smoother:
    """The cheapest exact smoother for this optimiser: tangent-kernel blocks for plain SGD, the
    label Jacobian otherwise."""
    group = optimizer.param_groups[0]
    route = SGDKernelSmoother if type(optimizer) is torch.optim.SGD and not group["momentum"] \
        and not group["weight_decay"] else LabelJacobianSmoother
    return route(model, optimizer, x_train, x_eval, loss, product_dtype)
