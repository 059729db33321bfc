"""Analysis for Chapter 5 (lazy vs hasty) and appendix C. Torch-free summaries (pandas and numpy only) behind
Figs 5.1-5.4 and C.1-C.9 (linearised vs non-linear training on easy and difficult examples; the quadratic
model)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

# --- Fig 5.1: the yin-yang toy, α = 1 vs α = 100, Δloss maps at loss thresholds ---


# --- Figs 5.4, C.9: the quadratic model in closed form, and a 2-layer linear MLP on its datasets ---


# --- Figs 5.2, C.1-C.6: α-scaled runs on C-score groups and noisy labels, linearity metrics ---


# --- Figs 5.3, C.7, C.8: spurious correlations ---

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
