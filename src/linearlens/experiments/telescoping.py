"""Runs of the telescoping-lens paper (Jeffares, Curth & van der Schaar, NeurIPS 2024).

Every run trains in float64 (10⁴–10⁵ small telescoping increments) and returns a table of
records; the rules write one file per (setting, width/α/ε, seed).
"""

from __future__ import annotations

import pandas as pd
import torch

from ..data.prepared import load_prepared
from ..linearize.smoother import smoother_for
from ..linearize.telescoping import TelescopingTracker
from ..models.zoo import build_model
from ..train.loop import log_schedule, train_steps
from ..train.losses import squared_loss
from ..train.optimisers import build_optimiser, linear_warmup
from ..train.runtime import default_dtype, dtype_from_name, seed_everything


def task_tensors(data_npz, device: str | torch.device = "cpu") -> dict[str, torch.Tensor]:
    """Flattened float64 inputs and float64 targets ({0, 1} labels of a binary task, or real
    values) of a prepared dataset, on ``device``."""
    arrays = load_prepared(data_npz)
    task = {}
    for split in ("train", "test"):
        x = torch.as_tensor(arrays[f"x_{split}"], dtype=torch.float64, device=device)
        task[f"x_{split}"] = x.reshape(len(x), -1)
        task[f"y_{split}"] = torch.as_tensor(arrays[f"y_{split}"], dtype=torch.float64, device=device)
    return task


def accuracy(predictions: torch.Tensor, labels: torch.Tensor) -> float:
    """0/1 labels, threshold 0.5 (paper: y ∈ [0, 1])."""
    return float(((predictions > 0.5).double() == labels).double().mean())


def approximation_run(data_npz, run: dict, seed: int, device: str | torch.device = "cpu") -> pd.DataFrame:
    """Figs 2, 7, 8: how well the telescoping model f̃ and the model linearised at
    initialisation f^lin track the trained network on the test set, step by step.

    run: hidden, activation, init_scale, sigmoid, optimiser (spec with lr), warmup_steps,
    steps, batch_size, loss, log_points.
    """
    model_spec = {"name": "mlp", "hidden": run["hidden"], "activation": run["activation"],
                  "init_scale": run.get("init_scale", 1.0), "sigmoid_output": run.get("sigmoid", False)}
    with default_dtype("float64"):
        task, model, optimizer, scheduler = _start(data_npz, model_spec, run, seed, device)
        tracker = TelescopingTracker(model, task["x_test"])
        logged = set(log_schedule(run["steps"], run["log_points"]))
        records = [_approximation_record(0, model, tracker, task, run["loss"])]

        def record(step, batch):
            if step in logged:
                records.append(_approximation_record(step, model, tracker, task, run["loss"]))

        train_steps(model, optimizer, task["x_train"], task["y_train"], loss=run["loss"],
                    steps=run["steps"], batch_size=run["batch_size"], seed=seed, scheduler=scheduler,
                    trackers=[tracker], after_step=record)
    return pd.DataFrame.from_records(records)


def _approximation_record(step, model, tracker, task, loss) -> dict:
    with torch.no_grad():
        network = model(task["x_test"]).reshape(-1)
        train_loss = float(squared_loss(model(task["x_train"]), task["y_train"], loss))
    telescoped, linearised = tracker.telescoped, tracker.linearised()
    labels = task["y_test"]
    return {"step": step, "train_loss": train_loss,
            "error_telescoping": float((network - telescoped).abs().mean()),
            "error_linearised": float((network - linearised).abs().mean()),
            "accuracy_network": accuracy(network, labels),
            "accuracy_telescoping": accuracy(telescoped, labels),
            "accuracy_linearised": accuracy(linearised, labels)}




def _start(data_npz, model_spec: dict, run: dict, seed: int, device):
    """The float64 task, the seeded scalar network (sizes taken from the data), its optimiser
    and warm-up schedule, all on ``device``: what every run of this paper begins with."""
    task = task_tensors(data_npz, device)
    seed_everything(seed)
    spec = {**model_spec, "in_features": task["x_train"].shape[1]}
    if spec["name"] == "mlp":
        spec["out_features"] = 1
    model = build_model(spec).to(device)  # initialised on the CPU: the same weights everywhere
    optimizer = build_optimiser(run["optimiser"], model.parameters())
    return task, model, optimizer, linear_warmup(optimizer, run.get("warmup_steps", 0))


class EarlyStop:
    """The double-descent stopping rule (after BHMM19), asked at the end of each epoch: stop when
    the training accuracy is 100% or the training loss has not improved by more than
    ``min_improvement`` for ``patience_epochs`` epochs."""

    def __init__(self, patience_epochs: int, min_improvement: float, at_full_train_accuracy: bool = True):
        self.patience, self.min_improvement = patience_epochs, min_improvement
        self.at_full_train_accuracy = at_full_train_accuracy
        self.best, self.since_best = float("inf"), 0

    def __call__(self, train_loss: float, train_accuracy: float) -> bool:
        if self.at_full_train_accuracy and train_accuracy == 1.0:
            return True
        if train_loss < self.best - self.min_improvement:
            self.best, self.since_best = train_loss, 0
        else:
            self.since_best += 1
        return self.since_best >= self.patience


def smoother_run(data_npz, run: dict, seed: int, device: str | torch.device = "cpu") -> pd.DataFrame:
    """Figs 3, 4, 9–13: train a scalar network while the smoother f̃ = S y + c is carried along
    on the training and test points; record errors and effective parameters p^train, p^test.

    run: model (zoo spec without sizes), optimiser, loss, batch_size, warmup_steps, log_points,
    product_dtype (of the smoother's per-step products), and either steps, or stopping
    {max_epochs, patience_epochs, min_improvement} (the double-descent rule; ``steps`` is then
    max_epochs epochs).
    """
    with default_dtype("float64"):
        task, model, optimizer, scheduler = _start(data_npz, run["model"], run, seed, device)
        smoother = smoother_for(model, optimizer, task["x_train"], task["x_test"], run["loss"],
                                dtype_from_name(run.get("product_dtype", "float64")))
        n = len(task["x_train"])
        steps_per_epoch = -(-n // run["batch_size"])
        stopping = run.get("stopping")
        steps = stopping["max_epochs"] * steps_per_epoch if stopping else run["steps"]
        stop = EarlyStop(stopping["patience_epochs"], stopping["min_improvement"],
                         stopping.get("at_full_train_accuracy", True)) if stopping else None
        logged = set(log_schedule(steps, run["log_points"]))
        binary = bool(((task["y_train"] == 0) | (task["y_train"] == 1)).all())
        records = [_smoother_record(0, model, smoother, task, run["loss"], binary)]

        def after_step(step, batch):
            epoch_end = stop is not None and step % steps_per_epoch == 0
            if step not in logged and not epoch_end:
                return False
            record = _smoother_record(step, model, smoother, task, run["loss"], binary)
            stopping_now = epoch_end and stop(record["train_loss"], record["train_accuracy"])
            if step in logged or stopping_now:
                records.append(record)
            return stopping_now

        train_steps(model, optimizer, task["x_train"], task["y_train"], loss=run["loss"], steps=steps,
                    batch_size=run["batch_size"], seed=seed, scheduler=scheduler,
                    trackers=[smoother], after_step=after_step)
    frame = pd.DataFrame.from_records(records)
    frame["epoch"] = frame["step"] / steps_per_epoch
    frame["parameters"] = sum(p.numel() for p in model.parameters() if p.requires_grad)
    frame["n_train"] = n
    return frame


def _smoother_record(step, model, smoother, task, loss, binary) -> dict:
    with torch.no_grad():
        f_train, f_test = model(task["x_train"]).reshape(-1), model(task["x_test"]).reshape(-1)
    s_train, s_test = smoother.predictions(task["y_train"])
    p_train, p_test = smoother.effective_parameters()
    record = {"step": step,
              "train_loss": float(squared_loss(f_train, task["y_train"], loss)),
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
