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

ANALYTIC_EXAMPLES = ("example_1", "example_2", "example_3")
ANALYTIC_REGIMES = ("linear", "nonlinear")
ANALYTIC_RUNS = "results/george_thesis/runs/ch5/analytic"
FIGURE_WINDOWS = ("t_linear", "t_nonlinear")  # display only: the simulation does not depend on them


def closed_forms_path() -> str:
    return f"{ANALYTIC_RUNS}/closed_forms.npz"


def twolayer_path(example: str) -> str:
    return f"{ANALYTIC_RUNS}/twolayer/{example}.npz"


def twolayer_paths(spec: dict) -> list[str]:
    """Fig C.9's runs, one per example, in the thesis's order."""
    return [twolayer_path(example) for example in ANALYTIC_EXAMPLES if example in spec["examples"]]


def closed_form_spec(spec: dict) -> dict:
    """What the closed forms depend on: the ``analytic`` config without the C.9 simulation."""
    return {key: value for key, value in spec.items() if key != "twolayer"}


def twolayer_spec(spec: dict, example: str) -> dict:
    """What one C.9 run depends on: its example's data, the seed and the simulation settings."""
    data = {key: value for key, value in spec["examples"][example].items() if key not in FIGURE_WINDOWS}
    return {"seed": spec["seed"], "examples": {example: data}, "twolayer": spec["twolayer"]}


def read_analytic(path: str) -> dict[str, dict[str, np.ndarray]]:
    """The analytic run's record, split by its key prefix: {example or "sequentialisation": {name: array}}."""
    with np.load(path) as archive:
        record: dict[str, dict[str, np.ndarray]] = {}
        for key in archive.files:
            part, _, name = key.partition("/")
            record.setdefault(part, {})[name] = archive[key]
    return record


def read_twolayer(path: str) -> dict[str, np.ndarray]:
    with np.load(path) as archive:
        return {key: archive[key] for key in archive.files}


def group_curves(errors: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Per-group mean squared error from per-example squared errors (..., n) -> (..., groups)."""
    return np.stack([errors[..., group == g].mean(axis=-1) for g in range(int(group.max()) + 1)], axis=-1)


def crossing_time(times: np.ndarray, curve: np.ndarray, fraction: float) -> float:
    """The first time ``curve`` falls to ``fraction`` × its initial value (linear interpolation
    between samples); NaN if it never does."""
    level = fraction * curve[0]
    below = np.flatnonzero(curve <= level)
    if below.size == 0:
        return float("nan")
    k = below[0]
    if k == 0:
        return float(times[0])
    t0, t1, c0, c1 = times[k - 1], times[k], curve[k - 1], curve[k]
    return float(t0 + (c0 - level) / (c0 - c1) * (t1 - t0))


def crossing_times(times: np.ndarray, curves: np.ndarray, fraction: float) -> np.ndarray:
    """``crossing_time`` of each column of ``curves`` (T, k)."""
    return np.array([crossing_time(times, curves[:, j], fraction) for j in range(curves.shape[1])])


def value_at(times: np.ndarray, curve: np.ndarray, time: float) -> float:
    """``curve`` at ``time`` (linear interpolation); NaN for a NaN time."""
    return float("nan") if np.isnan(time) else float(np.interp(time, times, curve))


def learning_order(finish: np.ndarray) -> list[int] | None:
    """Indices in the order their times come (1-based), None when a time is missing or tied."""
    if np.isnan(finish).any() or np.unique(finish).size < finish.size:
        return None
    return [int(i) + 1 for i in np.argsort(finish)]


def twolayer_time(errors: np.ndarray) -> np.ndarray:
    """The GD iterations 0 … T of a two-layer run's error record (T + 1, inits, n)."""
    return np.arange(errors.shape[0], dtype=float)


# --- Figs 5.2, C.1-C.6: α-scaled runs on C-score groups and noisy labels, linearity metrics ---


# --- Figs 5.3, C.7, C.8: spurious correlations ---


def analytic_curves(example: dict[str, np.ndarray], regime: str, dense: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(times, per-group MSE (T, groups)) of one example and regime of the closed forms, on the
    figure's window or (``dense``) on the claims' log grid. Example 1's groups are its examples."""
    suffix = "_dense" if dense else ""
    return example[f"{regime}{suffix}_times"], group_curves(example[f"{regime}{suffix}_errors"], example["group"])


def twolayer_curves(run: dict[str, np.ndarray], regime: str) -> tuple[np.ndarray, np.ndarray]:
    """(GD iterations, per-group MSE of every init (T, inits, groups)) of one C.9 run and regime."""
    errors = run[f"{regime}_errors"]
    return twolayer_time(errors), group_curves(errors, run["group"])


def relative(curve: np.ndarray) -> np.ndarray:
    """A curve over its initial value."""
    return curve / curve[0]


def hard_when_easy_reached(times: np.ndarray, curves: np.ndarray, fraction: float, easy: int = 0,
                           hard: int = 1) -> float:
    """The hard group's MSE, relative to its initial value, at the time the easy group's MSE first
    falls to ``fraction`` of its own (NaN if it never does)."""
    return value_at(times, relative(curves[:, hard]), crossing_time(times, curves[:, easy], fraction))


def peak_ratio(curve: np.ndarray) -> float:
    """How far a curve rises above its initial value: max / initial."""
    return float(curve.max() / curve[0])


def crossing_ratio(times: np.ndarray, curves: np.ndarray, fraction: float, easy: int = 0, hard: int = 1) -> float:
    """t_hard / t_easy, the times the two groups' MSEs fall to ``fraction`` of their initial values."""
    finish = crossing_times(times, curves[:, [easy, hard]], fraction)
    return float(finish[1] / finish[0])


def order_text(finish: np.ndarray) -> str:
    order = learning_order(finish)
    return "undefined (a curve never gets there, or a tie)" if order is None else "-".join(map(str, order))
