"""Analysis for Chapter 5 (lazy vs hasty) and appendix C. Torch-free summaries (pandas and numpy only) behind
Figs 5.1-5.4 and C.1-C.9 (linearised vs non-linear training on easy and difficult examples; the quadratic
model)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

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
FIGURE_WINDOWS = ("t_linear", "t_nonlinear")  # display only: the simulation does not depend on them


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

# The runs: for every architecture and seed, both experiments (C-score groups, noisy labels) at every α
# of the config's regimes, from one θ₀ per (architecture, seed), one label-noise draw and one batch
# order per seed; plus Fig C.1's learning-rate sweep at α = 1 (noisy labels, the main architecture
# and seed), capped at the iterations of that seed's largest-α run (its small learning rates never reach the
# other runs' loss range in a finite budget).

EXPERIMENTS = ("cscore", "noisy")
SWEEP_ALPHA = 1.0
LINEARITY_METRICS = ("sign_similarity", "ntk_alignment", "representation_alignment")
# Which column measures a run's progress (the x-axis of every figure): the mean training loss of the
# C-score deciles (the author's code: the mean of the 10 bin losses), the clean examples' loss.
PROGRESS = {"cscore": "train_loss", "noisy": "clean_loss"}


def setting_name(alpha: float, lr: float) -> str:
    return f"alpha{alpha:g}_lr{lr:g}"


def _run(experiment: str, architecture: str, seed: int, alpha: float, lr: float, epochs: int,
         stop_loss: float | None, capped: bool) -> dict:
    return {"experiment": experiment, "architecture": architecture, "seed": int(seed), "alpha": float(alpha),
            "lr": float(lr), "epochs": int(epochs), "stop_loss": stop_loss, "capped": capped,
            "setting": setting_name(alpha, lr)}


def check_difficulty_spec(spec: dict) -> None:
    """The figures' picks name configured runs: the main and other architectures exist, the seeds
    of Figs 5.2 and C.2 are the main architecture's, and α = 1 is a regime (the sweep's reference)."""
    architectures = spec["architectures"]
    main = spec["main"]
    problems = [f"{name} is no configured architecture" for name in (main["architecture"], spec["other_architecture"])
                if name not in architectures]
    if not problems:
        seeds = set(architectures[main["architecture"]]["seeds"])
        problems += [f"seed {seed} is not among {main['architecture']}'s seeds {sorted(seeds)}"
                     for seed in [main["seed"], *spec["other_seeds"]] if seed not in seeds]
    if not _has_regime(spec, SWEEP_ALPHA):
        problems.append("the regimes need α = 1 (the non-linear reference of every figure)")
    if len({regime["alpha"] for regime in spec["regimes"]}) != len(spec["regimes"]):
        problems.append("two regimes share an α")
    if problems:
        raise ValueError("george_thesis.ch5.difficulty: " + "; ".join(problems))


def difficulty_runs(spec: dict) -> list[dict]:
    """Every run of the group, once, in a fixed order (architectures by name, seeds ascending)."""
    check_difficulty_spec(spec)
    base_lr = spec["optimiser"]["lr"]
    runs = [_run(experiment, architecture, seed, regime["alpha"], base_lr, regime["epochs"], regime["stop_loss"], False)
            for architecture, names in sorted(spec["architectures"].items())
            for seed in sorted(names["seeds"])
            for experiment in EXPERIMENTS
            for regime in spec["regimes"]]
    sweep, main = spec["lr_sweep"], spec["main"]
    longest = _lazy_regime(spec)["epochs"]
    runs += [_run("noisy", main["architecture"], main["seed"], SWEEP_ALPHA, lr, longest, sweep["stop_loss"], True)
             for lr in sweep["learning_rates"] if not (lr == base_lr and _has_regime(spec, SWEEP_ALPHA))]
    return runs


def _lazy_regime(spec: dict) -> dict:
    return max(spec["regimes"], key=lambda regime: regime["alpha"])


def _has_regime(spec: dict, alpha: float) -> bool:
    return any(regime["alpha"] == alpha for regime in spec["regimes"])


def run_key(run: dict) -> tuple[str, str, str, int]:
    return run["experiment"], run["architecture"], run["setting"], run["seed"]


def cap_run(spec: dict, run: dict) -> dict | None:
    """The run whose iteration count caps ``run`` (its seed's largest-α run at the base rate), if capped."""
    if not run["capped"]:
        return None
    lazy = _lazy_regime(spec)
    return _run(run["experiment"], run["architecture"], run["seed"], lazy["alpha"], spec["optimiser"]["lr"],
                lazy["epochs"], lazy["stop_loss"], False)


RUN_KEYS = ("batch_size", "probe_size", "linearity_every", "thresholds", "keep_initial_output", "tracked",
            "tracking_seed")


def run_settings(spec: dict, run: dict) -> dict:
    """What a run's job needs (its params): the run, the shared training settings, its network, and
    what its experiment reads (the decile count; the label noise). Nothing else, so that changing
    one experiment's settings reruns only its runs."""
    settings = {**{key: spec[key] for key in RUN_KEYS}, **run,
                "optimiser": {**spec["optimiser"], "lr": run["lr"]},
                "model": spec["architectures"][run["architecture"]]["model"]}
    if run["experiment"] == "cscore":
        settings["bins"] = spec["bins"]
    else:
        settings.update(label_noise=spec["label_noise"], noise_seed=spec["noise_seed"])
    return settings


# --- what each figure and the claims read

def _pick(spec: dict, experiment: str, architecture: str, seeds) -> list[dict]:
    base_lr = spec["optimiser"]["lr"]
    return [run for run in difficulty_runs(spec) if run["experiment"] == experiment and
            run["architecture"] == architecture and run["seed"] in seeds and run["lr"] == base_lr and not run["capped"]]


def main_runs(spec: dict, experiment: str) -> list[dict]:
    """Fig 5.2's runs of one experiment: every α, the main architecture and seed."""
    main = spec["main"]
    return _pick(spec, experiment, main["architecture"], [main["seed"]])


def sweep_runs(spec: dict) -> list[dict]:
    """Fig C.1: α = 1 at every rate of the sweep (noisy labels), then the largest-α run for reference."""
    main = spec["main"]
    alpha_one = [run for run in difficulty_runs(spec) if run["experiment"] == "noisy" and run["alpha"] == SWEEP_ALPHA
                 and run["architecture"] == main["architecture"] and run["seed"] == main["seed"]]
    by_lr = {run["lr"]: run for run in alpha_one}
    lazy = [run for run in main_runs(spec, "noisy") if run["alpha"] == _lazy_regime(spec)["alpha"]]
    return [by_lr[lr] for lr in sorted(spec["lr_sweep"]["learning_rates"], reverse=True) if lr in by_lr] + lazy


def seed_runs(spec: dict, experiment: str) -> list[dict]:
    """Fig C.2: the main architecture's other seeds."""
    others = spec["other_seeds"]
    return _pick(spec, experiment, spec["main"]["architecture"], others)


def architecture_runs(spec: dict, experiment: str) -> list[dict]:
    """Figs C.3, C.4: the second architecture (VGG11 in the thesis), its first seed."""
    other = spec["other_architecture"]
    return _pick(spec, experiment, other, [min(spec["architectures"][other]["seeds"])])


FIGURE_RUNS = {
    "fig_5_2": lambda spec: main_runs(spec, "cscore") + main_runs(spec, "noisy"),
    "fig_C_1": sweep_runs,
    "fig_C_2": lambda spec: seed_runs(spec, "cscore") + seed_runs(spec, "noisy"),
    "fig_C_3": lambda spec: architecture_runs(spec, "noisy"),
    "fig_C_4": lambda spec: architecture_runs(spec, "cscore"),
    "fig_C_5": lambda spec: main_runs(spec, "cscore"),
    "fig_C_6": lambda spec: main_runs(spec, "cscore") + main_runs(spec, "noisy"),
}


def difficulty_figure_runs(spec: dict, figure: str) -> list[dict]:
    return FIGURE_RUNS[figure](spec)


def difficulty_claim_runs(spec: dict) -> list[dict]:
    """Every run the claims read: Fig 5.2's, the sweep, the other seeds and the other architecture."""
    runs = []
    for figure in ("fig_5_2", "fig_C_1", "fig_C_2", "fig_C_3", "fig_C_4"):
        runs += [run for run in difficulty_figure_runs(spec, figure) if run not in runs]
    return runs


def cscore_label(spec: dict) -> str:
    """How the figures name the C-scores."""
    settings = spec["cscores"]
    if settings["source"] == "published":
        return "C-scores of Jiang et al. (2021), published for the CIFAR-10 training images"
    return (f"proxy C-scores computed by the pipeline (hold-out estimator of eq. 5.3.2 with a {settings['model']} "
            f"classifier, subset ratios {', '.join(f'{r:g}' for r in settings['ratios'])} × {settings['repeats']})")


def network_name(spec: dict, architecture: str) -> str:
    names = spec["architectures"][architecture]
    return f"{names['standin']} (stand-in for {names['label']})" if names.get("standin") else names["label"]


# --- reading runs, and comparing them at equal progress

def read_runs(paths: list[str], runs: list[dict]) -> dict[tuple, pd.DataFrame]:
    """{run key: its log} for runs read in the order of their paths."""
    return {run_key(run): pd.read_csv(path) for path, run in zip(paths, runs)}


def read_summaries(paths: list[str], runs: list[dict]) -> dict[tuple, dict]:
    return {run_key(run): json.loads(Path(path).read_text()) for path, run in zip(paths, runs)}


def ended_at_cap(summary: dict) -> bool:
    """Whether a run with a stopping rule (the largest-α run's mean training loss) ran out of epochs
    before meeting it: it did not reach the end of training the thesis's run reached."""
    return summary["ended"] == "finished" and summary["run"]["stop_loss"] is not None


def ending_text(summary: dict, frame: pd.DataFrame, experiment: str) -> str:
    """How a run ended, in words, with the progress it reached."""
    run = summary["run"]
    reached = f"{PROGRESS[experiment].replace('_', ' ')} {np.nanmin(frame[PROGRESS[experiment]]):.3f}"
    if ended_at_cap(summary):
        return (f"hit its {summary['steps']:,}-step cap ({run['epochs']} epochs) at {reached}, its stopping rule "
                f"(mean training loss {run['stop_loss']:g}) unmet")
    return f"{summary['ended']} after {summary['steps']:,} steps at {reached}"


def progress_curve(frame: pd.DataFrame, experiment: str, column: str) -> tuple[np.ndarray, np.ndarray]:
    """``column`` against the run's progress, made monotone: x = the running minimum of the progress
    column (as the authors' code plots it), kept at the log points where x reaches a new minimum (and
    the first), so x strictly decreases and a curve can be read at any progress by interpolation. Log points without
    ``column`` (the linearity metrics come every 5th) are skipped; x still counts every point."""
    x = np.minimum.accumulate(frame[PROGRESS[experiment]].to_numpy(dtype=float))
    y = frame[column].to_numpy(dtype=float)
    keep = ~np.isnan(y)
    x, y = x[keep], y[keep]
    if not len(x):
        return x, y
    new = np.r_[True, x[1:] < np.minimum.accumulate(x)[:-1]]
    return x[new], y[new]


def at_progress(x: np.ndarray, y: np.ndarray, grid) -> np.ndarray:
    """y of a progress curve read at the progress values ``grid`` (linear interpolation; NaN beyond
    the progress the run covered)."""
    if len(x) == 0:
        return np.full(np.shape(grid), np.nan)
    return np.interp(grid, x[::-1], y[::-1], left=np.nan, right=np.nan)


def common_progress(curves: list[tuple[np.ndarray, np.ndarray]], points: int) -> np.ndarray:
    """``points`` progress values, evenly spaced from the start to the end of the progress every
    curve covers (decreasing); empty when the curves share none."""
    high = min(x.max() for x, _ in curves)
    low = max(x.min() for x, _ in curves)
    return np.linspace(high, low, points) if low < high else np.array([])


def matched_difference(frame_a: pd.DataFrame, frame_b: pd.DataFrame, experiment: str, column: str,
                       grid) -> np.ndarray:
    """``column`` of run a minus that of run b at equal progress (Fig C.5's loss_nonlinear − loss_linear)."""
    return (at_progress(*progress_curve(frame_a, experiment, column), grid)
            - at_progress(*progress_curve(frame_b, experiment, column), grid))


def group_columns(frame: pd.DataFrame, split: str, metric: str = "loss") -> list[str]:
    """The decile groups' columns of a C-score run, lowest C-scores first: train_bin0_loss, …"""
    pattern = re.compile(rf"{split}_bin(\d+)_{metric}")
    found = [(int(m.group(1)), column) for column in frame.columns if (m := pattern.fullmatch(column))]
    return [column for _, column in sorted(found)]


def decile_gap(frame: pd.DataFrame, grid, metric: str = "loss") -> np.ndarray:
    """Bottom minus top C-score decile's training loss (accuracy: top minus bottom) at the progress
    values ``grid``: how far apart easy and difficult examples are at equal mean training loss."""
    columns = group_columns(frame, "train", metric)
    low, high = (at_progress(*progress_curve(frame, "cscore", c), grid) for c in (columns[0], columns[-1]))
    return low - high if metric == "loss" else high - low


@dataclass(frozen=True)
class TurningPoint:
    clean_loss: float  # the progress (clean examples' loss) at the noisy examples' highest loss
    noisy_loss: float  # that highest loss
    final_noisy_loss: float
    turned: bool  # the noisy loss has come down from its peak by the end of the run


def turning_point(frame: pd.DataFrame, decline: float = 0.05) -> TurningPoint:
    """Where memorisation of the noisy labels starts (Fig 5.2 bottom left): along the clean-loss
    progress, the noisy examples' loss first rises (clean examples learnt, the noisy ones pushed to
    their true class) and then falls (their wrong labels memorised). The turning point is its
    maximum along progress; it counts as reached when the loss at the run's end has fallen at least
    ``decline`` (relative) below it, else the run ended before memorisation (clean_loss NaN)."""
    x, noisy = progress_curve(frame, "noisy", "noisy_loss")
    peak = int(np.argmax(noisy))
    final = float(frame["noisy_loss"].iloc[-1])
    turned = final <= noisy[peak] * (1 - decline)
    return TurningPoint(float(x[peak]) if turned else float("nan"), float(noisy[peak]), final, bool(turned))


def memorisation_onset(frame: pd.DataFrame, share: float) -> tuple[float, float]:
    """The clean loss at which a share ``share`` of the noisy examples is fitted to its wrong label
    (Fig C.6 left; NaN if never), counted after the first phase's low (a network that starts as the
    zero function 'fits' the noisy labels of class 0), and the progress the run reached."""
    x, fitted = progress_curve(frame, "noisy", "noisy_accuracy")
    low = int(np.argmin(fitted))
    reached = low + np.flatnonzero(fitted[low:] >= share)
    return (float(x[reached[0]]) if len(reached) else float("nan")), float(x[-1])


def later_onset(one: tuple[float, float], other: tuple[float, float]) -> bool | None:
    """Whether run one starts memorising later (at a lower clean loss) than run other, from their
    ``memorisation_onset``; None when undecided (one has not memorised and stopped before the
    other's onset)."""
    (onset_one, end_one), (onset_other, end_other) = one, other
    if not np.isnan(onset_one) and not np.isnan(onset_other):
        return onset_one < onset_other
    if np.isnan(onset_one) and not np.isnan(onset_other) and end_one <= onset_other:
        return True  # one went past the other's onset without memorising
    if np.isnan(onset_other) and not np.isnan(onset_one) and end_other <= onset_one:
        return False
    return None


def run_test_loss(frame: pd.DataFrame) -> pd.Series:
    """A run's test loss per log point (a C-score run's: the mean over the test deciles)."""
    return frame["test_loss"] if "test_loss" in frame else frame[group_columns(frame, "test")].mean(axis=1)


def best_test_loss(frame: pd.DataFrame) -> float:
    """The lowest test loss a run reached (its 'sweet spot', Fig 5.2 bottom left)."""
    return float(run_test_loss(frame).min())


@dataclass(frozen=True)
class SweetSpot:
    test_loss: float  # the run's lowest test loss
    clean_loss: float  # the progress (running-minimum clean loss) where it was reached
    final_test_loss: float
    passed: bool  # the test loss has risen from that minimum by the end: the minimum is the run's sweet spot


def sweet_spot(frame: pd.DataFrame, rise: float = 0.05) -> SweetSpot:
    """Where a noisy-label run's test loss is lowest (Fig 5.2 bottom left), and whether the run went
    past it: its test loss at the end at least ``rise`` (relative) above the minimum. A run still at
    its lowest test loss when it ends (an epoch cap) has not shown its sweet spot."""
    losses = run_test_loss(frame).to_numpy(dtype=float)
    best = int(np.nanargmin(losses))
    progress = np.minimum.accumulate(frame[PROGRESS["noisy"]].to_numpy(dtype=float))
    final = float(losses[-1])
    return SweetSpot(float(losses[best]), float(progress[best]), final, bool(final >= losses[best] * (1 + rise)))


def best_test_loss_down_to(frame: pd.DataFrame, clean_loss: float) -> float:
    """The lowest test loss of a noisy-label run over the log points whose progress (running-minimum
    clean loss) has not gone below ``clean_loss``: its best at a progress another run also reached."""
    progress = np.minimum.accumulate(frame[PROGRESS["noisy"]].to_numpy(dtype=float))
    return float(run_test_loss(frame)[progress >= clean_loss].min())


def linearity_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The log points with the linearity metrics (every ``linearity_every``-th)."""
    return frame.dropna(subset=list(LINEARITY_METRICS))



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


def spurious_alphas(spec: dict) -> list:
    """The α of the spurious runs, ascending (each job trains them in this order): never the config's order."""
    return sorted(spec["alphas"], key=float)


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
            for alpha in spurious_alphas(spec) for seed in sorted(chosen)]


def figure_runs(spec: dict, figure: str) -> list[dict]:
    """Fig 5.3: both families at the figure's seed; Figs C.7, C.8: one family at the other seeds."""
    if figure == "fig_5_3":
        return spurious_runs(spec, seeds=[spec["figure_seed"]])
    family = SPURIOUS_APPENDIX[figure]
    return spurious_runs(spec, [family], [s for s in spec["seeds"] if s != spec["figure_seed"]])


def spurious_configured(spec: dict | None, figure: str) -> bool:
    """Whether a configuration builds the figure (Figs C.7, C.8 need seeds besides the figure's)."""
    return spec is not None and (figure == "claims" or bool(figure_runs(spec, figure)))


def spurious_runs_read(spec: dict, figure: str) -> list[dict]:
    """The runs a figure reads; every run for ``figure`` "claims"."""
    return figure_runs(spec, figure) if figure != "claims" else spurious_runs(spec)


def spurious_params(spec: dict, figure: str) -> dict:
    """A figure's params: its runs (matching its input files one to one) and the families' names."""
    runs = spurious_runs_read(spec, figure)
    return {"runs": runs, "figure_seed": spec["figure_seed"],
            "families": {family: {"label": spec["families"][family]["label"],
                                  "with_spurious": spec["families"][family]["with_spurious"],
                                  "network": spurious_network(family, spec["families"][family]["model"])}
                         for family in spec["families"]}}


THESIS_SPURIOUS_NETWORKS = {"celeba": "ResNet18", "waterbirds": "ImageNet-pretrained ResNet18"}


def spurious_network(family: str, model: dict) -> str:
    """A family's network in words; a configured MLP is a stand-in for the thesis's ResNet18."""
    if model["name"] != "mlp":
        return model["name"]
    widths = "-".join(str(w) for w in [model["in_features"], *model["hidden"], model["out_features"]])
    return f"MLP {widths} (stand-in for {THESIS_SPURIOUS_NETWORKS[family]})"


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
