"""Linear mode connectivity and gradient stabilisation (telescoping lens, Sec. 4.3 and App. C.3:
Fig 6; spec recipe F, after Frankle et al. 2020).

A parent network is trained once per outer seed; its full training state (weights, BatchNorm
buffers, optimiser momentum, step) is kept at every spawn step t'. From each kept state two
children are trained to the end that differ only in data order and augmentation draws; the
accuracy along the straight line between the children's weights measures how far from linearly
connected they are. The parent's own trajectory gives the change of the network's gradients
over the epoch after t', layer by layer.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn
from torch.nn import functional as F

from ..kernels.ntk import jacobian_from_factors
from ..models.zoo import build_model
from ..parameters import ParameterLayout
from ..train.augment import augment
from ..train.batches import GeneratorBatches
from ..train.interpolation import interpolate
from ..train.learners import SupervisedLearner
from ..train.runtime import load_checkpoint, seed_everything
from ..train.schedules import AtSteps, StepDecay
from ..train.session import Checkpoint, Session, checkpoint_for
from ..train.tasks import classification_metrics, load_task


@dataclass(frozen=True)
class Schedule:
    """SGD with momentum and step decay: the learning rate is ``lr · factor^k`` after k of the
    ``drops`` (step numbers) have passed."""

    lr: float
    momentum: float
    weight_decay: float
    batch_size: int
    steps: int
    drops: tuple[int, ...] = ()
    factor: float = 0.1
    crop_padding: int = 0
    flip: bool = False

    @classmethod
    def from_config(cls, spec: dict) -> Schedule:
        return cls(**{**spec, "drops": tuple(spec.get("drops", ()))})


@dataclass
class TrainingState:
    """Everything that determines how training continues, except the data order."""

    model: dict
    optimizer: dict
    step: int


def new_optimizer(model: nn.Module, schedule: Schedule) -> torch.optim.SGD:
    return torch.optim.SGD(model.parameters(), lr=schedule.lr, momentum=schedule.momentum,
                           weight_decay=schedule.weight_decay)


def train(model: nn.Module, optimizer: torch.optim.Optimizer, schedule: Schedule, x: Tensor, y: Tensor,
          start: int, end: int, generator: torch.Generator, keep_at=(),
          checkpoint: Checkpoint | None = None) -> dict[int, TrainingState]:
    """Steps ``start`` + 1 … ``end`` of cross-entropy training on shuffled epochs drawn from
    ``generator`` (which also draws the augmentation); returns the training state after each
    step in ``keep_at`` (``start`` itself included). With ``checkpoint``, an interrupted run
    resumes where it stopped."""
    learner = SupervisedLearner(
        model, optimizer, F.cross_entropy, x, y, learning_rate=StepDecay(schedule.drops, schedule.factor),
        augment=lambda images, step: augment(images, schedule.crop_padding, schedule.flip, generator))
    session = Session(learner, GeneratorBatches(len(x), schedule.batch_size, generator, first_step=start + 1), end,
                      snapshot_at=AtSteps(keep_at), snapshot=lambda s: snapshot(model, optimizer, s.step),
                      first_step=start, checkpoint=checkpoint)
    return session.run().snapshots


def snapshot(model: nn.Module, optimizer: torch.optim.Optimizer, step: int) -> TrainingState:
    return TrainingState(copy.deepcopy(model.state_dict()), copy.deepcopy(optimizer.state_dict()), step)


def restore(model: nn.Module, schedule: Schedule, state: TrainingState) -> torch.optim.Optimizer:
    """Load ``state`` into ``model``; returns its optimiser with the saved momentum."""
    model.load_state_dict(state.model)
    optimizer = new_optimizer(model, schedule)
    # A copy: torch would otherwise adopt the saved momentum tensors and train them in place.
    optimizer.load_state_dict(copy.deepcopy(state.optimizer))
    return optimizer


def train_children(model: nn.Module, schedule: Schedule, x: Tensor, y: Tensor, state: TrainingState,
                   seeds: tuple[int, int]) -> list[dict]:
    """Two copies of the parent at ``state`` trained to the end with their own data order and
    augmentation; their final state dicts."""
    finals = []
    for seed in seeds:
        optimizer = restore(model, schedule, state)
        train(model, optimizer, schedule, x, y, state.step, schedule.steps, torch.Generator().manual_seed(seed))
        finals.append(copy.deepcopy(model.state_dict()))
    return finals


def accuracy_at(model: nn.Module, state: dict, x: Tensor, y: Tensor, batch_size: int = 1000) -> float:
    """Test accuracy of ``model`` with the state dict ``state`` (BatchNorm in eval mode)."""
    model.load_state_dict(state)
    model.eval()
    return classification_metrics(model, x, y, batch_size)[0]


def interpolation_curve(model: nn.Module, first: dict, second: dict, alphas, x: Tensor, y: Tensor) -> list[dict]:
    """Test accuracy of the interpolated network at each α (α = 1 is ``first``)."""
    return [{"alpha": float(a), "accuracy": accuracy_at(model, interpolate(first, second, a), x, y)} for a in alphas]


def accuracy_gaps(curve: list[dict]) -> dict[str, float]:
    """Both definitions of the LMC gap: the largest drop below the line between the endpoints'
    accuracies (Sec. 4.3), and the children's mean accuracy minus the midpoint's (App. C.3)."""
    by_alpha = {row["alpha"]: row["accuracy"] for row in curve}
    first, second = by_alpha[1.0], by_alpha[0.0]
    line_drop = max(a * first + (1 - a) * second - acc for a, acc in by_alpha.items())
    return {"gap_max": float(line_drop), "gap_midpoint": float((first + second) / 2 - by_alpha[0.5])}


def gradient_change(model: nn.Module, before: dict, after: dict, x_probe: Tensor) -> dict[str, float]:
    """Per layer (module owning parameters): mean over probe examples, logits and the layer's
    parameters of (∂f_after/∂θ − ∂f_before/∂θ)², with BatchNorm in eval mode."""
    jacobians = []
    for state in (before, after):
        model.load_state_dict(state)
        model.eval()
        jacobians.append(jacobian_from_factors(model, x_probe, output="full"))
    squared = (jacobians[1] - jacobians[0]).pow(2)
    changes = {}
    for name, span in ParameterLayout(model).spans.items():
        layer = name.rsplit(".", 1)[0]
        block = squared[:, :, span]
        total, count = changes.get(layer, (0.0, 0))
        changes[layer] = (total + float(block.sum()), count + block.numel())
    return {layer: total / count for layer, (total, count) in changes.items()}


def spawn_seeds(outer: int, spawn: int, inner: int) -> tuple[int, int]:
    """The two children's data seeds for one (outer seed, spawn step, inner seed)."""
    base = np.random.SeedSequence([outer, spawn, inner]).generate_state(2)
    return int(base[0]), int(base[1])


# --- the runs the workflow schedules -----------------------------------------------------------

def image_task(data_npz, device: str | torch.device = "cpu") -> dict[str, Tensor]:
    """float32 images (N, C, H, W) and integer labels of a prepared image dataset, on ``device``."""
    return load_task(data_npz, device=device)


def new_network(run: dict, task: dict[str, Tensor], seed: int) -> nn.Module:
    """The seeded network, initialised on the CPU (the same weights on every device) and moved
    to the task's device."""
    seed_everything(seed)
    classes = int(max(task["y_train"].max(), task["y_test"].max())) + 1
    model = build_model({**run["model"], "in_channels": task["x_train"].shape[1], "num_classes": classes})
    return model.to(task["x_train"].device)


def pretrain(data_npz, run: dict, seed: int, device: str | torch.device = "cpu", state_path=None,
             inputs_version: str = "") -> dict:
    """The pretrained branch's starting point: a network trained on the pretraining data with
    ``run["pretrain"]``'s schedule; its final state dict."""
    task = image_task(data_npz, device)
    model = new_network(run, task, seed)
    schedule = Schedule.from_config(run["pretrain"])
    train(model, new_optimizer(model, schedule), schedule, task["x_train"], task["y_train"], 0,
          schedule.steps, torch.Generator().manual_seed(seed),
          checkpoint=checkpoint_for(state_path, {"pretrain": run}, seed, inputs_version))
    return model.state_dict()


def parent_run(data_npz, run: dict, seed: int, initial: dict | None = None,
               device: str | torch.device = "cpu", state_path=None, inputs_version: str = ""):
    """Train the parent from a fresh (or the given) initialisation; returns its training states
    at every spawn step and the per-layer gradient change over the ``change_steps`` after each,
    measured on the first ``probe_size`` test images."""
    task = image_task(data_npz, device)
    model = new_network(run, task, seed)
    if initial is not None:
        model.load_state_dict(initial)
    schedule = Schedule.from_config(run["schedule"])
    spawns = sorted(run["spawn_steps"])
    ahead = {t: min(t + run["change_steps"], schedule.steps) for t in spawns}
    kept = train(model, new_optimizer(model, schedule), schedule, task["x_train"], task["y_train"], 0,
                 schedule.steps, torch.Generator().manual_seed(seed), keep_at=set(spawns) | set(ahead.values()),
                 checkpoint=checkpoint_for(state_path, {"parent": run, "initial": initial is not None}, seed, inputs_version))
    probe = task["x_test"][:run["probe_size"]]
    changes = [{"spawn_step": t, "layer": layer, "gradient_change": value, "order": order}
               for t in spawns
               for order, (layer, value) in enumerate(gradient_change(model, kept[t].model, kept[ahead[t]].model,
                                                                      probe).items())]
    return {t: kept[t] for t in spawns}, pd.DataFrame.from_records(changes)


def children_run(data_npz, run: dict, state: TrainingState, outer: int, inner: int,
                 device: str | torch.device = "cpu"):
    """Two children of the parent state at one spawn step; the interpolation curve between them
    and both accuracy gaps."""
    task = image_task(data_npz, device)
    model = new_network(run, task, outer)
    schedule = Schedule.from_config(run["schedule"])
    first, second = train_children(model, schedule, task["x_train"], task["y_train"], state,
                                   spawn_seeds(outer, state.step, inner))
    alphas = interpolation_alphas(run["alpha_points"])
    curve = pd.DataFrame.from_records(interpolation_curve(model, first, second, alphas,
                                                          task["x_test"], task["y_test"]))
    gaps = accuracy_gaps(curve.to_dict("records"))
    return curve.assign(spawn_step=state.step, **gaps)


def interpolation_alphas(points: int) -> list[float]:
    """``points`` equally spaced α in [0, 1], plus 0.5 (the midpoint of App. C.3)."""
    return sorted(set(np.linspace(0.0, 1.0, points).round(12).tolist()) | {0.5})




def save_states(path, states: dict[int, TrainingState]) -> None:
    torch.save({step: vars(state) for step, state in states.items()}, path)


def load_state(path, step: int, device: str | torch.device = "cpu") -> TrainingState:
    return TrainingState(**load_checkpoint(path, map_location=device)[step])
