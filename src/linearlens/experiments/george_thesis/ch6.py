"""Experiments for Chapter 6 (NTK alignment) and appendix B. The runs behind Figs 6.1-6.6 and B.1-B.8
(tangent-kernel spectrum, alignment with the labels, SuperNat, complexity measures); Fig 6.5's left half is
an algorithm box, drawn with its curves."""

from __future__ import annotations

import inspect

import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor

from ...analysis.george_thesis.ch6 import complexity_run_name, learning_flow_of_records
from ...capacity.measures import UpdateNormTracker, complexity_measures
from ...data.transforms import randomise_labels
from ...kernels.ntk import ntk_diagonal
from ...models.zoo import build_model, model_constructor
from ...train.batches import EpochBatches, seeded_generator
from ...train.learners import SupervisedLearner
from ...train.progress import Progress
from ...train.runtime import choose_device, full_float32_matmuls, seed_everything
from ...train.schedules import Every
from ...train.session import RunRecord, Scheduled, Session, checkpoint_for
from ...train.tasks import classification_metrics, load_task

# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and its alignment with the labels over training (alignment) ---

# --- end of alignment ---

# --- Figs 6.4, B.7: alignment on easy vs difficult examples (easy_difficult) ---

# --- end of easy_difficult ---

# --- Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task (disk) ---

# --- end of disk ---

# --- Fig B.2: spectral bias of a random MLP's tangent kernel (spectral_bias) ---

# --- end of spectral_bias ---

# --- Fig 6.5: SuperNat vs gradient descent on noisy linear regression (supernat) ---

# --- end of supernat ---

# --- Fig B.3: which norm measures capacity (random RBF features) (rbf_capacity) ---

# --- end of rbf_capacity ---

# --- Fig B.1: output change along the Jacobian's top singular directions (perturbation) ---

# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

def complexity_task(data_npz, corruption: float, seed: int, device: torch.device) -> dict[str, Tensor]:
    """The prepared dataset as tensors, the training labels randomised at rate ``corruption``
    (each redrawn uniformly from all classes with that probability, so possibly unchanged;
    seeded by the run's seed); the test labels stay clean. ``redrawn``: which labels were."""
    task = load_task(data_npz, device=device)
    num_classes = int(max(task["y_train"].max(), task["y_test"].max())) + 1
    labels, redrawn = randomise_labels(task["y_train"].cpu().numpy(), corruption, num_classes, seed)
    task["y_train"] = torch.as_tensor(labels, device=device)
    task["redrawn"] = torch.as_tensor(redrawn, device=device)
    return task


def sized_spec(model: dict, x: Tensor, num_classes: int) -> dict:
    """The zoo spec with the sizes the data fixes, for each argument its constructor takes (an
    MLP flattens the images itself)."""
    sizes = {"in_features": x[0].numel(), "out_features": num_classes, "in_channels": x.shape[1],
             "num_classes": num_classes}
    accepted = inspect.signature(model_constructor(model["name"])).parameters
    return {**{k: v for k, v in sizes.items() if k in accepted}, **model}


class ComplexityRun:
    """One run of Fig 6.6: SGD with momentum on the cross-entropy until the training loss on the
    whole training set is at most ``stop_loss`` (checked at every epoch's end), or ``max_epochs``
    (a capped run). Every step adds ‖δw_t‖ to an exact running sum; every ``trace_every`` steps a
    probe records Tr K_t on a fixed probe of ``trace_probe`` training examples (all outputs) beside
    the running sum; at the end, the train and test errors and every complexity measure.

    run: dataset, model (zoo spec without sizes), corruption, optimiser {lr, momentum},
    batch_size, stop_loss, max_epochs, trace_every, trace_probe, margin_quantile, state_every_s,
    device.
    """

    def __init__(self, data_npz, run: dict, seed: int):
        self.run, self.seed = run, seed
        self.device = choose_device(run.get("device", "auto"))
        self.task = complexity_task(data_npz, run["corruption"], seed, self.device)
        x, y = self.task["x_train"], self.task["y_train"]
        self.num_classes = int(max(y.max(), self.task["y_test"].max())) + 1
        self.model_spec = sized_spec(run["model"], x, self.num_classes)
        seed_everything(seed)
        self.model = build_model(self.model_spec).to(self.device)
        self.initial = {name: p.detach().clone() for name, p in self.model.named_parameters()}
        self.batches = EpochBatches(len(y), run["batch_size"], seed)
        probe = torch.randperm(len(y), generator=seeded_generator(seed, 5))[:run["trace_probe"]]
        self.x_probe = x[probe.to(self.device)]
        self.norms = UpdateNormTracker(self.model)
        optimiser = run["optimiser"]
        sgd = torch.optim.SGD(self.model.parameters(), lr=optimiser["lr"], momentum=optimiser.get("momentum", 0.0))
        self.learner = SupervisedLearner(self.model, sgd, F.cross_entropy, x, y, trackers=[self.norms])
        self.result: RunRecord | None = None

    @property
    def steps_per_epoch(self) -> int:
        return self.batches.steps_per_epoch

    def trace(self, session: Session) -> dict:
        """Tr K_t of the probe's Gram (examples × outputs) and the running sum of ‖δw‖ to this step."""
        return {"probe_trace": float(ntk_diagonal(self.model, self.x_probe, output="trace").sum()),
                "update_norm_sum": float(self.norms.total)}

    def evaluation(self, session: Session) -> dict:
        """Loss and error on the whole training set (its labels as trained on) and the test set."""
        self.model.eval()
        record = {"epoch": session.step / self.steps_per_epoch}
        for split in ("train", "test"):
            accuracy, loss = classification_metrics(self.model, self.task[f"x_{split}"], self.task[f"y_{split}"])
            record[f"{split}_loss"], record[f"{split}_error"] = loss, 1 - accuracy
        return record

    def reached(self, session: Session) -> bool:
        """The stopping rule: training cross-entropy at most ``stop_loss`` at the last evaluation."""
        losses = [row["train_loss"] for row in session.rows if "train_loss" in row]
        return bool(losses) and losses[-1] <= self.run["stop_loss"]

    def session(self, state_path=None, inputs_version: str = "") -> Session:
        epochs = Every(self.steps_per_epoch)
        steps = self.run["max_epochs"] * self.steps_per_epoch
        checkpoint = checkpoint_for(state_path, self.run, self.seed, inputs_version, self.run.get("state_every_s", 1800))
        return Session(self.learner, self.batches, steps,
                       probes=[Scheduled(self.trace, Every(self.run["trace_every"])), self.evaluation],
                       evaluate_at=epochs, stop=self.reached, stop_at=epochs, checkpoint=checkpoint,
                       progress=Progress(steps, name=complexity_run_name(self.run)))

    def train(self, state_path=None, inputs_version: str = "") -> RunRecord:
        self.result = self.session(state_path, inputs_version).run()
        return self.result

    def records(self) -> pd.DataFrame:
        return self.result.frame()

    def final(self) -> dict:
        """The run's end: errors, gap, whether it was capped, the learning-flow measure (6.4.11)
        and the comparison measures of the final network."""
        records = self.records()
        last = records.dropna(subset=["train_loss"]).iloc[-1]
        n_train = len(self.task["y_train"])
        measures = complexity_measures(self.model, self.initial, self.task["x_train"], self.task["y_train"],
                                       self.run.get("margin_quantile", 0.05))
        return {
            "run": self.run, "seed": self.seed, "model_spec": self.model_spec,
            "steps": self.result.steps, "epochs": self.result.steps / self.steps_per_epoch,
            "capped": self.result.ended != "stopped", "ended": self.result.ended,
            "parameters": sum(p.numel() for p in self.model.parameters()),
            "n_train": n_train, "n_probe": len(self.x_probe), "labels_redrawn": len(self.task["redrawn"]),
            "train_loss": float(last["train_loss"]), "train_error": float(last["train_error"]),
            "test_loss": float(last["test_loss"]), "test_error": float(last["test_error"]),
            "gap": float(last["test_error"] - last["train_error"]),
            "update_norm_sum": float(self.norms.total),
            "learning_flow": learning_flow_of_records(records, n_train, len(self.x_probe)),
            **measures,
            "seconds": self.result.seconds,
        }


def complexity_run(data_npz, run: dict, seed: int, state_path=None, inputs_version: str = ""
                   ) -> tuple[pd.DataFrame, dict]:
    """Train one run of Fig 6.6 (resuming from ``state_path`` when it holds this run's state):
    its records over training and its final measures."""
    full_float32_matmuls()
    experiment = ComplexityRun(data_npz, run, seed)
    experiment.train(state_path, inputs_version)
    return experiment.records(), experiment.final()

# --- end of complexity ---
