"""Analysis for Chapter 5 (lazy vs hasty) and appendix C. Torch-free summaries (pandas and numpy only) behind
Figs 5.1-5.4 and C.1-C.9 (linearised vs non-linear training on easy and difficult examples; the quadratic
model)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...data.synthetic import (
    YIN_YANG_CENTRES,
    YIN_YANG_RADIUS,
    inside_yin_yang_disks,
    square_grid,
    yin_yang_disk_distances,
)

# --- Fig 5.1: the yin-yang toy, α = 1 vs α = 100, Δloss maps at loss thresholds ---

TOY_RUNS = "results/george_thesis/runs/ch5/toy"
# Arrays with one row per run (seed, α); the rest are shared by a job's runs or are per seed.
TOY_MEMBER_ARRAYS = ("seed", "alpha", "crossing_iteration", "grid_losses", "train_loss", "stop_iteration",
                     "final_loss")
TOY_SEED_ARRAYS = ("x_train", "y_train", "data_seeds")
# The claims' regions keep this distance from every class boundary (the line x₂ = 0, the circles):
# a grid point near a boundary is hard for any smooth classifier, whatever the regime.
TOY_REGION_MARGIN = 0.15


TOY_FIGURE_KEYS = ("picture_grid",)  # settings only the figure reads: not part of a run


def toy_shard_seeds(spec: dict, shard: int) -> list[int]:
    """The seeds of job ``shard``: seeds 0 … seeds − 1 in ``shards`` contiguous blocks."""
    if spec["shards"] > spec["seeds"]:
        raise ValueError(f"george_thesis.ch5.toy: {spec['shards']} shards for {spec['seeds']} seeds leaves jobs "
                         "without a seed")
    return np.array_split(np.arange(spec["seeds"]), spec["shards"])[shard].tolist()


def toy_run_spec(spec: dict) -> dict:
    return {key: value for key, value in spec.items() if key not in TOY_FIGURE_KEYS}


def toy_run_paths(spec: dict) -> list[str]:
    return [f"{TOY_RUNS}/shard{shard}.npz" for shard in range(spec["shards"])]


def read_toy_runs(paths: list[str]) -> dict[str, np.ndarray]:
    """Every job's runs as one record: per-run arrays joined, per-seed arrays joined, the rest
    (thresholds, grid side, curve steps) from the first job, which every job shares."""
    parts = []
    for path in paths:
        with np.load(path) as contents:
            parts.append({key: contents[key] for key in contents.files})
    joined = {key: np.concatenate([part[key] for part in parts]) for key in TOY_MEMBER_ARRAYS + TOY_SEED_ARRAYS}
    shared = {key: value for key, value in parts[0].items() if key not in joined}
    return {**shared, **joined}


def toy_regimes(runs: dict[str, np.ndarray]) -> tuple[float, float]:
    """(non-linear α, linearised α): the smallest and the largest α of the runs (1 and 100)."""
    return float(runs["alpha"].min()), float(runs["alpha"].max())


def delta_loss_maps(runs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Eq. 5.3.1 at each training-loss threshold: Δloss(x) = mean over non-linear runs of their grid
    loss − the same mean over linearised runs, each mean over the runs that crossed the threshold
    (NaN where a regime has none). ``delta`` (K, G), ``mean_nonlinear``/``mean_linear`` (K, G),
    ``reached_nonlinear``/``reached_linear`` (K,) run counts, ``runs_nonlinear``/``runs_linear``."""
    nonlinear, linear = toy_regimes(runs)
    result = {}
    for name, alpha in (("nonlinear", nonlinear), ("linear", linear)):
        regime = runs["alpha"] == alpha
        reached = regime[:, None] & (runs["crossing_iteration"] >= 0)  # (M, K)
        means = [runs["grid_losses"][reached[:, k], k].mean(axis=0) if reached[:, k].any()
                 else np.full(runs["grid_losses"].shape[2], np.nan) for k in range(reached.shape[1])]
        result[f"mean_{name}"] = np.stack(means).astype(float)
        result[f"reached_{name}"] = reached.sum(axis=0)
        result[f"runs_{name}"] = np.asarray(int(regime.sum()))
    result["delta"] = result["mean_nonlinear"] - result["mean_linear"]
    return result


def toy_regions(grid_side: int, margin: float = TOY_REGION_MARGIN) -> dict[str, np.ndarray]:
    """Boolean masks of the test grid, from the task's geometry: ``easy`` = the two large
    disk-free quadrants (top right, bottom left: x₁x₂ > 0) at least ``margin`` from every class
    boundary; ``disks`` = inside the two disks; ``between`` = the strips between each disk and the
    line x₂ = 0 (|x₁ − c₁| ≤ r, x₂ between 0 and the disk), the other area the thesis finds harder
    for the non-linear regime."""
    x = square_grid(grid_side)
    centres = np.asarray(YIN_YANG_CENTRES)
    to_circles = np.abs(yin_yang_disk_distances(x) - YIN_YANG_RADIUS).min(axis=1)
    to_boundary = np.minimum(np.abs(x[:, 1]), to_circles)
    easy = (x[:, 0] * x[:, 1] > 0) & (to_boundary >= margin)
    strips = [(np.abs(x[:, 0] - cx) <= YIN_YANG_RADIUS) & (x[:, 1] * cy > 0)
              & (np.abs(x[:, 1]) < np.abs(cy) - YIN_YANG_RADIUS) for cx, cy in centres]
    return {"easy": easy, "disks": inside_yin_yang_disks(x), "between": np.logical_or(*strips)}


def region_means(delta: np.ndarray, regions: dict[str, np.ndarray]) -> pd.DataFrame:
    """Mean Δloss over each region (columns) at each threshold (rows)."""
    return pd.DataFrame({name: delta[:, mask].mean(axis=1) for name, mask in regions.items()})


def crossing_summary(runs: dict[str, np.ndarray]) -> pd.DataFrame:
    """Per threshold and α: runs, runs that crossed it, and the median first iteration below it
    over all runs (a run that never crossed counts as later than any: inf when half never did)."""
    rows = []
    for alpha in np.unique(runs["alpha"]):
        regime = runs["alpha"] == alpha
        for k, threshold in enumerate(runs["thresholds"]):
            iterations = runs["crossing_iteration"][regime, k].astype(float)
            reached = iterations >= 0
            rows.append({"alpha": float(alpha), "threshold": float(threshold), "runs": int(regime.sum()),
                         "reached": int(reached.sum()),
                         "median_iteration": float(np.median(np.where(reached, iterations, np.inf)))})
    return pd.DataFrame(rows)


# --- Figs 5.4, C.9: the quadratic model in closed form, and a 2-layer linear MLP on its datasets ---


# --- Figs 5.2, C.1-C.6: α-scaled runs on C-score groups and noisy labels, linearity metrics ---


# --- Figs 5.3, C.7, C.8: spurious correlations ---
