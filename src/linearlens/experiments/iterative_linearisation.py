"""Runs of the iterative-linearisation paper (Goldwaser & Ge, both versions): one run per
(experiment, setting, seed) of iterative linearisation with period K on a classification task,
evaluated as the paper plots it; linear probes on the checkpoints of a run; damped Gauss-Newton on
the 1-D quintic.

A run records, at every evaluation, the network's accuracy and loss at θ_t and the linearised
model's (the model being trained) on the test set and on a fixed part of the training set, the
number of re-linearisations so far, ‖δ‖ and ‖θ_t − θ₀‖. It saves its whole state every
``state_every_s`` seconds, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn

from ..data.prepared import load_prepared
from ..linearize.gauss_newton import GaussNewtonLearner, rmse
from ..linearize.iterative import (
    NEVER,
    IterativeLearner,
    LinearisedTraining,
    has_batch_norm,
    train_iteratively,
    training_for,
)
from ..models.zoo import build_model, model_constructor
from ..parameters import ParameterLayout
from ..train.augment import augment
from ..train.batches import EpochBatches, seeded_generator
from ..train.linear_probe import fit_linear_probe
from ..train.progress import Progress
from ..train.runtime import choose_device, dtype_from_name, full_float32_matmuls, load_checkpoint, seed_everything
from ..train.schedules import AtSteps, Every, Never
from ..train.session import DivergenceGuard, RunRecord, Session, checkpoint_for
from ..train.tasks import classification_metrics, load_task


def period_of(k) -> float:
    """K from the config: a positive integer, or "inf" for K = ∞."""
    return NEVER if str(k) == "inf" else int(k)


def classification_task(data_npz, train_size: int | None, subset_seed: int, device: torch.device) -> dict[str, Tensor]:
    """Float32 inputs with a channel axis ((N, L) signals become (N, 1, L)) and int64 labels; the
    training set cut to a class-balanced subset of ``train_size`` (nested across sizes)."""
    return load_task(data_npz, layout="channels", train_size=train_size, subset_seed=subset_seed, device=device)


def sized_model_spec(model: dict, x: Tensor, num_classes: int) -> dict:
    """The zoo spec with the sizes the data fixes (input channels, input size, 1-D or 2-D,
    classes), for each argument the model's constructor takes and the config leaves out."""
    sizes = {"in_channels": x.shape[1], "input_size": x.shape[2], "dims": x.dim() - 2, "num_classes": num_classes}
    accepted = inspect.signature(model_constructor(model["name"])).parameters
    return {**{k: v for k, v in sizes.items() if k in accepted}, **model}


def flat_norm(tensors) -> float:
    return float(torch.sqrt(sum((t.detach().double() ** 2).sum() for t in tensors)))


class ILRun:
    """One run of iterative linearisation as the experiments configure it, on a training session.

    run: model (zoo spec without sizes), K (int or "inf"), optimiser (with lr), batch_size (None:
    full batch), chunk_size, steps, eval_every, eval_around_relinearisation, train_eval_size,
    eval_batch_size, augmentation {crop_padding, flip}, train_size, subset_seed, master_dtype,
    reset_optimiser_state, linearise_k1, checkpoint_every, bn_statistics_batches,
    divergence_factor, stop_at_train_accuracy, stop_patience, state_every_s, device.
    """

    def __init__(self, data_npz, run: dict, seed: int):
        self.run, self.seed = run, seed
        self.device = choose_device(run.get("device", "auto"))
        self.task = classification_task(data_npz, run.get("train_size"), run.get("subset_seed", 0), self.device)
        num_classes = int(max(self.task["y_train"].max(), self.task["y_test"].max())) + 1
        self.model_spec = sized_model_spec(run["model"], self.task["x_train"], num_classes)
        seed_everything(seed)
        self.model = build_model(self.model_spec).to(self.device)
        self.initial = {name: p.detach().clone() for name, p in self.model.named_parameters()}
        self.batches = EpochBatches(len(self.task["y_train"]), run.get("batch_size"), seed)
        self.training = training_for(
            self.model, run["optimiser"], period_of(run["K"]), linearise_k1=run.get("linearise_k1", False),
            master_dtype=dtype_from_name(run.get("master_dtype", "float32")),
            reset_optimiser_state=run.get("reset_optimiser_state", False),
            statistics_inputs=self._statistics_batches if has_batch_norm(self.model) else None)
        train_eval = run.get("train_eval_size")
        order = torch.randperm(len(self.task["y_train"]), generator=seeded_generator(seed, 2))
        self.train_eval = order[:train_eval].to(self.device) if train_eval else order.to(self.device)
        self.result: RunRecord | None = None

    def _statistics_batches(self):
        """The training batches BatchNorm statistics are averaged over: the first
        ``bn_statistics_batches`` of a fixed seeded order, without augmentation."""
        order = torch.randperm(len(self.task["y_train"]), generator=seeded_generator(self.seed, 3)).to(self.device)
        size = self.batches.batch_size
        count = min(self.run.get("bn_statistics_batches", 50), self.batches.steps_per_epoch)
        return (self.task["x_train"][order[i * size:(i + 1) * size]] for i in range(count))

    def _augment(self, x: Tensor, step: int) -> Tensor:
        """Fresh draws every step (and so a fresh f_{θ_s}(x): nothing is cached)."""
        spec = self.run["augmentation"]
        return augment(x, spec.get("crop_padding", 0), spec.get("flip", False), seeded_generator(self.seed, 1, step))

    # --- what the session measures ------------------------------------------------------------

    def evaluation(self, session: Session) -> dict:
        """Accuracy and loss of the network at θ_t and of the model being trained, on the test set
        and on the fixed part of the training set; re-linearisations, ‖δ‖, ‖θ_t − θ₀‖."""
        training, task, size = self.training, self.task, self.run.get("eval_batch_size", 1000)
        x_fit, y_fit = task["x_train"][self.train_eval], task["y_train"][self.train_eval]
        record = {"epoch": training.steps / self.batches.steps_per_epoch,
                  "relinearisations": training.relinearisations, "point": session.point}
        for split, x, y in (("test", task["x_test"], task["y_test"]), ("train", x_fit, y_fit)):
            record[f"{split}_accuracy_network"], record[f"{split}_loss_network"] = classification_metrics(
                training.network_logits, x, y, size)
            if isinstance(training, LinearisedTraining):
                record[f"{split}_accuracy_linearised"], record[f"{split}_loss_linearised"] = classification_metrics(
                    training.linearised_logits, x, y, size)
            else:  # ordinary training: the model being trained is the network
                record[f"{split}_accuracy_linearised"] = record[f"{split}_accuracy_network"]
                record[f"{split}_loss_linearised"] = record[f"{split}_loss_network"]
        now = training.parameters_now()
        record["training_loss"] = session.mean_loss()
        record["delta_norm"] = flat_norm(training.delta.values()) if isinstance(training, LinearisedTraining) else 0.0
        record["distance_from_init"] = flat_norm(now[n] - self.initial[n] for n in now)
        record["seconds"] = session.seconds
        record["diverged"] = session.diverged
        return record

    def checkpoint(self, session: Session) -> dict[str, Tensor]:
        """θ_t (and the buffers the network is evaluated with) at this step."""
        state = {**self.training.parameters_now(), **self.training.network_buffers()}
        return {n: t.detach().cpu().clone() for n, t in state.items()}

    def converged(self, session: Session) -> bool:
        """Training accuracy of the optimised model (the linearised one for K = ∞, else the
        network) at least ``stop_at_train_accuracy`` at the last ``stop_patience`` evaluations."""
        threshold, patience = self.run.get("stop_at_train_accuracy"), self.run.get("stop_patience", 2)
        if threshold is None:
            return False
        column = "train_accuracy_linearised" if self.training.period == NEVER else "train_accuracy_network"
        scheduled = [r for r in session.rows if r["point"] == "scheduled"][-patience:]
        return len(scheduled) == patience and all(r[column] >= threshold for r in scheduled)

    # --- the run ------------------------------------------------------------------------------

    def session(self, state_path=None, inputs_version: str = "") -> Session:
        run = self.run
        learner = IterativeLearner(self.training, self.task["x_train"], self.task["y_train"],
                                   chunk_size=run.get("chunk_size"),
                                   augment=self._augment if run.get("augmentation") else None,
                                   evaluate_around=run.get("eval_around_relinearisation", False))
        checkpoint = checkpoint_for(state_path, run, self.seed, inputs_version, run.get("state_every_s", 1800))
        return Session(learner, self.batches, run["steps"], probes=[self.evaluation],
                       evaluate_at=Every(run["eval_every"]),
                       snapshot_at=Every(run["checkpoint_every"]) | AtSteps([run["steps"]])
                       if run.get("checkpoint_every") else Never(),
                       snapshot=self.checkpoint, guard=DivergenceGuard(run.get("divergence_factor", 3.0)),
                       stop=self.converged, checkpoint=checkpoint,
                       progress=Progress(run["steps"], name=f"K={run['K']}"))

    def train(self, state_path=None, inputs_version: str = "", step_budget: int | None = None) -> bool:
        """Train to ``steps`` (or until divergence or convergence); True when done. With
        ``step_budget``, stop after that many steps of this call and save the state (False)."""
        self.result = self.session(state_path, inputs_version).run(max_steps=step_budget)
        return self.result is not None

    @property
    def diverged(self) -> bool:
        return self.result.diverged

    def frame(self) -> pd.DataFrame:
        frame = self.result.frame()
        frame["diverged"] = self.diverged
        frame["K"] = str(self.run["K"])
        frame["lr"] = self.run["optimiser"]["lr"]
        frame["optimiser"] = self.run["optimiser"]["name"]
        frame["parameters"] = ParameterLayout(self.model).size
        frame["n_train"] = len(self.task["y_train"])
        frame["batch_size"] = self.batches.batch_size
        frame["steps_per_epoch"] = self.batches.steps_per_epoch
        return frame

    def checkpoint_file(self) -> dict:
        return {"model_spec": self.model_spec, "K": str(self.run["K"]), "seed": self.seed,
                "steps_per_epoch": self.batches.steps_per_epoch,
                "initial": {n: t.cpu() for n, t in self.initial.items()}, "checkpoints": self.result.snapshots}


def il_run(data_npz, run: dict, seed: int, state_path=None, inputs_version: str = "",
           step_budget: int | None = None) -> ILRun | None:
    """Train one run to the end (resuming from ``state_path`` when it holds this run's state);
    None when ``step_budget`` ran out first (the state is saved)."""
    full_float32_matmuls()
    experiment = ILRun(data_npz, run, seed)
    return experiment if experiment.train(state_path, inputs_version, step_budget) else None


def k1_identity(data_npz, check: dict) -> dict[str, float]:
    """Claim C12: IL with K = 1 is ordinary training. Train the same seeded network ``steps``
    steps both ways on the same batches, in each dtype; the largest parameter difference."""
    task = classification_task(data_npz, check.get("train_size"), 0, torch.device("cpu"))
    spec = sized_model_spec(check["model"], task["x_train"], int(task["y_train"].max()) + 1)
    differences = {}
    for dtype in check["dtypes"]:
        x = task["x_train"].to(dtype_from_name(dtype))
        routes = []
        for linearise in (False, True):
            seed_everything(0)
            model = build_model(spec).to(dtype_from_name(dtype))
            training = training_for(model, check["optimiser"], 1, linearise_k1=linearise)
            train_iteratively(training, x, task["y_train"], EpochBatches(len(x), check["batch_size"], 0),
                              check["steps"])
            routes.append(training.parameters_now())
        ordinary, linearised = routes
        differences[dtype] = max(float((ordinary[n] - linearised[n]).abs().max()) for n in ordinary)
    return differences


def first_layer_changes(checkpoint_paths, seed: int) -> tuple[dict[str, list[tuple[int, np.ndarray]]], float]:
    """The first convolution's weight change from initialisation at every checkpoint after the
    start, {K: [(step, W_step − W_0), …]}, for the runs of ``seed``; and epochs per step."""
    changes, epochs_per_step = {}, 1.0
    for path in checkpoint_paths:
        saved = load_checkpoint(path)
        if saved["seed"] != seed:
            continue
        name = next(n for n, t in saved["initial"].items() if t.dim() >= 3)  # the first conv weight
        initial = saved["initial"][name].numpy()
        changes[saved["K"]] = [(step, state[name].numpy() - initial)
                               for step, state in sorted(saved["checkpoints"].items()) if step > 0]
        epochs_per_step = 1 / saved["steps_per_epoch"]
    return changes, epochs_per_step


# --- linear probes (L-Fig 6) ----------------------------------------------------------------------

def pooled_features(model: nn.Module, params: dict[str, Tensor], x: Tensor, layer: int) -> Tensor:
    """The flattened output of the ``layer``-th pooling layer (1-based) of the network at
    ``params``: the hidden features of its ``layer``-th convolutional block."""
    pools = [m for m in model.modules() if isinstance(m, (nn.MaxPool1d, nn.MaxPool2d, nn.AvgPool1d, nn.AvgPool2d))]
    captured = {}
    handle = pools[layer - 1].register_forward_hook(lambda module, args, out: captured.update(out=out))
    try:
        with torch.no_grad():
            torch.func.functional_call(model.eval(), params, (x,))
    finally:
        handle.remove()
    return captured["out"].flatten(1)


def probe_run(data_npz, checkpoint_path, probe: dict, device: str = "auto") -> pd.DataFrame:
    """Probe accuracy on the hidden features of layers ``probe["layers"]`` at every checkpoint
    of a run, the probes fitted on the run's device, with each fit's L-BFGS iterations and final
    largest gradient component (converged: at most 1e-4). probe: layers, train_size (training
    examples the probe fits), c, max_iter."""
    saved = load_checkpoint(checkpoint_path)
    task = classification_task(data_npz, None, 0, choose_device(device))
    device = task["x_train"].device
    model = build_model(saved["model_spec"]).to(device)
    fit = torch.randperm(len(task["y_train"]), generator=seeded_generator(0, 4))[:probe.get("train_size")].to(device)
    x_fit, y_fit = task["x_train"][fit], task["y_train"][fit]
    rows = []
    for step, state in sorted(saved["checkpoints"].items()):
        state = {n: t.to(x_fit.device) for n, t in state.items()}
        for layer in probe["layers"]:
            train, test = (pooled_features(model, state, x, layer) for x in (x_fit, task["x_test"]))
            fitted = fit_linear_probe(train, y_fit, probe.get("c", 1.0), probe["max_iter"])
            rows.append({"step": step, "epoch": step / saved["steps_per_epoch"], "K": saved["K"], "layer": layer,
                         "probe_accuracy": fitted.accuracy(test, task["y_test"]),
                         "probe_iterations": fitted.iterations, "probe_gradient": fitted.gradient_norm})
    return pd.DataFrame(rows)


# --- damped Gauss-Newton on the quintic (L-Fig 9) ------------------------------------------------

def gauss_newton_run(data_npz, spec: dict, damping: float, seeds: list[int]) -> tuple[pd.DataFrame, np.ndarray]:
    """``iterations`` damped Gauss-Newton steps (step size ``step_size``) of the MLP ``model`` on
    the quintic, in float64, once per seed; per seed the train and test RMSE of the network and
    its test-grid predictions (seeds × test points)."""
    arrays = load_prepared(data_npz)
    x_train, y_train, x_test, y_test = (torch.as_tensor(arrays[k], dtype=torch.float64)
                                        for k in ("x_train", "y_train", "x_test", "y_test"))
    rows, predictions = [], []
    for seed in seeds:
        seed_everything(seed)
        model = build_model({**spec["model"], "in_features": 1, "out_features": 1}).double()
        learner = GaussNewtonLearner(model, x_train, y_train, damping, spec.get("step_size", 1.0))
        Session(learner, EpochBatches(len(x_train), None, seed), spec["iterations"], stop=learner.stopped,
                stop_at=Every(1)).run()
        finite = learner.finite
        with torch.no_grad():
            fitted, predicted = model(x_train).reshape(-1), model(x_test).reshape(-1)
        rows.append({"damping": damping, "seed": seed, "finite": finite and bool(torch.isfinite(predicted).all()),
                     "train_rmse": rmse(fitted, y_train), "test_rmse": rmse(predicted, y_test),
                     "total_variation": float(predicted.diff().abs().sum())})
        predictions.append(predicted.numpy())
    return pd.DataFrame(rows), np.stack(predictions)
