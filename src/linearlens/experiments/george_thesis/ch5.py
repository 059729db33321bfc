"""Experiments for Chapter 5 (lazy vs hasty) and appendix C. The runs behind Figs 5.1-5.4 and C.1-C.9
(linearised vs non-linear training on easy and difficult examples; the quadratic model)."""

from __future__ import annotations

import copy
import hashlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ...analysis.george_thesis.ch5 import BALANCED_SETS
from ...data.prepared import load_prepared
from ...data.spurious import balanced_cells, photo_pipeline, read_archive_images, with_spurious
from ...data.synthetic import yin_yang
from ...data.transforms import balanced_order, flip_labels
from ...data.weights import load_except_head
from ...ensembles import stacked, stacked_parameters
from ...linearize.alpha_scaling import AlphaScaled, alpha_learning_rate, alpha_scaled, alpha_scaled_optimiser
from ...linearize.batched_alpha_gd import batched_outputs, threshold_gd
from ...linearize.linearity import LinearityProbe
from ...linearize.quadratic_model import (
    REGIMES,
    AnalyticDataset,
    QuadraticModes,
    convergence_times,
    example_1,
    example_2,
    example_3,
    quadratic_modes,
    sequentialisation,
    squared_errors,
)
from ...models.deep_linear import DeepLinear
from ...models.mlp import mlp
from ...models.zoo import build_model, load_model
from ...train.batches import EpochBatches, no_batches
from ...train.learners import SupervisedLearner
from ...train.probes import Group, group_metrics, predicted
from ...train.progress import Progress
from ...train.runtime import choose_device, full_float32, load_checkpoint, save_checkpoint, seed_everything
from ...train.schedules import Every, LossThresholds, epoch_starts, geometric_thresholds, log_steps
from ...train.session import DivergenceGuard, Session, checkpoint_for, run_key
from ...train.tasks import load_task

LOG = logging.getLogger(__name__)

# --- Fig 5.1: the yin-yang toy, α = 1 vs α = 100, Δloss maps at loss thresholds ---

def toy_network(spec: dict) -> torch.nn.Module:
    """The author's toy MLP: ``depth`` Linear layers of ``width`` units (2-60-60-60-1), ReLU,
    scalar output, PyTorch's default init."""
    return mlp(2, [spec["width"]] * (spec["depth"] - 1), 1)


def toy_initial_parameters(spec: dict, seed: int) -> dict[str, Tensor]:
    """θ₀ of ``seed``: the network drawn after seeding every generator with it."""
    seed_everything(seed)
    return {name: value.detach() for name, value in toy_network(spec).named_parameters()}


def logistic_loss(logits: Tensor, labels: Tensor) -> Tensor:
    """Per-point logistic loss log(1 + e^{−y f}) of a scalar logit, labels {0, 1} for the thesis's
    ±1."""
    return F.binary_cross_entropy_with_logits(logits, labels, reduction="none")


@dataclass
class ToyBatch:
    """The runs of one job, α-major: member m is (seeds[m], alphas[m]), with θ₀ and training set
    those of its seed (so a seed's runs at every α start from the same θ₀ on the same data)."""

    seeds: list[int]
    alphas: list[float]
    initial: dict[str, Tensor]  # stacked θ₀, (M, ...)
    x: Tensor  # (M, n, 2)
    y: Tensor  # (M, n), labels {0, 1}
    x_grid: Tensor  # (G, 2), shared
    y_grid: Tensor  # (G,)
    tasks: dict[int, dict[str, np.ndarray]]  # each seed's yin-yang draw


def toy_batch(spec: dict, seeds: list[int], device: torch.device, dtype: torch.dtype = torch.float32) -> ToyBatch:
    """Each seed draws its training set (``n_train`` yin-yang points, from the seed) and its θ₀
    (``toy_initial_parameters``); every α of the seed gets both."""
    members = [(seed, float(alpha)) for alpha in spec["alphas"] for seed in seeds]
    tasks = {seed: yin_yang(spec["n_train"], spec["grid"], seed) for seed in seeds}
    parameters = {seed: toy_initial_parameters(spec, seed) for seed in seeds}

    def per_member(values):
        return torch.stack([torch.as_tensor(values(seed)) for seed, _ in members]).to(device, dtype)

    grid = tasks[seeds[0]]
    initial = stacked([parameters[seed] for seed, _ in members])
    return ToyBatch([seed for seed, _ in members], [alpha for _, alpha in members],
                    {name: value.to(device, dtype) for name, value in initial.items()},
                    per_member(lambda seed: tasks[seed]["x_train"]), per_member(lambda seed: tasks[seed]["y_train"]),
                    torch.as_tensor(grid["x_test"], dtype=dtype, device=device),
                    torch.as_tensor(grid["y_test"], dtype=dtype, device=device), tasks)


def toy_run(spec: dict, seeds: list[int], device: str = "auto", dtype: torch.dtype = torch.float32
            ) -> dict[str, np.ndarray]:
    """Fig 5.1's runs for ``seeds`` at every α, trained as one batch (``threshold_gd``) on the
    logistic loss of α(f_θ − f_θ₀) at the step η/α²: each run's grid losses at the training-loss
    thresholds, its training-loss curve, where it stopped; and each seed's training set."""
    batch = toy_batch(spec, seeds, choose_device(device), dtype)
    with full_float32():  # α(f_θ − f_θ₀) multiplies TF32's rounding of f by α
        record = threshold_gd(toy_network(spec).to(batch.x.device, dtype), batch.initial, batch.alphas, spec["lr"],
                              batch.x, batch.y, logistic_loss, spec["thresholds"], spec["min_iterations"],
                              spec["max_iterations"], log_steps(spec["max_iterations"], spec["curve_points"]),
                              batch.x_grid, batch.y_grid)
    return {
        "seed": np.asarray(batch.seeds), "alpha": np.asarray(batch.alphas), "thresholds": record.thresholds,
        "crossing_iteration": record.crossing_iteration, "grid_losses": record.eval_losses.astype(np.float32),
        "grid_side": np.asarray(spec["grid"]), "curve_steps": record.steps, "train_loss": record.train_loss,
        "stop_iteration": record.stop_iteration, "final_loss": record.final_loss,
        "x_train": np.stack([batch.tasks[seed]["x_train"] for seed in seeds]),
        "y_train": np.stack([batch.tasks[seed]["y_train"] for seed in seeds]), "data_seeds": np.asarray(seeds),
    }


# --- Figs 5.4, C.9: the quadratic model in closed form, and a 2-layer linear MLP on its datasets ---

ANALYTIC_EXAMPLES = ("example_1", "example_2", "example_3")
SETTLED = 1e-3  # the claims' time grid runs until every label mode is this close to θ*, relatively
SETTLING_MARGIN = 2.0  # … times this


def analytic_dataset(name: str, spec: dict) -> AnalyticDataset:
    """Example 1, 2 or 3 of §5.4.4 from the ``analytic`` config (labels and flips from its seed)."""
    example = spec["examples"][name]
    if name == "example_1":
        return example_1(example["mu"])
    if name == "example_2":
        return example_2(example["n"], example["q"], example["eta"], example["d"], spec["seed"])
    if name == "example_3":
        return example_3(example["n"], example["q"], example["eta"], example["d"], example["spurious_scale"],
                         spec["seed"])
    raise ValueError(f"unknown analytic example {name!r}: expected one of {ANALYTIC_EXAMPLES}")


def _dataset_record(data: AnalyticDataset) -> dict[str, np.ndarray]:
    return {"x": data.x, "y": data.y, "group": data.group, "group_names": np.asarray(data.group_names),
            "kappa": data.kappa}


def settling_time(modes: QuadraticModes, regime: str) -> float:
    """When every label mode (θ* > θ⁰) of ``regime`` is within ``SETTLED``·θ* of θ* (exact times)."""
    times = convergence_times(modes.theta0, modes.theta_star, modes.mu, SETTLED * modes.theta_star)[regime]
    return float(np.nanmax(times))


def analytic_example(name: str, spec: dict) -> dict[str, np.ndarray]:
    """One example in both regimes: per-example squared errors on the figure's time window
    (``time_points`` from 0 to ``t_<regime>``) and, for the claims, on a log grid of
    ``claim_points`` times (and 0) up to ``SETTLING_MARGIN`` × the regime's settling time."""
    data = analytic_dataset(name, spec)
    modes = quadratic_modes(data.x, data.y, spec["sigma"], spec["degenerate_basis"], spec["seed"])
    r = modes.rank
    record = {**_dataset_record(data), "mu": modes.mu[:r], "y_tilde": modes.y_tilde[:r],
              "theta_star": modes.theta_star[:r], "theta0": modes.theta0[:r]}
    for regime in REGIMES:
        window = np.linspace(0.0, spec["examples"][name][f"t_{regime}"], spec["time_points"])
        horizon = SETTLING_MARGIN * settling_time(modes, regime)
        dense = np.concatenate([[0.0], np.geomspace(horizon * 1e-6, horizon, spec["claim_points"])])
        record |= {f"{regime}_times": window, f"{regime}_errors": squared_errors(modes, regime, window),
                   f"{regime}_dense_times": dense, f"{regime}_dense_errors": squared_errors(modes, regime, dense)}
    return record


def sequentialisation_record(spec: dict) -> dict[str, np.ndarray]:
    """Eq. 5.4.8 on Example 1's modes (mode i = example i) for each σ of the config: θ_λ'(t_λ)/θ*_λ'
    at the time t_λ mode λ gets ε-close, in the non-linear flow."""
    config = spec["sequentialisation"]
    data = example_1(spec["examples"]["example_1"]["mu"])
    mu = np.diag(data.x) ** 2
    theta_star = data.y / np.sqrt(mu)
    ratios = [sequentialisation(theta_star, mu, np.full(mu.size, sigma / 2), config["epsilon"])
              for sigma in config["sigmas"]]
    return {"sigmas": np.asarray(config["sigmas"], dtype=float), "epsilon": np.asarray(config["epsilon"]),
            "ratios": np.stack(ratios), "y_tilde": mu * theta_star, "theta_star": theta_star}


def analytic_run(spec: dict) -> dict[str, np.ndarray]:
    """Fig 5.4's closed forms for the three examples, and the sequentialisation of eq. 5.4.8: one
    flat record, keys ``<example>/<name>`` and ``sequentialisation/<name>``."""
    record = {f"{name}/{key}": value for name in ANALYTIC_EXAMPLES for key, value in analytic_example(name, spec).items()}
    return record | {f"sequentialisation/{key}": value for key, value in sequentialisation_record(spec).items()}


def deep_linear_networks(widths: list[int], init_scale: float, seeds: list[int]) -> list[DeepLinear]:
    """One float64 network per seed (PyTorch's default init from ``torch.manual_seed(seed)``)."""
    networks = []
    for seed in seeds:
        torch.manual_seed(seed)
        networks.append(DeepLinear(widths, init_scale).double())
    return networks


class AlphaScaledGD:
    """Full-batch GD on the mean squared error of f^α = α(f_θ − f_θ₀) (θ₀ each network's start;
    ``keep_initial_output`` adds f_θ₀ back, eq. 5.2.4) at the rate η/α², every network at once, as
    a learner of ``train.session`` (full batch: the session's batch order is unused).
    ``linearlens.ensembles`` makes it one batched forward pass over the networks' stacked
    parameters; one backward gives every network's gradient, as their losses are summed."""

    def __init__(self, networks: list[torch.nn.Module], x: Tensor, y: Tensor, alpha: float, lr: float,
                 keep_initial_output: bool = False):
        self.network, self.x, self.y = networks[0], x, y
        self.alpha, self.keep_initial_output = alpha, keep_initial_output
        self.params = {name: value.requires_grad_() for name, value in stacked_parameters(networks).items()}
        self.rate = alpha_learning_rate(lr, alpha)
        with torch.no_grad():
            self.initial = self.outputs()  # f_θ₀ is fixed: computed once

    def outputs(self) -> Tensor:
        return batched_outputs(self.network, self.params, self.x, shared_inputs=True)

    def squared_errors(self) -> Tensor:
        """(networks, n): each network's per-example squared error at its current parameters."""
        return (alpha_scaled(self.outputs(), self.initial, self.alpha, self.keep_initial_output) - self.y) ** 2

    def step(self, _unused, step: int) -> Tensor:
        errors = self.squared_errors()
        gradients = torch.autograd.grad(errors.mean(dim=-1).sum(), list(self.params.values()))
        with torch.no_grad():
            for value, gradient in zip(self.params.values(), gradients):
                value.sub_(gradient, alpha=self.rate)
        return errors.detach().mean()


def per_example_errors(session: Session) -> dict:
    """The probe: the learner's per-example squared errors."""
    with torch.no_grad():
        return {"errors": session.learner.squared_errors()}


def alpha_scaled_gradient_descent(networks: list[torch.nn.Module], x: Tensor, y: Tensor, alpha: float,
                                  lr: float, iterations: int, keep_initial_output: bool = False) -> np.ndarray:
    """``AlphaScaledGD`` for ``iterations`` steps: the per-example squared errors after 0 …
    ``iterations`` steps, (iterations + 1, networks, n)."""
    learner = AlphaScaledGD(networks, x, y, alpha, lr, keep_initial_output)
    session = Session(learner, no_batches, iterations, probes=[per_example_errors], evaluate_at=Every(1),
                      progress=Progress(iterations, name=f"α = {alpha:g}"))
    return torch.stack([row["errors"] for row in session.run().rows]).numpy()


def twolayer_run(name: str, spec: dict) -> dict[str, np.ndarray]:
    """Fig C.9 on one example: an unconstrained 2-layer linear MLP (d × d then d × 1, no bias,
    PyTorch's init × ``init_scale``) from each of ``inits`` initialisations (seeds seed·1000 + k),
    trained in both regimes from the same θ₀ (the α and iterations of each regime)."""
    data = analytic_dataset(name, spec)
    config = spec["twolayer"]
    d = data.x.shape[1]
    seeds = [1000 * spec["seed"] + k for k in range(config["inits"])]
    x, y = torch.as_tensor(data.x, dtype=torch.float64), torch.as_tensor(data.y, dtype=torch.float64)
    record = _dataset_record(data) | {"example": np.asarray(name), "init_seeds": np.asarray(seeds)}
    for regime in REGIMES:
        networks = deep_linear_networks([d, d, 1], config["init_scale"], seeds)
        alpha, iterations = config["alphas"][regime], config["iterations"][regime]
        record |= {f"{regime}_errors": alpha_scaled_gradient_descent(networks, x, y, alpha, config["lr"], iterations),
                   f"{regime}_alpha": np.asarray(alpha), f"{regime}_lr": np.asarray(alpha_learning_rate(config["lr"], alpha))}
    return record


# --- Figs 5.2, C.1-C.6: α-scaled runs on C-score groups and noisy labels, linearity metrics ---

# One run: a classifier trained from the θ₀ of its (architecture, seed) with α-scaling (f^α = α(f_θ − f_θ₀),
# rate η/α², SGD with momentum), its batches drawn from (seed, epoch) and its label noise from the
# config's noise seed, so that the runs of every α of a seed share θ₀, batches and noisy labels by
# construction (the author's code forks α = 100 from the α = 1 run's step-0 checkpoint). It logs, as
# the author's code does, at the first step whose mini-batch loss falls below each of
# log C · 0.96^k and at every epoch start: the loss and accuracy of each tracked group of examples,
# and every 5th time the three linearity metrics on a fixed probe of test examples.


@dataclass
class DifficultyTask:
    """The training set (its labels as trained on), the groups a run tracks, the linearity probe,
    and how the mean training loss is made of the groups' losses (weights per group)."""

    x_train: Tensor
    y_train: Tensor
    groups: list[Group]
    probe: Tensor
    mean_weights: dict[str, float]
    facts: dict


def _subset(indices: np.ndarray, n: int | None, rng: np.random.Generator) -> np.ndarray:
    return indices if n is None or n >= len(indices) else np.sort(rng.choice(indices, size=n, replace=False))


def _probe(task: dict[str, Tensor], n: int) -> Tensor:
    """The linearity probe: ``n`` test examples in a fixed class-balanced order."""
    order = balanced_order(task["y_test"].cpu().numpy(), seed=0)[:n]
    return task["x_test"][torch.as_tensor(order, device=task["x_test"].device)]


def cscore_task(task: dict[str, Tensor], cscores: dict[str, np.ndarray], run: dict) -> DifficultyTask:
    """Fig 5.2 top: the clean training set; the groups are the tracked examples of each C-score
    decile of the training and of the test split (bin 0: the lowest scores); the mean training loss
    is the mean of the training deciles' losses (the author's code)."""
    groups = []
    for split in ("train", "test"):
        tracked, bins = cscores[f"{split}_tracked"], cscores[f"{split}_tracked_bins"]
        if len(cscores[f"{split}_scores"]) != len(task[f"y_{split}"]):
            raise ValueError(f"the C-scores cover {len(cscores[f'{split}_scores'])} {split} examples, the dataset "
                             f"has {len(task[f'y_{split}'])}: they were made for another dataset")
        for b in range(run["bins"]):
            index = torch.as_tensor(tracked[bins == b], device=task["x_train"].device)
            groups.append(Group(f"{split}_bin{b}", task[f"x_{split}"][index], task[f"y_{split}"][index]))
    weights = {f"train_bin{b}": 1 / run["bins"] for b in range(run["bins"])}
    return DifficultyTask(task["x_train"], task["y_train"], groups, _probe(task, run["probe_size"]), weights,
                          {"group_sizes": {g.name: len(g.y) for g in groups}})


def noisy_task(task: dict[str, Tensor], run: dict) -> DifficultyTask:
    """Fig 5.2 bottom: a share ``label_noise`` of the training labels each replaced by a different
    class, drawn from ``noise_seed`` (the same for every run); the groups are tracked
    clean examples, noisy ones with their wrong labels, and test examples; the mean training loss
    weighs the clean and noisy losses by their shares of the training set."""
    labels = task["y_train"].cpu().numpy()
    num_classes = int(max(labels.max(), task["y_test"].max())) + 1
    noisy_labels, flipped = flip_labels(labels, run["label_noise"], num_classes, run["noise_seed"])
    device = task["x_train"].device
    y_train = torch.as_tensor(noisy_labels, device=device)
    clean = np.setdiff1d(np.arange(len(labels)), flipped)
    rng = np.random.default_rng(run["tracking_seed"])
    chosen = {"clean": _subset(clean, run["tracked"], rng), "noisy": _subset(flipped, run["tracked"], rng)}
    groups = [Group(name, task["x_train"][torch.as_tensor(index, device=device)],
                    y_train[torch.as_tensor(index, device=device)]) for name, index in chosen.items()]
    test = torch.as_tensor(_subset(np.arange(len(task["y_test"])), run["tracked"], rng), device=device)
    groups.append(Group("test", task["x_test"][test], task["y_test"][test]))
    share = len(flipped) / len(labels)
    return DifficultyTask(task["x_train"], y_train, groups, _probe(task, run["probe_size"]),
                          {"clean": 1 - share, "noisy": share},
                          {"flipped": len(flipped), "flipped_index_digest": _digest(flipped),
                           "group_sizes": {g.name: len(g.y) for g in groups}})


def _digest(indices: np.ndarray) -> str:
    return hashlib.sha256(np.asarray(indices, dtype=np.int64).tobytes()).hexdigest()[:16]


def difficulty_task(data_npz, cscores_npz, run: dict, device) -> DifficultyTask:
    task = load_task(data_npz, device=device)
    if run["experiment"] == "cscore":
        with np.load(cscores_npz) as saved:
            return cscore_task(task, {key: saved[key] for key in saved.files}, run)
    return noisy_task(task, run)


class TrackedGroups:
    """The groups' loss and accuracy (of f^α, in evaluation mode) and the mean training loss made
    of them (``train_loss``: the progress of a C-score run, and what the stopping rule reads)."""

    def __init__(self, model: torch.nn.Module, task: DifficultyTask):
        self.model, self.task = model, task

    def __call__(self, session: Session) -> dict:
        row = group_metrics(self.model, self.task.groups)
        row["train_loss"] = sum(weight * row[f"{name}_loss"] for name, weight in self.task.mean_weights.items())
        return row


@dataclass
class LossBelow:
    """Stop once the mean training loss of the last log point is below ``level`` (α = 100: 0.05)."""

    level: float

    def __call__(self, session: Session) -> bool:
        return session.rows[-1].get("train_loss", float("inf")) < self.level


def difficulty_learner(network: torch.nn.Module, run: dict, x_train: Tensor, y_train: Tensor) -> SupervisedLearner:
    """The run's α-scaled model of ``network`` and its optimiser on the cross-entropy."""
    model = AlphaScaled(network, run["alpha"], keep_initial_output=run["keep_initial_output"])
    return SupervisedLearner(model, alpha_scaled_optimiser(model, run["optimiser"]), F.cross_entropy, x_train, y_train)


def difficulty_run(data_npz, cscores_npz, init_path, run: dict, seed: int, cap_steps: int | None = None,
                   state_path=None, inputs_version: str = "", device: str = "auto") -> tuple[pd.DataFrame, dict]:
    """One run of Figs 5.2 and C.1-C.6 (resumed from ``state_path`` when it holds this run's state):
    its log (one row per log point) and a summary. ``cap_steps`` caps its length (the learning-rate
    sweep at the largest-α run's iterations)."""
    device = choose_device(device)
    task = difficulty_task(data_npz, cscores_npz, run, device)
    network, _ = load_model(init_path, device)
    learner = difficulty_learner(network, run, task.x_train, task.y_train)
    model = learner.model
    batches = EpochBatches(len(task.y_train), run["batch_size"], seed)
    steps = run["epochs"] * batches.steps_per_epoch
    if cap_steps is not None:
        steps = min(steps, int(cap_steps))
    num_classes = int(model(task.probe[:1]).shape[1])
    thresholds = geometric_thresholds(math.log(num_classes), run["thresholds"]["factor"], run["thresholds"]["floor"])
    probes = [TrackedGroups(model, task), LinearityProbe(model.network, task.probe, every=run["linearity_every"])]
    name = f"{run['experiment']} {run['architecture']} α={run['alpha']:g} lr={run['lr']:g} seed {seed}"
    session = Session(learner, batches, steps, probes=probes,
                      evaluate_at=LossThresholds(thresholds) | epoch_starts(batches.steps_per_epoch),
                      stop=LossBelow(run["stop_loss"]) if run["stop_loss"] is not None else None,
                      checkpoint=checkpoint_for(state_path, run, seed, inputs_version),
                      progress=Progress(steps, name=name))
    record = session.run()
    frame = record.frame()
    frame.insert(1, "epoch", frame["step"] / batches.steps_per_epoch)
    summary = {"run": run, "seed": seed, "steps": record.steps, "max_steps": steps, "cap_steps": cap_steps,
               "ended": record.ended, "seconds": record.seconds, "steps_per_epoch": batches.steps_per_epoch,
               "n_train": len(task.y_train), "thresholds": len(thresholds), "log_points": len(frame),
               "parameters": sum(p.numel() for p in model.network.parameters()),
               "initial_parameters_digest": _parameters_digest(model.initial),
               "batch_order_digest": _digest(torch.cat([batches(step) for step in range(1, batches.steps_per_epoch + 1)])
                                             .numpy()), **task.facts}
    return frame, summary


def _parameters_digest(network: torch.nn.Module) -> str:
    """A fingerprint of θ₀: equal for every α of one (architecture, seed)."""
    digest = hashlib.sha256()
    for tensor in network.state_dict().values():
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]



# --- Figs 5.3, C.7, C.8: spurious correlations ---

IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


@dataclass
class Examples:
    """Examples of a spurious-correlation task: inputs as stored (photos: uint8), labels, the
    spurious attribute (``group``) and whether each counts as "with spurious"."""

    x: Tensor
    y: Tensor
    group: Tensor
    with_spurious: Tensor

    def subset_masks(self) -> dict[str, Tensor]:
        """The balanced sets' subsets (``SPURIOUS_SUBSETS``): all, with, without, each cell."""
        masks = {"all": torch.ones_like(self.with_spurious), "with": self.with_spurious,
                 "without": ~self.with_spurious}
        for label in (0, 1):
            for group in (0, 1):
                masks[f"y{label}_g{group}"] = (self.y == label) & (self.group == group)
        return masks


@dataclass
class SpuriousTask:
    """What a run trains on (the first ``n_train`` training examples) and evaluates: the balanced
    training and test subsets; ``inputs`` turns stored inputs into the network's (ImageNet
    normalisation of uint8 photos, as the author's code; nothing for arrays); ``counts`` records
    the sets' sizes."""

    train: Examples
    balanced: dict[str, Examples]
    inputs: Callable[[Tensor], Tensor]
    counts: dict


def imagenet_normalised(x: Tensor) -> Tensor:
    """uint8 RGB images -> float, ImageNet's per-channel normalisation (torchvision's ToTensor and
    Normalize)."""
    mean = torch.tensor(IMAGENET_MEAN, device=x.device).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD, device=x.device).view(1, 3, 1, 1)
    return (x.float() / 255.0 - mean) / std


def _as_is(x: Tensor) -> Tensor:
    return x


def spurious_task(data_npz, settings: dict, device, archive=None) -> SpuriousTask:
    """A prepared spurious-correlation dataset as a run's task. Training examples: the split's first
    ``n_train`` (all when null; the author's code takes the first 15,000 CelebA images). Balanced
    subsets (``balanced_cells``): the first ``balanced_per_cell`` of each (label, group) cell of
    the training and the test split, fewer where a cell is smaller (Waterbirds' training split;
    the author's code draws them from the whole split, not only the examples trained on).
    An image index (CelebA, Waterbirds) has its images decoded once from ``archive`` through the
    family's ``preprocessing`` and kept as uint8."""
    arrays = load_prepared(data_npz)
    n_train = len(arrays["y_train"]) if settings.get("n_train") is None else settings["n_train"]
    if n_train > len(arrays["y_train"]):
        raise ValueError(f"n_train {n_train} exceeds the {len(arrays['y_train'])} training examples of {data_npz}")
    index = {"train": np.arange(n_train)}
    counts = {"n_train": int(n_train)}
    for split in ("train", "test"):
        index[f"balanced_{split}"], cells = balanced_cells(arrays[f"y_{split}"], arrays[f"group_{split}"],
                                                           settings["balanced_per_cell"])
        counts[f"balanced_{split}"] = {f"y{label}_g{group}": n for (label, group), n in cells.items()}
    counts["balanced_train_trained_on"] = int(np.sum(index["balanced_train"] < n_train))
    images = _photos(arrays, index, settings["preprocessing"], archive) if "image_train" in arrays else None

    def examples(name: str) -> Examples:
        split = "test" if name == "balanced_test" else "train"
        chosen = index[name]
        x = images[name] if images is not None else torch.as_tensor(arrays[f"x_{split}"][chosen])
        y, group = arrays[f"y_{split}"][chosen], arrays[f"group_{split}"][chosen]
        spurious = with_spurious(y, group, settings["with_spurious"], settings.get("spurious_value"))
        return Examples(x.to(device), *(torch.as_tensor(a, device=device) for a in (y, group, spurious)))

    return SpuriousTask(examples("train"), {name: examples(name) for name in BALANCED_SETS},
                        imagenet_normalised if images is not None else _as_is, counts)


def _photos(arrays: dict, index: dict, steps: list[dict], archive) -> dict[str, Tensor]:
    """The images each set needs, decoded and preprocessed once (one pass over a tarball), uint8."""
    if archive is None:
        raise ValueError("an image-index dataset needs the archive of its images")
    wanted = {name: arrays[f"image_{'test' if name == 'balanced_test' else 'train'}"][chosen]
              for name, chosen in index.items()}
    members = sorted({member for names in wanted.values() for member in names})
    LOG.info("decoding %d images from %s", len(members), archive)
    decoded = dict(zip(members, read_archive_images(archive, members, photo_pipeline(steps))))
    return {name: torch.as_tensor(np.stack([decoded[m] for m in names])) for name, names in wanted.items()}


class SpuriousProbe:
    """Loss and accuracy of f^α on each balanced set and each of its subsets (with and without the
    spurious feature, the four (label, group) cells): one forward pass per set. Columns
    ``<set>_<subset>_{loss,accuracy}``, the whole set's ``<set>_{loss,accuracy}`` (``balanced_test_accuracy``
    is the figure's test accuracy, as in the author's code)."""

    def __init__(self, model: nn.Module, sets: dict[str, Examples], inputs, batch_size: int = 250):
        self.model, self.sets, self.inputs, self.batch_size = model, sets, inputs, batch_size

    @torch.no_grad()
    def __call__(self, session) -> dict[str, float]:
        was_training = self.model.training
        self.model.eval()
        row = {}
        for name, examples in self.sets.items():
            outputs = torch.cat([self.model(self.inputs(examples.x[start:start + self.batch_size])).float()
                                 for start in range(0, len(examples.x), self.batch_size)]).reshape(-1)
            losses = F.binary_cross_entropy_with_logits(outputs, examples.y.to(outputs.dtype), reduction="none")
            hits = (predicted(outputs) == examples.y).double()
            for subset, mask in examples.subset_masks().items():
                column = name if subset == "all" else f"{name}_{subset}"
                count = int(mask.sum())
                row[f"{column}_loss"] = float(losses[mask].sum()) / count if count else float("nan")
                row[f"{column}_accuracy"] = float(hits[mask].sum()) / count if count else float("nan")
        self.model.train(was_training)
        return row


class LogisticLossWithAccuracy:
    """The training loss, BCE with logits on one output and {0, 1} labels, which also keeps the
    mini-batch's loss and accuracy (of the outputs before the step, as the author's code)."""

    def __init__(self):
        self.batch_loss, self.batch_accuracy = float("nan"), float("nan")

    def __call__(self, outputs: Tensor, labels: Tensor) -> Tensor:
        logits = outputs.reshape(-1)
        loss = F.binary_cross_entropy_with_logits(logits, labels.reshape(-1).to(logits.dtype))
        with torch.no_grad():
            self.batch_loss = float(loss)
            self.batch_accuracy = float((predicted(logits) == labels.reshape(-1)).double().mean())
        return loss

    def batch_metrics(self, session) -> dict[str, float]:
        """The last mini-batch's loss and accuracy, as a session probe."""
        return {"batch_loss": self.batch_loss, "batch_accuracy": self.batch_accuracy}


class PerfectBatchStop:
    """The author's stopping rule: after ``patience`` consecutive mini-batches each classified
    perfectly or with a NaN loss (asked after every step)."""

    def __init__(self, loss: LogisticLossWithAccuracy, patience: int):
        self.loss, self.patience = loss, int(patience)
        self.streak, self.reason = 0, None

    def __call__(self, session) -> bool:
        nan = math.isnan(self.loss.batch_loss)
        self.streak = self.streak + 1 if nan or self.loss.batch_accuracy == 1.0 else 0
        if self.streak >= self.patience:
            self.reason = "nan loss" if nan else f"{self.patience} consecutive perfect mini-batches"
            return True
        return False

    def state_dict(self) -> dict:
        return {"streak": self.streak}

    def load_state_dict(self, state: dict) -> None:
        self.streak = state["streak"]


LOSS_THRESHOLD_FACTOR = 0.96  # the author's ProbeAssistant: a log each time the loss passes log(2)·0.96^k


def loss_thresholds(floor: float, start: float = math.log(2), factor: float = LOSS_THRESHOLD_FACTOR) -> list[float]:
    """log(2)·0.96^k for k = 1, 2, … down to ``floor``."""
    count = math.floor(math.log(floor / start) / math.log(factor))
    return [start * factor**k for k in range(1, count + 1)]


def initial_network(settings: dict, seed: int, weights=None) -> nn.Module:
    """f_θ₀ of a run: the zoo model drawn on the CPU from the seed alone (so every α of a seed starts
    from the same θ₀, on any device), its body then overwritten by the pretrained ``weights`` where
    given (a prepared weights dataset, e.g. torchvision's ImageNet ResNet-18; the last layer keeps
    its fresh draw, as the thesis's Waterbirds runs)."""
    torch.manual_seed(seed)
    network = build_model(settings["model"])
    if weights is not None:
        load_except_head(network, load_prepared(weights))
    return network


def spurious_session(task: SpuriousTask, settings: dict, network: nn.Module, alpha: float, seed: int,
                     state_path=None, inputs_version: str = "") -> tuple[Session, PerfectBatchStop]:
    """One run of Fig 5.3 from ``network`` (f_θ₀, trained in place): f^α = α(f_θ − f_θ₀) with one
    logit, SGD with momentum at lr/α² on the logistic loss, batches of ``batch_size`` in the seed's
    order (the same for every α), until ``patience`` perfect mini-batches in a row or
    ``max_epochs``. Evaluations: every ``log_every`` steps, at every epoch's start and when the
    mini-batch loss first passes each of log(2)·0.96^k (down to ``loss_floor``), as the author's
    code; the linearity metrics on the balanced test set at every ``linearity_every``-th evaluation
    (null: never)."""
    model = AlphaScaled(network, alpha, keep_initial_output=settings["keep_initial_output"],
                        frozen_batch_norm=settings["frozen_batch_norm"])
    loss = LogisticLossWithAccuracy()
    learner = SupervisedLearner(model, alpha_scaled_optimiser(model, settings["optimiser"]), loss, task.train.x,
                                task.train.y, augment=lambda x, step: task.inputs(x))
    batches = EpochBatches(len(task.train.y), settings["batch_size"], seed)
    steps = settings["max_epochs"] * batches.steps_per_epoch
    probes = [loss.batch_metrics, SpuriousProbe(model, task.balanced, task.inputs)]
    if settings["linearity_every"]:
        probes.append(LinearityProbe(model.network, task.inputs(task.balanced["balanced_test"].x),
                                     every=settings["linearity_every"]))
    stop = PerfectBatchStop(loss, settings["patience"])
    when = (Every(settings["log_every"]) | epoch_starts(batches.steps_per_epoch)
            | LossThresholds(loss_thresholds(settings["loss_floor"])))
    session = Session(learner, batches, steps, probes=probes, evaluate_at=when,
                      guard=DivergenceGuard(factor=math.inf), stop=stop, stop_at=Every(1),
                      checkpoint=checkpoint_for(state_path, {**settings, "alpha": alpha}, seed, inputs_version),
                      progress=Progress(steps, name=f"alpha {alpha:g}"))
    return session, stop


def spurious_run(task: SpuriousTask, settings: dict, network: nn.Module, alpha: float, seed: int,
                 state_path=None, inputs_version: str = "") -> tuple[pd.DataFrame, dict]:
    """One α from ``network`` (f_θ₀): its log (one row per evaluation) and its summary (how it
    ended, its steps and epochs, the task's set sizes)."""
    session, stop = spurious_session(task, settings, network, alpha, seed, state_path, inputs_version)
    record = session.run()
    steps_per_epoch = session.batches.steps_per_epoch
    rows = record.frame()
    rows.insert(1, "epoch", rows.step / steps_per_epoch)
    summary = {"alpha": alpha, "ended": record.ended, "stop_reason": stop.reason, "steps": record.steps,
               "epochs": record.steps / steps_per_epoch, "train_seconds": record.seconds,
               "parameters": sum(p.numel() for p in network.parameters()), **task.counts}
    return rows, summary


def spurious_seed_runs(task: SpuriousTask, settings: dict, alphas: list[float], seed: int, device,
                       weights=None, state_dir=None, inputs_version: str = "") -> dict[float, tuple[pd.DataFrame, dict]]:
    """Every α of one seed from one θ₀, deep-copied for each (the author's code trains its three α in
    one process the same way). With ``state_dir``, a killed job resumes the α it was training and
    keeps the ones it had finished."""
    initial = initial_network(settings, seed, weights)
    results = {}
    for alpha in alphas:
        state = Path(state_dir) / f"alpha{alpha:g}.pt" if state_dir else None
        finished = state.with_name(f"alpha{alpha:g}_finished.pt") if state else None
        key = run_key({**settings, "alpha": alpha}, seed, inputs_version)
        if finished is not None and finished.exists() and (saved := load_checkpoint(finished))["key"] == key:
            results[alpha] = (pd.DataFrame.from_records(saved["rows"]), saved["summary"])
            LOG.info("alpha %g: finished earlier, kept from %s", alpha, finished)
            continue
        rows, summary = spurious_run(task, settings, copy.deepcopy(initial).to(device), alpha, seed, state,
                                     inputs_version)
        if finished is not None:
            save_checkpoint(finished, key=key, rows=rows.to_dict("records"), summary=summary)
        results[alpha] = rows, summary
    return results


def forget_finished(state_dir, alphas: list[float]) -> None:
    """Remove the finished runs a job kept while it trained, once its outputs are written."""
    for alpha in alphas:
        (Path(state_dir) / f"alpha{alpha:g}_finished.pt").unlink(missing_ok=True)
