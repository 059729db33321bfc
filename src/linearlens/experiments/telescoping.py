"""Runs of the telescoping-lens paper (Jeffares, Curth & van der Schaar, NeurIPS 2024).

Every run trains in float64 (10⁴–10⁵ small telescoping increments) and returns a table of
records; the rules write one file per (setting, width/α/ε, seed).
"""

from __future__ import annotations

import pandas as pd
import torch

from ..linearize.smoother import smoother_for
from ..linearize.telescoping import TelescopingTracker
from ..models.zoo import build_model
from ..parameters import ParameterLayout
from ..train.batches import GeneratorBatches
from ..train.learners import SupervisedLearner
from ..train.losses import squared_loss, squared_loss_of
from ..train.optimisers import build_optimiser
from ..train.runtime import default_dtype, dtype_from_name, seed_everything
from ..train.schedules import Every, Warmup, log_spaced
from ..train.session import Session, checkpoint_for
from ..train.tasks import accuracy, load_task


def task_tensors(data_npz, device: str | torch.device = "cpu") -> dict[str, torch.Tensor]:
    """Flattened float64 inputs and float64 targets ({0, 1} labels of a binary task, or real
    values; accuracy thresholds a scalar output at 0.5, the paper's y ∈ [0, 1])."""
    return load_task(data_npz, dtype=torch.float64, layout="flat", targets="values", device=device)


def approximation_run(data_npz, run: dict, seed: int, device: str | torch.device = "cpu", state_path=None,
                      inputs_version: str = "") -> pd.DataFrame:
    """Figs 2, 7, 8: how well the telescoping model f̃ and the model linearised at
    initialisation f^lin track the trained network on the test set, step by step.

    run: hidden, activation, init_scale, sigmoid, optimiser (spec with lr), warmup_steps,
    steps, batch_size, loss, log_points. With ``state_path``, an interrupted run resumes there.
    """
    model_spec = {"name": "mlp", "hidden": run["hidden"], "activation": run["activation"],
                  "init_scale": run.get("init_scale", 1.0), "sigmoid_output": run.get("sigmoid", False)}
    with default_dtype("float64"):
        task, model, optimizer = _start(data_npz, model_spec, run, seed, device)
        tracker = TelescopingTracker(model, task["x_test"])

        def approximation(session):
            return _approximation_record(model, tracker, task, run["loss"])

        record = Session(_learner(model, optimizer, task, run, [tracker]), _batches(task, run, seed), run["steps"],
                         probes=[approximation], evaluate_at=log_spaced(run["steps"], run["log_points"]),
                         checkpoint=checkpoint_for(state_path, run, seed, inputs_version)).run()
    return record.frame()


def _approximation_record(model, tracker, task, loss) -> dict:
    with torch.no_grad():
        network = model(task["x_test"]).reshape(-1)
        train_loss = float(squared_loss(model(task["x_train"]), task["y_train"], loss))
    telescoped, linearised = tracker.telescoped, tracker.linearised()
    labels = task["y_test"]
    return {"train_loss": train_loss,
            "error_telescoping": float((network - telescoped).abs().mean()),
            "error_linearised": float((network - linearised).abs().mean()),
            "accuracy_network": accuracy(network, labels),
            "accuracy_telescoping": accuracy(telescoped, labels),
            "accuracy_linearised": accuracy(linearised, labels)}


def _start(data_npz, model_spec: dict, run: dict, seed: int, device):
    """The float64 task, the seeded scalar network (sizes taken from the data) and its
    optimiser, all on ``device``: what every run of this paper begins with."""
    task = task_tensors(data_npz, device)
    seed_everything(seed)
    spec = {**model_spec, "in_features": task["x_train"].shape[1]}
    if spec["name"] == "mlp":
        spec["out_features"] = 1
    model = build_model(spec).to(device)  # initialised on the CPU: the same weights everywhere
    return task, model, build_optimiser(run["optimiser"], model.parameters())


def _learner(model, optimizer, task, run: dict, trackers) -> SupervisedLearner:
    """The squared loss of the run's scale, the warm-up, and the trackers carried along."""
    return SupervisedLearner(model, optimizer, squared_loss_of(run["loss"]),
                             task["x_train"], task["y_train"], learning_rate=Warmup(run.get("warmup_steps", 0)),
                             trackers=trackers)


def _batches(task, run: dict, seed: int) -> GeneratorBatches:
    return GeneratorBatches(len(task["x_train"]), run["batch_size"], torch.Generator().manual_seed(seed))


class EarlyStop:
    """The double-descent stopping rule (after BHMM19), asked at the end of each epoch: stop when
    the training accuracy is 100% or the training loss has not improved by more than
    ``min_improvement`` for ``patience_epochs`` epochs. ``fit()`` gives (loss, accuracy)."""

    def __init__(self, fit, patience_epochs: int, min_improvement: float, at_full_train_accuracy: bool = True):
        self.fit, self.patience, self.min_improvement = fit, patience_epochs, min_improvement
        self.at_full_train_accuracy = at_full_train_accuracy
        self.best, self.since_best = float("inf"), 0

    def __call__(self, session) -> bool:
        train_loss, train_accuracy = self.fit()
        if self.at_full_train_accuracy and train_accuracy == 1.0:
            return True
        if train_loss < self.best - self.min_improvement:
            self.best, self.since_best = train_loss, 0
        else:
            self.since_best += 1
        return self.since_best >= self.patience

    def state_dict(self) -> dict:
        return {"best": self.best, "since_best": self.since_best}

    def load_state_dict(self, state: dict) -> None:
        self.best, self.since_best = state["best"], state["since_best"]


def smoother_run(data_npz, run: dict, seed: int, device: str | torch.device = "cpu", state_path=None,
                 inputs_version: str = "") -> pd.DataFrame:
    """Figs 3, 4, 9–13: train a scalar network while the smoother f̃ = S y + c is carried along
    on the training and test points; record errors and effective parameters p^train, p^test.

    run: model (zoo spec without sizes), optimiser, loss, batch_size, warmup_steps, log_points,
    product_dtype (of the smoother's per-step products), and either steps, or stopping
    {max_epochs, patience_epochs, min_improvement} (the double-descent rule; ``steps`` is then
    max_epochs epochs). With ``state_path``, an interrupted run resumes there.
    """
    with default_dtype("float64"):
        task, model, optimizer = _start(data_npz, run["model"], run, seed, device)
        smoother = smoother_for(model, optimizer, task["x_train"], task["x_test"], run["loss"],
                                dtype_from_name(run.get("product_dtype", "float64")))
        n = len(task["x_train"])
        batches = _batches(task, run, seed)
        stopping = run.get("stopping")
        steps = stopping["max_epochs"] * batches.steps_per_epoch if stopping else run["steps"]
        binary = bool(((task["y_train"] == 0) | (task["y_train"] == 1)).all())

        def smoother_fit(session):
            return _smoother_record(model, smoother, task, run["loss"], binary)

        stop = EarlyStop(lambda: _train_fit(model, task, run["loss"]), stopping["patience_epochs"],
                         stopping["min_improvement"], stopping.get("at_full_train_accuracy", True)) if stopping else None
        record = Session(_learner(model, optimizer, task, run, [smoother]), batches, steps, probes=[smoother_fit],
                         evaluate_at=log_spaced(steps, run["log_points"]), stop=stop,
                         stop_at=Every(batches.steps_per_epoch),
                         checkpoint=checkpoint_for(state_path, run, seed, inputs_version)).run()
    frame = record.frame()
    frame["epoch"] = frame["step"] / batches.steps_per_epoch
    frame["parameters"] = ParameterLayout(model).size
    frame["n_train"] = n
    return frame


@torch.no_grad()
def _train_fit(model, task, loss) -> tuple[float, float]:
    """(training loss, training accuracy) of the network now."""
    f_train = model(task["x_train"]).reshape(-1)
    return float(squared_loss(f_train, task["y_train"], loss)), accuracy(f_train, task["y_train"])


def _smoother_record(model, smoother, task, loss, binary) -> dict:
    with torch.no_grad():
        f_train, f_test = model(task["x_train"]).reshape(-1), model(task["x_test"]).reshape(-1)
    s_train, s_test = smoother.predictions(task["y_train"])
    p_train, p_test = smoother.effective_parameters()
    record = {"train_loss": float(squared_loss(f_train, task["y_train"], loss)),
              "train_mse": float(((f_train - task["y_train"]) ** 2).mean()),
              "test_mse": float(((f_test - task["y_test"]) ** 2).mean()),
              "p_train": p_train, "p_test": p_test,
              # S y + c against the network: the telescoping approximation, checked at every log.
              "smoother_gap": float(torch.cat([s_train - f_train, s_test - f_test]).abs().max()),
              "output_scale": float(torch.cat([f_train, f_test]).abs().max())}
    if binary:
        record["train_accuracy"] = accuracy(f_train, task["y_train"])
        record["test_accuracy"] = accuracy(f_test, task["y_test"])
        record["train_error"] = 1 - record["train_accuracy"]
        record["test_error"] = 1 - record["test_accuracy"]
    else:
        record["train_accuracy"] = float("nan")
    return record
