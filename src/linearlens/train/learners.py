"""What a session trains (``train.session``): one optimiser step on the mini-batch of given
training indices, and a state to save and resume.

- ``SupervisedLearner``: a module, a torch optimiser, a loss, the training tensors, optional
  augmentation (drawn from a generator seeded by the step, or from the batch order's generator:
  both are part of a saved state), the learning rate of each step (a multiplier of the optimiser's configured rate,
  ``train.schedules``), and trackers that see every step (the telescoping
  accumulator, the smoother: ``before_step(indices)`` before the optimiser step and
  ``after_step()`` after it).
- ``LockstepLearner``: M models of one architecture trained together as one batched computation
  (``linearlens.ensembles``: stacked parameters and buffers), each on its own training set drawn
  from a shared pool (Karp ch. 2's S and S′, which differ in one example), on the same positions
  at every step; BatchNorm keeps each member's running statistics.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

import torch
from torch import Tensor, nn
from torch.func import vmap

from ..ensembles import member_outputs, stacked, unstacked
from .schedules import constant

Loss = Callable[[Tensor, Tensor], Tensor]


def keep_initial_learning_rates(optimizer: torch.optim.Optimizer) -> None:
    """Record each group's configured rate as ``initial_lr`` (torch's schedulers' key), unless a
    loaded state already carries it: it travels with the optimiser's state."""
    for group in optimizer.param_groups:
        group.setdefault("initial_lr", group["lr"])


def set_learning_rates(optimizer: torch.optim.Optimizer, multiplier: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = group["initial_lr"] * multiplier


class SupervisedLearner:
    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, loss: Loss, x: Tensor, y: Tensor, *,
                 learning_rate: Callable[[int], float] = constant, augment: Callable[[Tensor, int], Tensor] | None = None,
                 trackers: Sequence = ()):
        self.model, self.optimizer, self.loss, self.x, self.y = model, optimizer, loss, x, y
        self.learning_rate, self.augment, self.trackers = learning_rate, augment, list(trackers)
        keep_initial_learning_rates(optimizer)
        self.device = x.device

    def step(self, indices: Tensor, step: int) -> Tensor:
        set_learning_rates(self.optimizer, self.learning_rate(step))
        for tracker in self.trackers:
            tracker.before_step(indices)
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        inputs = self.x[indices]
        if self.augment is not None:
            inputs = self.augment(inputs, step)
        targets = self.y[indices]
        loss = self.loss(self.model(inputs), targets)
        loss.backward()
        if getattr(self.optimizer, "steps_on_batch", False):  # curvature estimated on the minibatch
            self.optimizer.step(inputs, targets)
        else:
            self.optimizer.step()
        for tracker in self.trackers:
            tracker.after_step()
        return loss.detach()

    def snapshot(self) -> dict:
        """The model's and the optimiser's state (copies)."""
        return {"model": copy.deepcopy(self.model.state_dict()), "optimizer": copy.deepcopy(self.optimizer.state_dict())}

    def state_dict(self) -> dict:
        unsaved = [type(t).__name__ for t in self.trackers if not hasattr(t, "state_dict")]
        if unsaved:
            raise TypeError(f"cannot save a training state: the trackers {unsaved} have no state_dict")
        return {**self.snapshot(), "trackers": [t.state_dict() for t in self.trackers]}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        for tracker, saved in zip(self.trackers, state["trackers"]):
            tracker.load_state_dict(saved)


class LockstepLearner:
    """M members (parameters ``member_params`` of one architecture ``model``) trained in lockstep.
    Member m's training set is ``examples[m]``, n indices into a shared pool (x, y): the same n
    positions for every member, so S and S′ = S with example i replaced by z differ in one row, and
    pairs of different samples S₁, S₂, … sit side by side. At each step every member steps on the
    same positions of its own set. One backward pass of the summed member losses gives each member
    its own gradient; the optimiser (``optimizer_of`` on the stacked tensors) must update
    elementwise (SGD, Adam, …), so each member's update is the one it would take alone.

    Buffers (BatchNorm's running statistics) are stacked too, one set per member, starting from
    ``member_buffers`` or else from the model's own: a training step updates each member's set from
    its own batch, and ``outputs(..., train=False)`` evaluates with them."""

    def __init__(self, model: nn.Module, member_params: Sequence[dict[str, Tensor]],
                 optimizer_of: Callable[[list[Tensor]], torch.optim.Optimizer], loss: Loss, x: Tensor, y: Tensor,
                 examples: Tensor, *, learning_rate: Callable[[int], float] = constant,
                 member_buffers: Sequence[dict[str, Tensor]] | None = None):
        if examples.dim() != 2 or len(examples) != len(member_params):
            raise ValueError(f"{len(member_params)} members need examples of shape ({len(member_params)}, n), "
                             f"got {tuple(examples.shape)}")
        self.model, self.loss, self.x, self.y = model, loss, x, y
        self.examples = examples.to(x.device)
        self.params = {name: t.clone().requires_grad_(True) for name, t in stacked(member_params).items()}
        own_buffers = {name: b.detach() for name, b in model.named_buffers()}
        self.buffers = stacked(member_buffers or [own_buffers] * len(member_params)) if own_buffers else {}
        self.buffers = {name: t.clone().to(x.device) for name, t in self.buffers.items()}
        self.optimizer = optimizer_of(list(self.params.values()))
        self.learning_rate = learning_rate
        keep_initial_learning_rates(self.optimizer)
        self.device = x.device
        self.member_losses: Tensor | None = None

    @property
    def members(self) -> int:
        return len(self.examples)

    def outputs(self, inputs: Tensor, params: dict[str, Tensor] | None = None, *, train: bool = True,
                shared_inputs: bool = False) -> Tensor:
        """Every member's outputs (M, B, …) on its own inputs (M, B, …), or on the same inputs (B,
        …) with ``shared_inputs``. ``train``: BatchNorm on batch statistics, updating each
        member's running statistics; else on the running statistics."""
        return member_outputs(self.model, params or self.params, self.buffers, inputs, train=train,
                              shared_inputs=shared_inputs)

    def step(self, indices: Tensor, step: int) -> Tensor:
        set_learning_rates(self.optimizer, self.learning_rate(step))
        self.optimizer.zero_grad(set_to_none=True)
        rows = self.examples[:, indices.to(self.device)]  # (M, B) pool indices
        losses = vmap(self.loss)(self.outputs(self.x[rows]), self.y[rows])
        losses.sum().backward()
        self.optimizer.step()
        self.member_losses = losses.detach()
        return self.member_losses.mean()

    def member(self, m: int) -> dict[str, Tensor]:
        """Member m's parameters."""
        return unstacked(self.params, m)

    def member_state(self, m: int) -> dict[str, Tensor]:
        """Member m's parameters and buffers, as the model's ``state_dict`` names them."""
        return {**self.member(m), **unstacked(self.buffers, m)}

    def snapshot(self) -> list[dict[str, Tensor]]:
        return [self.member(m) for m in range(self.members)]

    def state_dict(self) -> dict:
        return {"params": {n: t.detach().clone() for n, t in self.params.items()},
                "buffers": {n: t.clone() for n, t in self.buffers.items()},
                "optimizer": copy.deepcopy(self.optimizer.state_dict())}

    def load_state_dict(self, state: dict) -> None:
        with torch.no_grad():
            for name, tensor in self.params.items():
                tensor.copy_(state["params"][name])
            for name, tensor in self.buffers.items():
                tensor.copy_(state["buffers"][name])
        self.optimizer.load_state_dict(state["optimizer"])
