"""Experiments for Chapter 5 (lazy vs hasty) and appendix C. The runs behind Figs 5.1-5.4 and C.1-C.9
(linearised vs non-linear training on easy and difficult examples; the quadratic model)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from ...data.synthetic import yin_yang
from ...linearize.batched_alpha_gd import threshold_gd
from ...models.mlp import mlp
from ...train.runtime import choose_device, full_float32, seed_everything
from ...train.schedules import log_steps

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
    return ToyBatch([seed for seed, _ in members], [alpha for _, alpha in members],
                    {name: per_member(lambda seed: parameters[seed][name]) for name in parameters[seeds[0]]},
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


# --- Figs 5.2, C.1-C.6: α-scaled runs on C-score groups and noisy labels, linearity metrics ---


# --- Figs 5.3, C.7, C.8: spurious correlations ---
