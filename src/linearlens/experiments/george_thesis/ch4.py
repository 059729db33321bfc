"""Experiments for Chapter 4 (EKFAC) and appendix A. The runs behind Fig 4.2 (gradient correlations in the KFE;
KFAC vs EKFAC error against the exact Fisher), Figs 4.3-4.6 and A.1-A.5 (training with KFAC and EKFAC:
auto-encoder, VGG11, ResNet34). Issue 26 fills Fig 4.2, issue 27 Figs 4.3-4.6 and A.1-A.5. Fig 4.1 (cartoon
of the rescalings) is a drawing, in the figures module only."""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ...analysis.george_thesis.ch4 import run_name, uses_curvature
from ...curvature import (
    AffineForm,
    BlockDiagonal,
    EigenKronecker,
    FisherSource,
    KroneckerFactoredOptimizer,
    fisher,
    in_eigenbasis,
    refit_kfe_diagonal,
)
from ...curvature.optim import average_into
from ...data.transforms import balanced_order
from ...models.mlp import mlp
from ...models.zoo import build_model
from ...parameters import ParameterLayout
from ...train.batches import EpochBatches
from ...train.learners import SupervisedLearner
from ...train.optimisers import build_optimiser
from ...train.progress import Progress
from ...train.runtime import choose_device, seed_everything
from ...train.schedules import Every, StepDecay, constant, epoch_starts
from ...train.session import DivergenceGuard, Scheduled, Session
from ...train.tasks import load_task

# --- Fig 4.2: KFAC and EKFAC against the exact empirical Fisher along an SGD trajectory ---

# Float64 throughout: Theorem A.2.1's inequality is checked at every logged step, and the errors of
# EKFAC's oracle and of KFAC can be close.
DTYPE = torch.float64
# The approximations compared with F: KFAC amortised; EKFAC in the same KFE with s* from the current
# minibatch (the thesis's curve); EKFAC in the same KFE with s* from F's own examples (Theorem A.2.1's
# optimum, the pair for which ‖F − F_EKFAC‖ ≤ ‖F − F_KFAC‖ holds exactly).
METHODS = ("kfac", "ekfac", "ekfac_probe")


def empirical_fisher(model: nn.Module, x: Tensor, labels: Tensor, representation: str):
    """The empirical Fisher (observed labels, per-example loss gradients) of ``x``."""
    return fisher(model, x, labels, representation=representation, variant="empirical")


def refitted(kfac: BlockDiagonal, model: nn.Module, x: Tensor, labels: Tensor) -> BlockDiagonal:
    """EKFAC in the KFE of ``kfac`` with s* re-estimated on (x, labels) at the model's current parameters."""
    matrix = in_eigenbasis(kfac)
    refit_kfe_diagonal(matrix, FisherSource(model, x, labels, variant="empirical"))
    return matrix


def in_matrix_form(rows: Tensor, form: AffineForm) -> Tensor:
    """Per-example gradients of one layer, (n, p) in the flat slice's order, as (n, out, width) W̃'s."""
    matrices = rows.new_zeros(len(rows), form.out * form.width)
    matrices[:, form.order.to(rows.device)] = rows
    return matrices.view(len(rows), form.out, form.width)


def correlation(samples: Tensor) -> Tensor:
    """corr_ij = C_ij / √(C_ii C_jj) of the uncentred second moment C = E[g gᵀ] (the matrix the Fisher
    approximations target) of the (n, k) samples; 0 where a coordinate never moves."""
    second_moment = samples.T @ samples / len(samples)
    scale = second_moment.diagonal().sqrt()
    scale = torch.where(scale > 0, scale, torch.inf)
    return second_moment / scale[:, None] / scale[None, :]


def gradient_correlations(model: nn.Module, x: Tensor, labels: Tensor, layer_index: int, units: int,
                          inputs: int) -> dict[str, np.ndarray]:
    """Fig 4.2 left: the correlations of per-example loss gradients over a block of one Linear layer's
    W̃ = [W, b] (its first ``units`` rows and ``inputs`` columns, row-major), in the parameter basis and in
    the KFE U_A ⊗ U_B of the layer's KFAC factors on the same examples (rows and columns of U_Bᵀ W̃ U_A
    ordered by decreasing eigenvalue of B and A, the same block)."""
    linear = [item for item in ParameterLayout(model).layers if isinstance(item.module, nn.Linear)]
    if not 1 <= layer_index <= len(linear):
        raise ValueError(f"correlation_layer {layer_index}: the network has Linear layers 1 to {len(linear)}")
    layer = linear[layer_index - 1]
    form = AffineForm.of(layer.module)
    if units > form.out or inputs > form.width:
        raise ValueError(f"correlation_block {units} × {inputs} exceeds layer {layer_index}'s W̃ = [W, b], "
                         f"{form.out} × {form.width}")
    rows = empirical_fisher(model, x, labels, "low_rank").rows[:, layer.span]
    kfac = empirical_fisher(model, x, labels, "kfac").blocks[layer.name]
    _, ua, _, ub = kfac.eigen
    ua, ub = ua.flip(1), ub.flip(1)  # eigh's ascending order, reversed
    gradients = in_matrix_form(rows, kfac.form)
    in_kfe = ub.T @ gradients @ ua
    block = (slice(None), slice(0, units), slice(0, inputs))
    return {"parameter_basis": correlation(gradients[block].flatten(1)).cpu().numpy(),
            "kfe": correlation(in_kfe[block].flatten(1)).cpu().numpy(),
            "layer": np.int64(layer_index), "layer_name": np.array(layer.name), "units": np.int64(units),
            "inputs": np.int64(inputs), "out": np.int64(kfac.form.out), "width": np.int64(kfac.form.width)}


class FisherTracking:
    """At its steps t, the exact empirical Fisher F of the probe set at the current parameters w_t against: KFAC from the factors A, B of the minibatch of the
    last recompute (every ``recompute_every`` steps, on that step's minibatch, Algorithm 1), EKFAC in that
    recompute's KFE with s* re-estimated on the current minibatch (the one of step t + 1, taken at w_t), and
    EKFAC in the same KFE with s* from the probe set itself. EKFAC's s* at step t depends on that minibatch
    alone (no running average), so estimating it only at logged steps gives the values every-step
    estimation would. Errors are Frobenius norms (``kfe_errors``): per layer, over the block diagonal of all
    layers, and against the full F (whose off-diagonal blocks every block-diagonal approximation misses)."""

    def __init__(self, model: nn.Module, probe: tuple[Tensor, Tensor], minibatch, recompute_every: int,
                 final_step: int, correlation_block: dict, correlation_layer: int):
        self.model, self.probe, self.minibatch = model, probe, minibatch
        self.recompute_every, self.final_step = recompute_every, final_step
        self.correlation_block, self.correlation_layer = correlation_block, correlation_layer
        self.layout = ParameterLayout(model)
        self.kfac: BlockDiagonal | None = None
        self.recomputed_at = -1
        self.correlations: dict[str, np.ndarray] = {}

    def __call__(self, session: Session) -> dict:
        step = session.step
        x_batch, y_batch = self.minibatch(step)
        if step % self.recompute_every == 0 or self.kfac is None:
            self.kfac = empirical_fisher(self.model, x_batch, y_batch, "kfac")
            self.recomputed_at = step
        x_probe, y_probe = self.probe
        # KFAC as (U_A ⊗ U_B)(S_A ⊗ S_B)(U_A ⊗ U_B)ᵀ: the same matrix as A ⊗ B, in the KFE shared with EKFAC
        approximations = {"kfac": in_eigenbasis(self.kfac), "ekfac": refitted(self.kfac, self.model, x_batch, y_batch),
                          "ekfac_probe": refitted(self.kfac, self.model, x_probe, y_probe)}
        row = {"recomputed_at": self.recomputed_at, **self._errors(approximations)}
        with torch.no_grad():
            row["probe_loss"] = float(F.cross_entropy(self.model(x_probe), y_probe))
        if step == self.final_step:
            self.correlations = gradient_correlations(self.model, x_probe, y_probe, self.correlation_layer,
                                                      **self.correlation_block)
        return row

    def _errors(self, approximations: dict[str, BlockDiagonal]) -> dict[str, float]:
        rows = empirical_fisher(self.model, *self.probe, "low_rank").rows  # F = rowsᵀ rows
        gram = 0.0  # rows rowsᵀ, summed over the layers' blocks: ‖F‖_F = ‖rows rowsᵀ‖_F
        block_squared = 0.0
        squared = dict.fromkeys(approximations, 0.0)
        row = {}
        for index, layer in enumerate(self.layout.layers, start=1):
            errors, layer_squared, layer_gram = kfe_errors(rows[:, layer.span], {
                method: matrix.blocks[layer.name] for method, matrix in approximations.items()})
            gram = gram + layer_gram
            block_squared += layer_squared
            for method, error in errors.items():
                squared[method] += error
                row[f"{method}_error_layer{index}"] = (error / layer_squared) ** 0.5
        fisher_squared = float(gram.square().sum())
        off_diagonal = max(fisher_squared - block_squared, 0.0)
        row.update({"fisher_norm": fisher_squared ** 0.5, "block_norm": block_squared ** 0.5,
                    "off_block_share": (off_diagonal / fisher_squared) ** 0.5})
        for method in approximations:
            row[f"{method}_error"] = (squared[method] / block_squared) ** 0.5
            row[f"{method}_error_full"] = ((squared[method] + off_diagonal) / fisher_squared) ** 0.5
        return row


def kfe_errors(rows: Tensor, blocks: dict[str, EigenKronecker]) -> tuple[dict[str, float], float, Tensor]:
    """‖F − Q diag(s) Qᵀ‖²_F for each block (all in one KFE Q = U_A ⊗ U_B) and ‖F‖²_F, for the layer's
    F = rowsᵀ rows; and the examples' Gram rows rowsᵀ. No p × p matrix is formed: in the KFE, where the
    Frobenius norm is the same, ‖Qᵀ F Q − diag(s)‖² = ‖F‖² − ‖d‖² + ‖d − s‖² with d = diag(Qᵀ F Q), the
    squares of the per-example gradients rotated as U_Bᵀ G U_A summed over examples, and ‖F‖ = ‖rows rowsᵀ‖."""
    first = next(iter(blocks.values()))
    rotated = first.to_kfe(in_matrix_form(rows, first.form)).flatten(1)
    gram = rows @ rows.T
    exact_squared = float(gram.square().sum())
    diagonal = rotated.square().sum(0)
    outside_diagonal = exact_squared - float(diagonal.square().sum())
    errors = {}
    for method, block in blocks.items():
        if not (torch.equal(block.ua, first.ua) and torch.equal(block.ub, first.ub)):
            raise ValueError(f"{method}'s block is not in the same KFE as the others")
        errors[method] = outside_diagonal + float((diagonal - block.scales.reshape(-1)).square().sum())
    return errors, exact_squared, gram


def mlp_classifier_run(data_npz, spec: dict, device: str = "auto") -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Fig 4.2: an MLP classifier (``hidden`` widths, ``activation``) trained by the configured optimiser on
    the cross-entropy, minibatches of ``batch_size`` in seeded epochs, for ``iterations`` steps; every
    ``error_every`` steps (FisherTracking) the errors of KFAC and EKFAC against the exact empirical Fisher on
    a fixed, class-balanced probe of ``probe_size`` training examples; at the last step the gradient
    correlations of Fig 4.2 left. The rows (one per logged step) and the correlations."""
    if spec["recompute_every"] % spec["error_every"]:
        raise ValueError(f"recompute_every ({spec['recompute_every']}) must be a multiple of error_every "
                         f"({spec['error_every']}): the factors are recomputed at logged steps")
    device = choose_device(device)
    task = load_task(data_npz, dtype=DTYPE, layout="flat", device=device)
    x, y = task["x_train"], task["y_train"]
    if spec["probe_size"] > len(y):
        raise ValueError(f"probe_size {spec['probe_size']} exceeds the {len(y)} training examples of {data_npz}")
    seed = spec["seed"]
    num_classes = int(max(y.max(), task["y_test"].max())) + 1
    seed_everything(seed)
    model = mlp(x.shape[1], spec["hidden"], num_classes, spec["activation"]).to(device, DTYPE)
    learner = SupervisedLearner(model, build_optimiser(spec["optimiser"], model.parameters()), F.cross_entropy, x, y)
    batches = EpochBatches(len(y), spec["batch_size"], seed)
    probe = torch.as_tensor(balanced_order(y.cpu().numpy(), seed)[:spec["probe_size"]], device=device)

    def minibatch(step: int) -> tuple[Tensor, Tensor]:
        """The minibatch of the step taken from w_step (optimiser steps count from 1)."""
        indices = batches(step + 1).to(device)
        return x[indices], y[indices]

    tracking = FisherTracking(model, (x[probe], y[probe]), minibatch, spec["recompute_every"], spec["iterations"],
                              spec["correlation_block"], spec["correlation_layer"])
    record = Session(learner, batches, spec["iterations"], probes=[tracking], evaluate_at=Every(spec["error_every"]),
                     progress=Progress(spec["iterations"], name="fig 4.2 tracking")).run()
    frame = record.frame()
    frame.insert(1, "since_recompute", frame["step"] - frame["recomputed_at"])
    with torch.no_grad():
        accuracy = {split: float((model(task[f"x_{split}"]).argmax(1) == task[f"y_{split}"]).double().mean())
                    for split in ("train", "test")}
    correlations = {**tracking.correlations, "train_accuracy": np.float64(accuracy["train"]),
                    "test_accuracy": np.float64(accuracy["test"]),
                    "parameters": np.int64(ParameterLayout(model).size), "n_train": np.int64(len(y))}
    return frame, correlations


# --- Figs 4.3-4.6, A.1-A.5: training with KFAC, EKFAC, EKFAC-ra and first-order baselines ---

# What each task trains on, and the likelihood whose empirical Fisher the curvature methods use.
TASKS = {"reconstruction": "bernoulli", "classification": "categorical"}


def reconstruction_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Binary cross-entropy of the sigmoid reconstruction, summed over pixels and averaged over the
    batch (Hinton & Salakhutdinov's and Martens & Grosse's convention for the MNIST auto-encoder)."""
    return F.binary_cross_entropy_with_logits(logits, targets.flatten(1), reduction="sum") / len(logits)


def training_optimiser(model: nn.Module, settings: dict, run: dict, likelihood: str, conv_factors: str):
    """KFAC, EKFAC or EKFAC-ra (``settings["method"]``, its ``damping_mode``) or a torch optimiser
    (``settings["name"]`` and its keywords), at the run's η (and ε)."""
    if uses_curvature(settings):
        return KroneckerFactoredOptimizer(model, run["lr"], run["damping"], settings["method"], run["freq"],
                                          likelihood=likelihood, conv_factors=conv_factors,
                                          damping_mode=settings.get("damping_mode", "kfe"))
    arguments = {key: value for key, value in settings.items() if key not in ("batch_norm", "batch_sizes")}
    return build_optimiser({**arguments, "lr": run["lr"]}, model.parameters())


class EpochEvaluation:
    """At each epoch's end: the training objective on the whole training set and the validation loss (and,
    for a classifier, the validation error), the model in eval mode; the training seconds so far."""

    def __init__(self, model: nn.Module, task: dict[str, Tensor], loss, classification: bool, steps_per_epoch: int):
        self.model, self.task, self.loss = model, task, loss
        self.classification, self.steps_per_epoch = classification, steps_per_epoch

    def __call__(self, session: Session) -> dict:
        self.model.eval()
        with torch.no_grad():
            row = {"epoch": session.step / self.steps_per_epoch, "seconds": session.seconds,
                   "train_loss": self._loss("train"), "val_loss": self._loss("test")}
            if self.classification:
                predictions = self.model(self.task["x_test"]).argmax(1)
                row["val_error"] = float((predictions != self.task["y_test"]).double().mean())
        self.model.train()
        return row

    def _loss(self, split: str) -> float:
        return float(self.loss(self.model(self.task[f"x_{split}"]), self.task[f"y_{split}"]))


def run_learner(task: dict[str, Tensor], spec: dict, run: dict, tracking=None) -> tuple[SupervisedLearner, EpochBatches, list]:
    """A run's learner (its model, optimiser, loss and η schedule), batch order and tracking probes."""
    settings = spec["optimisers"][run["optimiser"]]
    classification = spec["task"] == "classification"
    seed_everything(spec["seed"])  # every run of a seed starts from the same θ₀ (BN layers aside)
    model = build_model({**spec["model"], **({"batch_norm": True} if settings.get("batch_norm") else {})})
    model = model.to(task["x_train"].device, task["x_train"].dtype)
    loss = F.cross_entropy if classification else reconstruction_loss
    optimiser = training_optimiser(model, settings, run, TASKS[spec["task"]], spec.get("conv_factors", "kfc"))
    batches = EpochBatches(len(task["x_train"]), run["batch_size"], spec["seed"])
    epoch = batches.steps_per_epoch
    halve = run.get("halve_every")
    rate = StepDecay(range(halve * epoch, spec["epochs"] * epoch, halve * epoch), 0.5) if halve else constant
    targets = task["y_train"] if classification else task["x_train"]
    probes, trackers = tracking(model, batches) if tracking is not None else ([], [])
    return SupervisedLearner(model, optimiser, loss, task["x_train"], targets, learning_rate=rate,
                             trackers=trackers), batches, probes


def training_run(task: dict[str, Tensor], spec: dict, run: dict, tracking=None) -> pd.DataFrame:
    """One run of a group: ``spec["model"]`` (with BatchNorm when the optimiser's settings ask for it)
    trained by the run's optimiser for ``spec["epochs"]`` epochs of its batch size, η halved every
    ``halve_every`` epochs when the run has a schedule. One row per epoch (epoch 0 is the initial model);
    a run whose loss grows past 3× its first or stops being finite ends as "diverged" (a curvature step
    on non-finite gradients ends it too), its later epochs absent. ``tracking(model, batches)`` may add
    (probes, trackers) to the session and the learner (Fig 4.4c's spectra)."""
    classification = spec["task"] == "classification"
    learner, batches, probes = run_learner(task, spec, run, tracking)
    model, loss, epoch = learner.model, learner.loss, batches.steps_per_epoch
    evaluation = EpochEvaluation(model, task if classification else {**task, "y_train": task["x_train"],
                                                                      "y_test": task["x_test"]}, loss,
                                 classification, epoch)
    session = Session(learner, batches, spec["epochs"] * epoch, probes=[evaluation, *probes],
                      evaluate_at=epoch_starts(epoch),
                      guard=DivergenceGuard(), progress=Progress(spec["epochs"] * epoch, name=run_name(run)))
    try:
        record = session.run()
        rows, ended = record.rows, record.ended
    except torch.linalg.LinAlgError:  # eigh of factors gone non-finite: the run has diverged
        rows, ended = session.rows, "diverged"
    frame = pd.DataFrame.from_records(rows)
    frame.insert(0, "run", run_name(run))
    for key in ("optimiser", "batch_size", "lr", "damping", "freq", "halve_every"):
        frame[key] = run.get(key)
    frame["ended"] = ended
    return frame


def training_runs(data_npz, spec: dict, runs: list[dict], device: str = "auto") -> pd.DataFrame:
    """A job's runs, one after the other, on the group's data (float32)."""
    device = choose_device(device)
    task = load_task(data_npz, layout="as_is", device=device)
    return pd.concat([training_run(task, spec, run) for run in runs], ignore_index=True)


# --- Fig 4.4c: the spectrum of one layer's empirical Fisher against KFAC's and EKFAC's, KFE fixed ---

class SpectrumTracking:
    """Along a training run, one Linear layer's exact empirical Fisher G on a fixed probe (per-example
    BCE or cross-entropy gradients, observed targets) against three approximations in the KFE of the
    probe's KFAC factors at θ₀, computed once and kept (the thesis: "we compute the KFE once at the
    beginning and then keep it fixed"): KFAC's eigenvalues S_A ⊗ S_B, frozen with it; EKFAC's s*,
    re-estimated on the current minibatch; EKFAC-ra's s*, the running average α s* + (1 − α) m (mean
    minibatch gradient in the KFE)² updated at every step from S_A ⊗ S_B. At each logged step, the ℓ2
    distance between G's eigenvalues and each approximation's (both sorted non-increasing).

    A learner tracker (``before_step``/``after_step``: the running average sees every step) and a probe."""

    def __init__(self, model: nn.Module, probe: tuple[Tensor, Tensor], likelihood: str, layer_index: int,
                 minibatch, alpha: float = 0.75):
        self.model, self.probe, self.likelihood, self.minibatch, self.alpha = model, probe, likelihood, minibatch, alpha
        linear = [item for item in ParameterLayout(model).layers if isinstance(item.module, nn.Linear)]
        if not 1 <= layer_index <= len(linear):
            raise ValueError(f"spectrum layer {layer_index}: the network has Linear layers 1 to {len(linear)}")
        self.layer = linear[layer_index - 1]
        self.layer_parameters = ParameterLayout(self.layer.module)  # its weight, then its bias
        kfac = fisher(model, *probe, representation="kfac", likelihood=likelihood, variant="empirical")
        self.kfe = in_eigenbasis(kfac).blocks[self.layer.name]  # U_A, U_B and S_B ⊗ S_A at θ₀, kept
        self.kfac_scales = self.kfe.scales.clone()
        self.running = EigenKronecker(self.kfe.form, self.kfe.ua, self.kfe.ub, self.kfac_scales.clone())
        self.batch_size = 0

    def before_step(self, indices: Tensor) -> None:
        self.batch_size = len(indices)

    def after_step(self) -> None:
        average_into(self.running, self.layer_parameters.gradient(), self.batch_size, self.alpha)

    def __call__(self, session: Session) -> dict:
        x, targets = self.probe
        rows = fisher(self.model, x, targets, representation="low_rank", likelihood=self.likelihood,
                      variant="empirical").rows[:, self.layer.span]
        exact = torch.linalg.eigvalsh(rows.T @ rows).flip(0)
        ekfac = EigenKronecker(self.kfe.form, self.kfe.ua, self.kfe.ub, self.kfac_scales.clone())
        x_batch, y_batch = self.minibatch(session.step)
        matrix = BlockDiagonal(ParameterLayout(self.model), {self.layer.name: ekfac})
        refit_kfe_diagonal(matrix, FisherSource(self.model, x_batch, y_batch, self.likelihood, "empirical"))
        row = {"spectrum_norm": float(exact.norm())}
        for method, scales in (("kfac", self.kfac_scales), ("ekfac", ekfac.scales), ("ekfac_ra", self.running.scales)):
            row[f"{method}_distance"] = float((exact - scales.reshape(-1).sort(descending=True).values).norm())
        return row

    def state_dict(self) -> dict:
        return {"running": self.running.scales}

    def load_state_dict(self, state: dict) -> None:
        self.running.scales = state["running"]


def spectrum_run(data_npz, spec: dict, run: dict, device: str = "auto") -> pd.DataFrame:
    """Fig 4.4c: ``run`` (the selected EKFAC run) with SpectrumTracking of layer ``spectrum.layer`` on a
    fixed probe of ``spectrum.probe_size`` training examples every ``spectrum.every`` steps; one row per
    evaluation (the epoch rows carry the losses, the tracked rows the distances)."""
    settings = spec["spectrum"]
    device = choose_device(device)
    task = load_task(data_npz, layout="as_is", device=device)
    classification = spec["task"] == "classification"
    x = task["x_train"]
    y = task["y_train"] if classification else x.flatten(1)
    if settings["probe_size"] > len(x):
        raise ValueError(f"spectrum probe_size {settings['probe_size']} exceeds the {len(x)} training examples")
    probe = torch.as_tensor(balanced_order(task["y_train"].cpu().numpy(), spec["seed"])[:settings["probe_size"]],
                            device=device)

    def tracking(model, batches):
        def minibatch(step: int) -> tuple[Tensor, Tensor]:
            indices = batches(step + 1).to(device)  # the batch of the step taken from w_step
            return x[indices], y[indices]

        tracker = SpectrumTracking(model, (x[probe], y[probe]), TASKS[spec["task"]], settings["layer"], minibatch)
        return [Scheduled(tracker, Every(settings["every"]))], [tracker]

    return training_run(task, spec, run, tracking)
