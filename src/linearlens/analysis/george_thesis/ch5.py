"""Analysis for Chapter 5 (lazy vs hasty) and appendix C. Torch-free summaries (pandas and numpy only) behind
Figs 5.1-5.4 and C.1-C.9 (linearised vs non-linear training on easy and difficult examples; the quadratic
model)."""

from __future__ import annotations

import json

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
SPURIOUS_RUNS = "results/george_thesis/runs/ch5/spurious"
# The figure's rows, top to bottom; Fig C.7 repeats the first with other seeds, Fig C.8 the second.
SPURIOUS_FAMILIES = ("celeba", "waterbirds")
SPURIOUS_APPENDIX = {"fig_C_7": "celeba", "fig_C_8": "waterbirds"}
# Group-level settings every run of the group carries (the rest is the family's).
SPURIOUS_RUN_KEYS = ("batch_size", "log_every", "loss_floor", "patience", "max_epochs", "keep_initial_output",
                     "linearity_every")
SPURIOUS_NAMING_KEYS = ("label",)  # how figures name a family: not part of a run
# The balanced sets' subsets: all examples, those with and without the spurious feature, each cell.
SPURIOUS_CELLS = tuple(f"y{label}_g{group}" for label in (0, 1) for group in (0, 1))
SPURIOUS_SUBSETS = ("all", "with", "without", *SPURIOUS_CELLS)
BALANCED_SETS = ("balanced_train", "balanced_test")


def alpha_name(alpha: float) -> str:
    """α as it appears in file names and legends: 0.5, 1, 100."""
    return f"{float(alpha):g}"


def check_spurious_spec(spec: dict) -> None:
    """What the schema cannot say: Fig 5.3's seed is one of the runs' seeds."""
    if spec["figure_seed"] not in spec["seeds"]:
        raise ValueError(f"george_thesis.ch5.spurious.figure_seed {spec['figure_seed']} is not one of the seeds "
                         f"{spec['seeds']}")


def spurious_run_settings(spec: dict, family: str) -> dict:
    """What one run of ``family`` is trained with: the group's settings and the family's, its name
    for figures left out (renaming a family reruns nothing)."""
    own = {k: v for k, v in spec["families"][family].items() if k not in SPURIOUS_NAMING_KEYS}
    return {**{key: spec[key] for key in SPURIOUS_RUN_KEYS}, **own}


def spurious_runs(spec: dict, families=SPURIOUS_FAMILIES, seeds=None) -> list[dict]:
    """{family, alpha, seed} of every run asked for, in a fixed order (families top to bottom, α and
    seeds ascending): never the config's order."""
    chosen = spec["seeds"] if seeds is None else seeds
    return [{"family": family, "alpha": alpha_name(alpha), "seed": int(seed)}
            for family in families if family in spec["families"]
            for alpha in sorted(spec["alphas"], key=float) for seed in sorted(chosen)]


def spurious_run_path(run: dict, suffix: str = ".csv") -> str:
    return f"{SPURIOUS_RUNS}/{run['family']}/seed{run['seed']}/alpha{run['alpha']}{suffix}"


def figure_runs(spec: dict, figure: str) -> list[dict]:
    """Fig 5.3: both families at the figure's seed; Figs C.7, C.8: one family at the other seeds."""
    if figure == "fig_5_3":
        return spurious_runs(spec, seeds=[spec["figure_seed"]])
    family = SPURIOUS_APPENDIX[figure]
    return spurious_runs(spec, [family], [s for s in spec["seeds"] if s != spec["figure_seed"]])


def spurious_configured(spec: dict | None, figure: str) -> bool:
    """Whether a configuration builds the figure (Figs C.7, C.8 need seeds besides the figure's)."""
    return spec is not None and (figure == "claims" or bool(figure_runs(spec, figure)))


def spurious_inputs(spec: dict, figure: str) -> dict[str, list[str]]:
    """A figure's (or the claims') files: every run's log and summary, and its datasets' provenance."""
    runs = figure_runs(spec, figure) if figure != "claims" else spurious_runs(spec)
    datasets = sorted({spec["families"][run["family"]]["dataset"] for run in runs})
    inputs = {"runs": [spurious_run_path(run) for run in runs],
              "summaries": [spurious_run_path(run, ".json") for run in runs],
              "provenance": [f"results/data/{dataset}.json" for dataset in datasets]}
    if figure == "claims":  # the datasets' group counts (H14), one per provenance
        inputs["data"] = [f"results/data/{dataset}.npz" for dataset in datasets]
    return inputs


def spurious_params(spec: dict, figure: str) -> dict:
    """A figure's params: its runs (matching its input files one to one) and the families' names."""
    runs = figure_runs(spec, figure) if figure != "claims" else spurious_runs(spec)
    return {"runs": runs, "figure_seed": spec["figure_seed"],
            "families": {family: {"label": spec["families"][family]["label"],
                                  "with_spurious": spec["families"][family]["with_spurious"]}
                         for family in spec["families"]}}


def read_spurious_runs(paths: list[str], runs: list[dict]) -> pd.DataFrame:
    """Every run's log rows, with its family, α and seed as columns."""
    frames = [pd.read_csv(path).assign(family=run["family"], alpha=float(run["alpha"]), seed=run["seed"])
              for path, run in zip(paths, runs)]
    return pd.concat(frames, ignore_index=True)


def read_spurious_summaries(paths: list[str], runs: list[dict]) -> pd.DataFrame:
    rows = []
    for path, run in zip(paths, runs):
        with open(path) as handle:
            summary = json.load(handle)
        rows.append({"family": run["family"], "alpha": float(run["alpha"]), "seed": run["seed"], **summary})
    return pd.DataFrame.from_records(rows)


def one_run(frame: pd.DataFrame, family: str, alpha: float, seed: int) -> pd.DataFrame:
    chosen = frame[(frame.family == family) & (frame.alpha == float(alpha)) & (frame.seed == seed)]
    return chosen.sort_values("step")


def matched_accuracy(run: pd.DataFrame, x: str, y: str, levels) -> np.ndarray:
    """y at the first log where x reaches each level (linear interpolation between that log and the
    one before; NaN for a level x never reaches): the parametric curves of Fig 5.3 read at equal x.
    x is taken as its running maximum, so a dip does not count as reaching a level again."""
    xs = np.maximum.accumulate(run[x].to_numpy(dtype=float))
    ys = run[y].to_numpy(dtype=float)
    values = []
    for level in levels:
        reached = np.flatnonzero(xs >= level)
        if not len(reached):
            values.append(np.nan)
            continue
        i = reached[0]
        if i == 0 or xs[i] == xs[i - 1]:
            values.append(ys[i])
            continue
        share = (level - xs[i - 1]) / (xs[i] - xs[i - 1])
        values.append(ys[i - 1] + share * (ys[i] - ys[i - 1]))
    return np.asarray(values)


def first_step_reaching(run: pd.DataFrame, column: str, level: float) -> int | None:
    """The first logged step at which ``column`` reaches ``level`` (None if it never does)."""
    reached = run[run[column] >= level]
    return int(reached.step.iloc[0]) if len(reached) else None


def log_step_grid(last: int, points: int = 50) -> np.ndarray:
    """Steps 1 .. last, log-spaced: the early phase read evenly on the figure's log axis."""
    return np.unique(np.round(np.geomspace(1, max(last, 1), points)).astype(int))


def curve_at(run: pd.DataFrame, column: str, steps: np.ndarray) -> np.ndarray:
    """A logged curve at given steps, interpolated linearly in log(1 + step); after the run's last
    log, its last value (a stopped run stays where it stopped)."""
    return np.interp(np.log1p(steps), np.log1p(run.step.to_numpy(dtype=float)), run[column].to_numpy(dtype=float))


def matched_gaps(frame: pd.DataFrame, family: str, seed: int, alpha: float, reference: float, subset: str,
                 levels) -> np.ndarray:
    """Fig 5.3 middle/right read at equal with-spurious accuracy: the without-spurious accuracy of α
    minus that of the reference α at each level (``matched_accuracy``)."""
    runs = [one_run(frame, family, a, seed) for a in (alpha, reference)]
    mine, theirs = (matched_accuracy(run, f"{subset}_with_accuracy", f"{subset}_without_accuracy", levels)
                    for run in runs)
    return mine - theirs


def early_phase(frame: pd.DataFrame, family: str, seed: int, alpha: float, reference: float,
                accuracy: float) -> tuple[int | None, np.ndarray]:
    """Fig 5.3 left over the early phase: its end (the first log at which the reference run's accuracy
    on the balanced training subset reaches ``accuracy``) and, on log-spaced steps up to it, the
    test accuracy of α minus the reference's."""
    reference_run, run = one_run(frame, family, reference, seed), one_run(frame, family, alpha, seed)
    end = first_step_reaching(reference_run, "balanced_train_accuracy", accuracy)
    if end is None:
        return None, np.array([])
    steps = log_step_grid(end)
    return end, curve_at(run, "balanced_test_accuracy", steps) - curve_at(reference_run, "balanced_test_accuracy", steps)
