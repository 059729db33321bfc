"""Chapter 3 and Appendix B, local signal adaptivity (a CNN against its tangent kernel): the runs
behind Figs 3.2-3.5 and Tables 3.1, B.1 (Fig 3.1 is photographs, listed only)."""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ...analysis.karp_thesis.ch3 import array_key
from ...data.noisy_images import grouped_labels, noisy_split, resized
from ...linearize.linearised import Linearised
from ...linearize.linearity import active_fractions
from ...models.zoo import build_model
from ...train.batches import EpochBatches
from ...train.learners import SupervisedLearner
from ...train.optimisers import build_optimiser
from ...train.progress import Progress
from ...train.runtime import seed_everything
from ...train.schedules import AtSteps, Every, StepDecay
from ...train.session import Session, checkpoint_for

# --- the noisy-image datasets (Sec 3.6, App. B.3-B.4) -----------------------------------------

SPLITS = ("train", "test")
STORED = np.float16  # pixels as stored: a 64 x 64 CIFAR variant is 1.2 GB so, 2.4 GB in float32


def _seed_of(seed: int, *names: str) -> np.random.Generator:
    """One generator per (seed, names): the levels of a setting at one placement and size share it,
    so they differ in the background's scale only (the same placements and background draws)."""
    return np.random.default_rng([seed, *(zlib.crc32(name.encode()) for name in names)])


def noisy_variant(images: dict[str, np.ndarray], setting: dict, size: dict, placement: str, level: float,
                  seed: int, bank: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """One variant: the setting's images (classes grouped as it says), resized to the size's image
    side and placed on its background side at ``placement`` over backgrounds at ``level``."""
    rng = _seed_of(seed, setting["label"], placement, str(size["image"]), str(size["background"]))
    background = setting["background"]
    pool = None
    if background["kind"] == "bank":
        pool = bank
    elif background["kind"] == "tiles":  # distractor images of other classes, from the training split
        chosen = np.isin(images["y_train"], background["classes"])
        pool = resized(images["x_train"][chosen], size["image"])
    out = {}
    for split in SPLITS:
        keep, labels = grouped_labels(images[f"y_{split}"], setting["classes"])
        pictures = resized(images[f"x_{split}"][keep], size["image"])
        noisy, _ = noisy_split(pictures, background, level, placement, size["background"], rng, pool)
        out[f"x_{split}"] = noisy.astype(STORED)
        out[f"y_{split}"] = labels
    return out


def make_image_variants(datasets: dict[str, dict[str, np.ndarray]], images: dict, variants: list[dict]
                        ) -> dict[str, np.ndarray]:
    """A data job's variants as one dict of arrays (``array_key`` names them)."""
    arrays = {}
    for variant in variants:
        setting = images["settings"][variant["setting"]]
        background = setting["background"]
        bank = None
        if background["kind"] == "bank":
            stored = datasets[background["dataset"]]
            bank = np.concatenate([stored["x_train"], stored["x_test"]]).astype(np.float32)
        made = noisy_variant(datasets[setting["dataset"]], setting, images["sizes"][variant["size"]],
                             variant["placement"], variant["level"], images["seed"], bank)
        arrays.update({array_key(variant["name"], name): value for name, value in made.items()})
    return arrays


def example_images(datasets: dict[str, dict[str, np.ndarray]], images: dict) -> dict[str, np.ndarray]:
    """Fig 3.5: the first ``count`` test images of each example setting at the examples' level."""
    examples = images["examples"]
    arrays = {}
    for name in examples["settings"]:
        setting = images["settings"][name]
        variant = {"name": name, "setting": name, "placement": setting["placement"], "size": setting["size"],
                   "level": examples["level"]}
        made = make_image_variants(datasets, images, [variant])
        arrays[name] = made[array_key(name, "x_test")][:examples["count"]].astype(np.float32)
    return arrays


def variant_task(arrays, variant_name: str, device) -> dict[str, Tensor]:
    """A variant's splits as float32 tensors on ``device``."""
    task = {}
    for split in SPLITS:
        task[f"x_{split}"] = torch.as_tensor(np.asarray(arrays[array_key(variant_name, f"x_{split}")],
                                                        dtype=np.float32), device=device)
        task[f"y_{split}"] = torch.as_tensor(arrays[array_key(variant_name, f"y_{split}")], device=device)
    return task


# --- the network and its linearisation at θ₀ (App. B.3) -----------------------------------------

def class_mean_cross_entropy(logits: Tensor, labels: Tensor) -> Tensor:
    """The authors' loss, −mean over classes of log-softmax · one-hot: cross-entropy / C (spec C3-4)."""
    return F.cross_entropy(logits, labels) / logits.shape[1]


LOSSES = {"cross_entropy": F.cross_entropy, "cross_entropy_over_classes": class_mean_cross_entropy}


def _chunks(x: Tensor, size: int):
    return (x[start:start + size] for start in range(0, len(x), size))


@torch.no_grad()
def _outputs(model: nn.Module, x: Tensor, chunk: int) -> Tensor:
    """Outputs in chunks, the model in eval mode: a batch-statistics network normalises each chunk
    by its own statistics, as the authors' evaluation in chunks of 100 did (spec C3-5, C3-8)."""
    model.eval()
    try:
        return torch.cat([model(part) for part in _chunks(x, chunk)])
    finally:
        model.train()


class TestEvaluation:
    """The test loss and accuracy, and the mean training loss since the last evaluation."""

    def __init__(self, model: nn.Module, task: dict[str, Tensor], loss, steps_per_epoch: int, chunk: int):
        self.model, self.task, self.loss, self.steps_per_epoch, self.chunk = model, task, loss, steps_per_epoch, chunk

    def __call__(self, session: Session) -> dict:
        logits = _outputs(self.model, self.task["x_test"], self.chunk)
        return {"epoch": session.step / self.steps_per_epoch, "seconds": session.seconds,
                "train_loss": session.mean_loss(), "test_loss": float(self.loss(logits, self.task["y_test"])),
                "test_accuracy": float((logits.argmax(1) == self.task["y_test"]).double().mean())}


def trained_model(kind: str, settings: dict, task: dict[str, Tensor], seed: int) -> nn.Module:
    """The WRN (``network``) or its linearisation at θ₀ (``linearisation``), both from the same θ₀ of
    ``seed``. The linearisation's BatchNorm runs on θ₀'s statistics over the training images."""
    seed_everything(seed)
    x = task["x_train"]
    spec = {**settings["model"], "in_channels": x.shape[1], "num_classes": int(task["y_train"].max()) + 1}
    device = x.device
    if kind == "network":
        return build_model({**spec, "batch_statistics": "always"}).to(device)
    network = build_model({**spec, "batch_statistics": "running"}).to(device)
    return Linearised(network, statistics_inputs=lambda: _chunks(x, settings["statistics_batch"]))


def local_signal_run(kind: str, settings: dict, task: dict[str, Tensor], seed: int, *, state_path=None,
                     name: str = "", probes_of=lambda model: []) -> pd.DataFrame:
    """One model trained on one task as App. B.3 says: per evaluation (the first epochs, then every
    ``eval_every`` epochs, and the last), the test accuracy and loss and the mean training loss, and
    what the probes ``probes_of(model)`` add."""
    model = trained_model(kind, settings, task, seed)
    trained = [p for p in model.parameters() if p.requires_grad]
    optimiser = build_optimiser(settings["optimiser"], trained)
    loss = LOSSES[settings["loss"]]
    batches = EpochBatches(len(task["x_train"]), settings["batch_size"], seed)
    epoch = batches.steps_per_epoch
    steps = settings["epochs"] * epoch
    rate = StepDecay([drop * epoch for drop in settings["lr_drops"]], settings["lr_factor"])
    learner = SupervisedLearner(model, optimiser, loss, task["x_train"], task["y_train"], learning_rate=rate)
    evaluate_at = Every(settings["eval_every"] * epoch) | AtSteps(range(0, settings["dense_epochs"] * epoch, epoch))
    session = Session(learner, batches, steps,
                      probes=[TestEvaluation(model, task, loss, epoch, settings["eval_batch"]), *probes_of(model)],
                      evaluate_at=evaluate_at,
                      checkpoint=checkpoint_for(state_path, {"kind": kind, "settings": settings, "name": name},
                                                seed, "") if state_path else None,
                      progress=Progress(steps, name=f"{kind} {name}".strip()))
    record = session.run()
    frame = pd.DataFrame.from_records(record.rows)
    frame["ended"] = record.ended
    return frame


def image_runs(arrays, training: dict, kind: str, device, state_dir=None) -> pd.DataFrame:
    """A training job's runs (``analysis...job_training``) on its variants, one after the other."""
    frames = []
    for variant in training["variants"]:
        task = variant_task(arrays, variant["name"], device)
        state = f"{state_dir}/{kind}/{variant['name']}.pt" if state_dir else None
        frame = local_signal_run(kind, training["recipes"][variant["size"]], task, training["seed"],
                                 state_path=state, name=variant["name"])
        for key in ("level", "size", "placement", "setting", "variant"):
            frame.insert(0, key, variant[key] if key != "variant" else variant["name"])
        frame.insert(0, "model", kind)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


# --- Fig 3.2: activation sparsity of the network's ReLU layers over training ---------------------

class ActivityProbe:
    """Per ReLU layer, the fraction of its outputs that are positive on a fixed probe set (in chunks:
    each normalised by its own batch statistics)."""

    def __init__(self, model: nn.Module, probe: Tensor, chunk: int):
        self.model, self.probe, self.chunk = model, probe, chunk

    def __call__(self, session: Session) -> dict:
        self.model.eval()
        try:
            per_chunk = [active_fractions(self.model, part) for part in _chunks(self.probe, self.chunk)]
        finally:
            self.model.train()
        weights = np.array([len(part) for part in _chunks(self.probe, self.chunk)], dtype=float)
        fractions = np.average(np.array(per_chunk), axis=0, weights=weights)
        return {f"active_relu{index + 1}": float(value) for index, value in enumerate(fractions)}


def sparsity_run(task: dict[str, Tensor], settings: dict) -> pd.DataFrame:
    """The network on the plain images (``analysis...sparsity_settings``), evaluated every epoch, with
    each ReLU layer's active fraction on the first ``probe_size`` test images."""
    probe = task["x_test"][:settings["probe_size"]]
    return local_signal_run("network", settings, task, settings["seed"], name="sparsity",
                            probes_of=lambda model: [ActivityProbe(model, probe, settings["eval_batch"])])
