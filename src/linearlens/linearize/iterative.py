"""Iterative linearisation (Goldwaser & Ge, Algorithm 1).

The network is trained through its first-order Taylor expansion around a base point θ_s,

    f^lin(x) = f_{θ_s}(x) + J_s(x) δ,      δ = θ − θ_s,

and re-linearised every K optimiser steps (θ_s ← θ_s + δ, δ ← 0: one feature update). K = 1 is
ordinary training; K = ∞ trains the linearisation at initialisation, which is kernel gradient
descent with the empirical NTK at θ₀. The loss (softmax cross-entropy by default) is applied to the
linearised logits and is never linearised itself.

δ is what the optimiser trains: any torch optimiser works, and its small updates accumulate in δ
instead of being rounded away against |θ| (a float64 master copy is one option away;
adding a small step to a large float32 θ would lose it). A linearised forward is one forward-mode JVP through ``functional_call`` (primal f_{θ_s},
tangent J_s δ); backpropagating the loss through the tangent gives J_sᵀ ∂L/∂logits.

BatchNorm: within a period the linearised model runs BatchNorm in inference form on
per-channel statistics taken at θ_s from the training data (recomputed at every re-linearisation),
so f_{θ_s} and its JVP are per-example functions and γ, β are linearised like any other
parameter. The network itself is evaluated on statistics recomputed at θ_t the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.func import functional_call, jvp
from torch.nn.modules.batchnorm import _BatchNorm

from ..parameters import trainable_parameters
from ..train.optimisers import build_optimiser
from ..train.session import Session

Loss = Callable[[Tensor, Tensor], Tensor]
NEVER = math.inf  # K = ∞: the features are never updated


def linearised_outputs(model: nn.Module, base: dict[str, Tensor], delta: dict[str, Tensor], x: Tensor,
                       buffers: dict[str, Tensor] | None = None) -> Tensor:
    """f_{θ_s}(x) + J_s(x) δ in one forward-mode pass, θ_s = ``base``, δ = ``delta`` (by name)."""
    state = buffers or {}
    primal, tangent = jvp(lambda params: functional_call(model, (params, state), (x,)), (base,), (delta,))
    return primal + tangent


def has_batch_norm(model: nn.Module) -> bool:
    return any(isinstance(module, _BatchNorm) for module in model.modules())


@torch.no_grad()
def batchnorm_statistics(model: nn.Module, params: dict[str, Tensor], inputs: Iterable[Tensor]) -> dict[str, Tensor]:
    """Every buffer of ``model`` with the BatchNorm statistics at ``params``: the exact average of
    the per-batch statistics over ``inputs`` (train-mode passes without gradients, momentum None)."""
    buffers = {name: buffer.clone() for name, buffer in model.named_buffers()}
    norms = [module for module in model.modules() if isinstance(module, _BatchNorm)]
    momenta = [module.momentum for module in norms]
    for name, buffer in buffers.items():
        if name.endswith(("running_mean", "num_batches_tracked")):
            buffer.zero_()
        elif name.endswith("running_var"):
            buffer.fill_(1.0)
    training = model.training
    try:
        for module in norms:
            module.momentum = None  # a cumulative average over the batches
        model.train()
        for x in inputs:
            functional_call(model, (params, buffers), (x,))
    finally:
        for module, momentum in zip(norms, momenta):
            module.momentum = momentum
        model.train(training)
    return buffers


class Training:
    """What ordinary and linearised training share: the model, the optimised tensors (in the master
    dtype, cast to the model's dtype for every forward), the optimiser, the loss and the step count.

    ``step(x, y)`` takes one optimiser step on a batch (in chunks of ``chunk_size`` examples with
    the exact full-batch gradient accumulated); ``network_logits`` and ``linearised_logits`` evaluate
    the network at θ_t and the model being trained."""

    period: float  # K
    chunks_are_exact = True  # the batch loss is a sum over examples (no batch statistics)

    def __init__(self, model: nn.Module, optimiser: dict, *, loss: Loss = F.cross_entropy,
                 master_dtype: torch.dtype | None = None):
        self.model, self.loss = model, loss
        self.compute_dtype = next(model.parameters()).dtype
        self.master_dtype = master_dtype or self.compute_dtype
        self.optimised = {name: p.detach().to(self.master_dtype).clone().requires_grad_(True)
                          for name, p in trainable_parameters(model).items()}
        self.optimiser = build_optimiser(optimiser, list(self.optimised.values()))
        self.steps = 0
        self.relinearisations = 0

    def _compute(self, tensors: dict[str, Tensor]) -> dict[str, Tensor]:
        return {name: t.to(self.compute_dtype) for name, t in tensors.items()}

    def _training_logits(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def step(self, x: Tensor, y: Tensor, chunk_size: int | None = None) -> Tensor:
        """One optimiser step on the batch (x, y); returns the batch loss (detached)."""
        size = chunk_size or len(x)
        if size < len(x) and not self.chunks_are_exact:
            raise ValueError("chunk_size splits the batch, but the network's BatchNorm normalises "
                             "each chunk by its own statistics: the gradient would not be the batch's")
        self.optimiser.zero_grad(set_to_none=True)
        total = x.new_zeros((), dtype=torch.float64)
        for start in range(0, len(x), size):
            xs, ys = x[start:start + size], y[start:start + size]
            loss = self.loss(self._training_logits(xs), ys) * (len(xs) / len(x))
            loss.backward()
            total += loss.detach()
        self.optimiser.step()
        self.steps += 1
        return total

    def relinearisation_due(self) -> bool:
        """Algorithm 1's "t mod K = 0", on the global step count (mid-epoch where it falls)."""
        return self.period != NEVER and self.steps % self.period == 0

    def parameters_now(self) -> dict[str, Tensor]:
        """θ_t, detached, in the model's dtype."""
        raise NotImplementedError

    def network_logits(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def linearised_logits(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def state_dict(self) -> dict:
        return {"steps": self.steps, "relinearisations": self.relinearisations,
                "optimised": {n: t.detach().clone() for n, t in self.optimised.items()},
                "optimiser": self.optimiser.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.steps, self.relinearisations = state["steps"], state["relinearisations"]
        with torch.no_grad():
            for name, tensor in self.optimised.items():
                tensor.copy_(state["optimised"][name])
        self.optimiser.load_state_dict(state["optimiser"])


class NetworkTraining(Training):
    """Ordinary training of the network on θ (K = 1 without the linearisation's detour): BatchNorm
    in train mode with gradients through the batch statistics and running averages for
    evaluation, as the K = 1 baseline of a BatchNorm network is trained."""

    period = 1

    @property
    def chunks_are_exact(self) -> bool:
        return not has_batch_norm(self.model)  # train-mode BatchNorm uses each chunk's statistics

    def _training_logits(self, x: Tensor) -> Tensor:
        self.model.train()
        return functional_call(self.model, self._compute(self.optimised), (x,))

    def relinearisation_due(self) -> bool:
        return False  # the network is its own linearisation at every step

    def parameters_now(self) -> dict[str, Tensor]:
        return {name: t.detach() for name, t in self._compute(self.optimised).items()}

    @torch.no_grad()
    def network_logits(self, x: Tensor) -> Tensor:
        self.model.eval()
        return functional_call(self.model, self.parameters_now(), (x,))

    linearised_logits = network_logits  # f^lin at θ_t is f itself

    def network_buffers(self) -> dict[str, Tensor]:
        """The buffers the network at θ_t is evaluated with: BatchNorm's running averages."""
        return {name: b.detach().clone() for name, b in self.model.named_buffers()}

    def state_dict(self) -> dict:
        return {**super().state_dict(), "buffers": self.network_buffers()}

    def load_state_dict(self, state: dict) -> None:
        super().load_state_dict(state)
        with torch.no_grad():
            for name, buffer in self.model.named_buffers():
                buffer.copy_(state["buffers"][name])


class LinearisedTraining(Training):
    """Iterative linearisation with period K (``NEVER`` for K = ∞): the optimiser trains δ and
    ``relinearise`` moves the base point. ``reset_optimiser_state`` starts every period with a
    fresh optimiser state (each period is a new convex problem: the Adam-solved variant).

    statistics_inputs: for a BatchNorm network, a callable giving the training batches over which
    the BatchNorm statistics are averaged."""

    def __init__(self, model: nn.Module, optimiser: dict, period: float, *, loss: Loss = F.cross_entropy,
                 master_dtype: torch.dtype | None = None, reset_optimiser_state: bool = False,
                 statistics_inputs: Callable[[], Iterable[Tensor]] | None = None):
        if period != NEVER and (period < 1 or int(period) != period):
            raise ValueError(f"the period K must be a positive integer or infinite, got {period}")
        super().__init__(model, optimiser, loss=loss, master_dtype=master_dtype)
        if any(group.get("weight_decay", 0) for group in self.optimiser.param_groups):
            raise ValueError("weight decay would pull δ = θ − θ_s towards the base point, not θ towards 0: "
                             "linearised training takes none")
        if has_batch_norm(model) and statistics_inputs is None:
            raise ValueError("a BatchNorm network needs statistics_inputs (training batches) for the "
                             "statistics of each linearisation point")
        self.period, self.reset_optimiser_state = period, reset_optimiser_state
        self.statistics_inputs = statistics_inputs
        self.delta = self.optimised
        self.base = {name: t.detach().clone() for name, t in self.delta.items()}
        with torch.no_grad():
            for t in self.delta.values():
                t.zero_()
        self._base_moved()
        self._network_buffers: tuple[int, dict[str, Tensor]] | None = None

    def _base_moved(self) -> None:
        """θ_s in the compute dtype (cast once per linearisation point, not once per forward: with
        float64 masters that is a copy of every parameter) and the BatchNorm statistics there."""
        self.base_compute = self._compute(self.base)
        self.base_buffers = self.statistics_at(self.base)

    def statistics_at(self, params: dict[str, Tensor]) -> dict[str, Tensor]:
        """The buffers the network runs on at ``params``: fresh BatchNorm statistics (or the
        model's own buffers when it has no BatchNorm)."""
        if self.statistics_inputs is None:
            return {name: b for name, b in self.model.named_buffers()}
        return batchnorm_statistics(self.model, self._compute(params), self.statistics_inputs())

    def _training_logits(self, x: Tensor) -> Tensor:
        self.model.eval()  # BatchNorm on the frozen statistics of θ_s: a per-example function
        return linearised_outputs(self.model, self.base_compute, self._compute(self.delta), x,
                                  self.base_buffers)

    @torch.no_grad()
    def relinearise(self) -> None:
        """A feature update: θ_s ← θ_s + δ, δ ← 0 (and fresh BatchNorm statistics at θ_s)."""
        for name, delta in self.delta.items():
            self.base[name] += delta
            delta.zero_()
        if self.reset_optimiser_state:
            self.optimiser.state.clear()
        self._base_moved()
        self.relinearisations += 1

    def parameters_now(self) -> dict[str, Tensor]:
        with torch.no_grad():
            return self._compute({name: self.base[name] + self.delta[name] for name in self.base})

    @torch.no_grad()
    def network_buffers(self) -> dict[str, Tensor]:
        """The buffers the network at θ_t is evaluated with: BatchNorm statistics at θ_t,
        computed once per step (evaluation and checkpoint share them)."""
        if self._network_buffers is None or self._network_buffers[0] != self.steps:
            self._network_buffers = (self.steps, self.statistics_at(self.parameters_now()))
        return self._network_buffers[1]

    @torch.no_grad()
    def network_logits(self, x: Tensor) -> Tensor:
        self.model.eval()
        return functional_call(self.model, (self.parameters_now(), self.network_buffers()), (x,))

    @torch.no_grad()
    def linearised_logits(self, x: Tensor) -> Tensor:
        return self._training_logits(x)

    def state_dict(self) -> dict:
        return {**super().state_dict(), "base": {n: t.clone() for n, t in self.base.items()}}

    def load_state_dict(self, state: dict) -> None:
        super().load_state_dict(state)
        with torch.no_grad():
            for name, tensor in self.base.items():
                tensor.copy_(state["base"][name])
        self._base_moved()
        self._network_buffers = None


def training_for(model: nn.Module, optimiser: dict, period: float, *, linearise_k1: bool = False,
                 **options) -> Training:
    """The training of period K: ordinary training for K = 1 (unless ``linearise_k1``: the
    linearised route at K = 1, which takes the same steps for a network without BatchNorm),
    iterative linearisation otherwise."""
    if period == 1 and not linearise_k1:
        return NetworkTraining(model, optimiser, loss=options.get("loss", F.cross_entropy),
                               master_dtype=options.get("master_dtype"))
    return LinearisedTraining(model, optimiser, period, **options)


class IterativeLearner:
    """Algorithm 1 as a training session's learner (``train.session``): one step of ``training``
    on the batch (augmented by ``augment(x, step)`` when given), and between steps, whenever
    t mod K = 0, a re-linearisation; with ``evaluate_around``, the session evaluates its probes
    just before and just after it."""

    def __init__(self, training: Training, x: Tensor, y: Tensor, *, chunk_size: int | None = None,
                 augment: Callable[[Tensor, int], Tensor] | None = None, evaluate_around: bool = False):
        self.training, self.x, self.y = training, x, y
        self.chunk_size, self.augment, self.evaluate_around = chunk_size, augment, evaluate_around
        self.device = x.device

    def step(self, indices: Tensor, step: int) -> Tensor:
        indices = indices.to(self.device)
        x = self.x[indices]
        if self.augment is not None:
            x = self.augment(x, step)
        return self.training.step(x, self.y[indices], self.chunk_size)

    def after_step(self, session) -> None:
        if not self.training.relinearisation_due():
            return
        if self.evaluate_around:
            session.evaluate("before_relinearisation")
        self.training.relinearise()
        if self.evaluate_around:
            session.evaluate("after_relinearisation")

    def state_dict(self) -> dict:
        return self.training.state_dict()

    def load_state_dict(self, state: dict) -> None:
        self.training.load_state_dict(state)


def train_iteratively(training: Training, x: Tensor, y: Tensor, batches: Callable[[int], Tensor], steps: int,
                      chunk_size: int | None = None) -> None:
    """Algorithm 1 without evaluation: ``steps`` optimiser steps on the batches ``batches(t)``,
    re-linearising whenever t mod K = 0."""
    Session(IterativeLearner(training, x, y, chunk_size=chunk_size), batches, training.steps + steps,
            first_step=training.steps).run()
