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

from ...curvature import (
    AffineForm,
    BlockDiagonal,
    EigenKronecker,
    FisherSource,
    ParameterLayout,
    fisher,
    refit_kfe_diagonal,
)
from ...data.transforms import balanced_order
from ...models.mlp import mlp
from ...train.batches import EpochBatches
from ...train.learners import SupervisedLearner
from ...train.optimisers import build_optimiser
from ...train.progress import Progress
from ...train.runtime import choose_device, seed_everything
from ...train.schedules import Every
from ...train.session import Session
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
    """The empirical Fisher (observed labels, per-example loss gradients; trap T-EK-1) of ``x``."""
    return fisher(model, x, labels, representation=representation, variant="empirical")


def kfe_of(kfac: BlockDiagonal) -> BlockDiagonal:
    """EKFAC blocks in the eigenbasis of KFAC's factors, their diagonal still KFAC's S_A ⊗ S_B (a
    refit replaces it)."""
    blocks = {}
    for name, block in kfac.blocks.items():
        sa, ua, sb, ub = block.eigen
        blocks[name] = EigenKronecker(block.form, ua, ub, torch.outer(sb, sa))
    return BlockDiagonal(kfac.layout, blocks)


def refitted(kfac: BlockDiagonal, model: nn.Module, x: Tensor, labels: Tensor) -> BlockDiagonal:
    """EKFAC in the KFE of ``kfac`` with s* re-estimated on (x, labels) at the model's current parameters."""
    matrix = kfe_of(kfac)
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
        approximations = {"kfac": kfe_of(self.kfac), "ekfac": refitted(self.kfac, self.model, x_batch, y_batch),
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
    rotated = (first.ub.T @ in_matrix_form(rows, first.form) @ first.ua).flatten(1)
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
