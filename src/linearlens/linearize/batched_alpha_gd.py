"""Full-batch gradient descent of many α-scaled runs of one small architecture at once.

Each member m of the batch has its own initial parameters θ₀ᵐ, scale αᵐ, training set (xᵐ, yᵐ)
and step η/αᵐ² (``alpha_scaling``); all members go through one batched forward pass over their
stacked parameters (``linearlens.ensembles``), so a hundred runs of a tiny MLP cost about as many kernel launches as one. Each
member trains until its training loss has fallen below every threshold and it has taken at least
``min_iterations`` steps, or for ``max_iterations`` steps; a member that is done leaves the batch.
At the first iteration t whose training loss (at θ_t, before step t) is below a threshold, the
member's per-point losses on a shared evaluation set are recorded: the snapshots at equal training
progress of George's thesis (Fig 5.1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from ..ensembles import member_outputs
from .alpha_scaling import alpha_learning_rate, alpha_scaled

# (outputs, targets) -> per-example losses, same shape
PointLoss = Callable[[Tensor, Tensor], Tensor]


@dataclass
class ThresholdRecord:
    """What each member's run left: per member (rows) and threshold (columns) the first iteration
    below it (-1: never) and the evaluation set's per-point losses there (NaN: never); the
    training loss at ``steps`` (NaN once the member has stopped); the iteration it stopped at and
    its training loss there; its parameters there (stacked like ``initial``)."""

    thresholds: np.ndarray  # (K,) in the order given
    crossing_iteration: np.ndarray  # (M, K) int
    eval_losses: np.ndarray  # (M, K, G)
    steps: np.ndarray  # (C,)
    train_loss: np.ndarray  # (M, C)
    stop_iteration: np.ndarray  # (M,)
    final_loss: np.ndarray  # (M,)
    parameters: dict[str, Tensor]


def batched_outputs(network: nn.Module, params: dict[str, Tensor], x: Tensor, shared_inputs: bool = False) -> Tensor:
    """f_θᵐ on each member's inputs (x: (M, n, d)) or on one shared set (x: (n, d)), scalar output:
    (M, n)."""
    outputs = member_outputs(network, params, {}, x, train=True, shared_inputs=shared_inputs)
    return outputs.reshape(outputs.shape[:2])


def threshold_gd(network: nn.Module, initial: dict[str, Tensor], alphas: list[float], lr: float, x: Tensor,
                 y: Tensor, loss: PointLoss, thresholds: list[float], min_iterations: int, max_iterations: int,
                 record_steps: list[int], x_eval: Tensor, y_eval: Tensor) -> ThresholdRecord:
    """Train every member (``initial`` stacked θ₀, ``alphas`` (M,), ``x`` (M, n, d), ``y`` (M, n))
    by full-batch GD on the mean of ``loss`` over its examples of f^α = α(f_θ − f_θ₀) (the centred
    output of the author's code), and record as ``ThresholdRecord`` says. ``x_eval``, ``y_eval``:
    the shared evaluation set.

    Its own loop, not a learner of ``train.session``: a session evaluates and stops a run on the
    run's one loss, and here each member crosses its thresholds and stops at its own step."""
    members, n_thresholds = len(alphas), len(thresholds)
    device = x.device
    scale = torch.as_tensor(alphas, dtype=x.dtype, device=device)
    step_sizes = torch.as_tensor([alpha_learning_rate(lr, a) for a in alphas], dtype=x.dtype, device=device)
    limits = torch.as_tensor(thresholds, dtype=x.dtype, device=device)
    # f_θ₀ never changes: computed once here, not at every step
    initial_train = batched_outputs(network, initial, x).detach()
    initial_eval = batched_outputs(network, initial, x_eval, shared_inputs=True).detach()

    crossing = torch.full((members, n_thresholds), -1, dtype=torch.long, device=device)
    eval_losses = torch.full((members, n_thresholds, len(x_eval)), float("nan"), dtype=x.dtype, device=device)
    columns = {step: column for column, step in enumerate(record_steps)}
    train_loss = torch.full((members, len(record_steps)), float("nan"), dtype=x.dtype, device=device)
    stop = torch.full((members,), max_iterations, dtype=torch.long, device=device)
    final = torch.full((members,), float("nan"), dtype=x.dtype, device=device)
    stopped = {name: torch.empty_like(value) for name, value in initial.items()}

    active = torch.arange(members, device=device)
    params = {name: value.detach().clone().requires_grad_() for name, value in initial.items()}
    for step in range(max_iterations + 1):
        outputs = alpha_scaled(batched_outputs(network, params, x[active]), initial_train[active], scale[active, None])
        losses = loss(outputs, y[active]).mean(dim=1)
        current = losses.detach()
        if step in columns:
            train_loss[active, columns[step]] = current
        newly = (current[:, None] < limits[None]) & (crossing[active] < 0)
        if newly.any():
            rows = newly.any(dim=1).nonzero().reshape(-1)
            _record_crossings(network, params, rows, active, newly, step, crossing, eval_losses, initial_eval,
                              scale, x_eval, y_eval, loss)
        done = (crossing[active] >= 0).all(dim=1) & (step >= min_iterations) | (step == max_iterations)
        if done.any():
            stop[active[done]], final[active[done]] = step, current[done]
            for name, value in params.items():
                stopped[name][active[done]] = value.detach()[done]
            if done.all():
                break
        _gradient_step(params, losses, step_sizes[active])
        if done.any():  # the members that are done leave the batch
            active = active[~done]
            params = {name: value.detach()[~done].requires_grad_() for name, value in params.items()}

    return ThresholdRecord(np.asarray(thresholds, dtype=float), crossing.cpu().numpy(), eval_losses.cpu().numpy(),
                           np.asarray(record_steps), train_loss.cpu().numpy(), stop.cpu().numpy(),
                           final.cpu().numpy(), stopped)


def _gradient_step(params: dict[str, Tensor], losses: Tensor, rates: Tensor) -> None:
    """θᵐ ← θᵐ − rateᵐ ∇ℓᵐ(θᵐ) for every member at once: the gradient of the summed losses is each
    member's own gradient on its own parameters."""
    gradients = torch.autograd.grad(losses.sum(), list(params.values()))
    with torch.no_grad():
        for value, gradient in zip(params.values(), gradients):
            value.sub_(rates.reshape(-1, *[1] * (value.dim() - 1)) * gradient)


@torch.no_grad()
def _record_crossings(network, params, rows, active, newly, step, crossing, eval_losses, initial_eval, scale,
                      x_eval, y_eval, loss) -> None:
    """The evaluation losses of the active members ``rows`` at θ_step, stored for each threshold
    they have just crossed."""
    members = active[rows]
    chosen = {name: value[rows] for name, value in params.items()}
    outputs = alpha_scaled(batched_outputs(network, chosen, x_eval, shared_inputs=True), initial_eval[members],
                           scale[members, None])
    point_losses = loss(outputs, y_eval.expand_as(outputs))
    for row, member in enumerate(members.tolist()):
        for threshold in newly[rows[row]].nonzero().reshape(-1).tolist():
            crossing[member, threshold] = step
            eval_losses[member, threshold] = point_losses[row]
