"""Experiments for Chapter 5 (lazy vs hasty) and appendix C. The runs behind Figs 5.1-5.4 and C.1-C.9
(linearised vs non-linear training on easy and difficult examples; the quadratic model)."""

from __future__ import annotations

import copy
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
from ...data.weights import load_except_head
from ...linearize.alpha_scaling import AlphaScaled, alpha_scaled_optimiser
from ...linearize.linearity import LinearityProbe
from ...models.zoo import build_model
from ...train.batches import EpochBatches
from ...train.learners import SupervisedLearner
from ...train.probes import predicted
from ...train.progress import Progress
from ...train.runtime import load_checkpoint, save_checkpoint
from ...train.schedules import Every, LossThresholds, epoch_starts
from ...train.session import DivergenceGuard, Session, checkpoint_for, run_key

LOG = logging.getLogger(__name__)

# --- Fig 5.1: the yin-yang toy, α = 1 vs α = 100, Δloss maps at loss thresholds ---


# --- Figs 5.4, C.9: the quadratic model in closed form, and a 2-layer linear MLP on its datasets ---


# --- Figs 5.2, C.1-C.6: α-scaled runs on C-score groups and noisy labels, linearity metrics ---


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
    the training and the test split, fewer where a cell is smaller (Waterbirds' training split, trap
    T-LVH-12; the author's code draws them from the whole split, not only the examples trained on).
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
