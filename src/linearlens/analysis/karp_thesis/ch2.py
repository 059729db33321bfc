"""Chapter 2 and Appendix A, the algorithmic stability of SGD: how the pair runs split into
jobs, what each job trains, and the summaries behind Figs 2.1-2.4, A.1-A.15 and Table 2.1 (torch-free, shared by
the figures and the claims).

A *configuration* (the logistic regression of Fig 2.1, or one of Table 2.1's ResNet-20 settings 1a,
2a, 2b) is trained on pairs (S, S′) of training sets of size m that differ in one example; one
job trains a block of pairs of one size and one trial in lockstep and records, at each snapshot
(the thesis's t = 50k, 100k, 150k: ``early``, ``main``, ``late``), the generalisation gaps of A(S),
the stability sample β̂(S, S′) = max over the test set of |ℓ(A(S), z′) − ℓ(A(S′), z′)| and the
parameter norms and distance. Every plotted quantity is a maximum over samples at each m with a
power law a·m^b fitted to the maxima (the thesis's motif: samples as dots, their maximum at each m, the fit).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import curve_fit

THESIS_ITERATIONS = {"early": 50_000, "main": 100_000, "late": 150_000}  # the snapshots, in order
# The keys of a configuration that change what its jobs train (its name, labels and the list of
# sizes, trials and pairs do not: a job trains given sizes, one trial and one block of pairs).
# The columns of an A(S) row (a sweep run's; a pair row has them too, for A(S)).
SWEEP_COLUMNS = ("configuration", "trial", "m", "sample", "snapshot", "step", "train_loss", "train_error",
                 "test_loss", "test_error", "gap_loss", "gap_error", "norm")
TRAINING_KEYS = ("dataset", "model", "layout", "loss", "init", "optimiser", "lr_drops", "lr_drop_factor",
                 "batch_size", "steps", "snapshots", "eval_batch")


# --- the design: configurations, blocks of pairs ----------------------------------------------

def configurations(spec: dict) -> dict[str, dict]:
    return spec["configurations"]


def training_settings(spec: dict, configuration: str) -> dict:
    """What a job of this configuration trains, whatever its size, trial and pairs."""
    settings = configurations(spec)[configuration]
    return {key: settings[key] for key in TRAINING_KEYS if key in settings}


def blocks(settings: dict) -> int:
    """Jobs per (configuration, trial, group of sizes): the pairs in blocks of ``pairs_per_job``."""
    return -(-settings["pairs"] // settings["pairs_per_job"])


def block_pairs(settings: dict, block: int) -> list[int]:
    """The pair numbers of one block (the last block may be short)."""
    first = block * settings["pairs_per_job"]
    return list(range(first, min(first + settings["pairs_per_job"], settings["pairs"])))


def size_groups(settings: dict) -> list[tuple[int, ...]]:
    """The sizes in groups of ``sizes_per_job`` (default 1), trained one after the other by one job:
    small quick-scale runs share one job's start-up (importing torch costs more than training them)."""
    sizes, per_job = list(settings["sizes"]), int(settings.get("sizes_per_job", 1))
    return [tuple(sizes[i:i + per_job]) for i in range(0, len(sizes), per_job)]


def groups_of(settings: dict, sizes) -> list[tuple[int, ...]]:
    """The groups holding any of ``sizes`` (all of them for None), in order."""
    wanted = set(settings["sizes"] if sizes is None else sizes)
    return [group for group in size_groups(settings) if wanted & set(group)]


def run_name(configuration: str, trial: int, sizes: tuple[int, ...]) -> str:
    """A (configuration, trial, group of sizes) as the part of its files' paths: ``1a/trial1/m15000``
    for one size, ``1a/trial1/m100-200-400-800`` for several."""
    return f"{configuration}/trial{trial}/m{'-'.join(str(m) for m in sizes)}"


def parse_run(run: str) -> tuple[str, int, tuple[int, ...]]:
    configuration, trial, sizes = run.split("/")
    return configuration, int(trial.removeprefix("trial")), tuple(int(m) for m in sizes.removeprefix("m").split("-"))


def kept_sizes(settings: dict) -> list[int]:
    """The sizes whose members' states are kept (mode connectivity), among the configured ones."""
    return [m for m in settings.get("keep_states", []) if m in settings["sizes"]]


def kept_groups(settings: dict) -> list[tuple[int, ...]]:
    return groups_of(settings, kept_sizes(settings)) if kept_sizes(settings) else []


def sweep_settings(spec: dict) -> dict | None:
    return spec.get("sweep")


def sweep_sizes_trained(spec: dict) -> list[int]:
    """Fig A.1's sizes that need runs of their own: the others are read from the pair runs of the
    same configuration and trial (their first ``samples`` pairs' A(S), the same draws of S)."""
    sweep = sweep_settings(spec)
    paired = set(configurations(spec)[sweep["configuration"]]["sizes"])
    return [m for m in sweep["sizes"] if m not in paired]


def sweep_groups(spec: dict) -> list[tuple[int, ...]]:
    """The trained sweep sizes in groups of the swept configuration's ``sizes_per_job``."""
    settings = configurations(spec)[sweep_settings(spec)["configuration"]]
    return size_groups({**settings, "sizes": sweep_sizes_trained(spec)}) if sweep_sizes_trained(spec) else []


def interpolated(spec: dict) -> list[tuple[str, int]]:
    """Every (configuration, trial) with kept states: one mode-connectivity job each."""
    return [(name, trial) for name, settings in configurations(spec).items()
            for trial in settings["trials"] if kept_sizes(settings)]


# --- reading runs --------------------------------------------------------------------------------

def read_rows(paths: list[str]) -> pd.DataFrame:
    return pd.concat([pd.read_csv(path) for path in paths], ignore_index=True) if paths else pd.DataFrame()


def sweep_rows(paths: dict[str, list[str]], samples: int, sizes=None) -> pd.DataFrame:
    """Fig A.1's A(S) rows at ``sizes`` (all for None): the sweep's own runs and the first
    ``samples`` pairs of the pair runs (their A(S) columns, the pair number as the sample)."""
    frames = [read_rows(paths["sweep"])]
    paired = read_rows(paths["pairs"])
    if len(paired):
        paired = paired[paired["pair"] < samples].rename(columns={"pair": "sample"})
        frames.append(paired[[column for column in SWEEP_COLUMNS if column in paired.columns]])
    frames = [frame for frame in frames if len(frame)]
    if not frames:
        return pd.DataFrame(columns=list(SWEEP_COLUMNS))
    rows = pd.concat(frames, ignore_index=True)
    if sizes is not None:
        rows = rows[rows["m"].isin(list(sizes))]
    return rows.sort_values(["m", "sample", "step"], ignore_index=True)


# --- the summaries: per-size maxima and their power law -----------------------------------------

def per_size_maxima(rows: pd.DataFrame, column: str) -> pd.Series:
    """The red dots: max over samples at each m (sup over S, or over (S, S′), estimated)."""
    return rows.groupby("m")[column].max().sort_index()


def loglog_slope(m: np.ndarray, y: np.ndarray) -> float:
    """Ordinary least squares slope of log y on log m (a diagnostic beside the fitted exponent)."""
    m, y = np.asarray(m, float), np.asarray(y, float)
    keep = y > 0
    if keep.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(m[keep]), np.log(y[keep]), 1)[0])


def power_law_fit(m, y) -> tuple[float, float]:
    """(a, b) of y = a·m^b fitted by ``scipy.optimize.curve_fit`` in linear space (as the thesis
    does; the largest values, at small m, dominate), started from the log-log least-squares line.
    NaN when fewer than two positive values."""
    m, y = np.asarray(m, float), np.asarray(y, float)
    keep = y > 0
    if keep.sum() < 2:
        return float("nan"), float("nan")
    b0 = loglog_slope(m[keep], y[keep])
    a0 = float(np.exp(np.mean(np.log(y[keep]) - b0 * np.log(m[keep]))))
    try:
        (a, b), _ = curve_fit(lambda x, a, b: a * np.power(x, b), m[keep], y[keep], p0=(a0, b0), maxfev=20_000)
    except RuntimeError:  # no convergence: the log-log line is the fit then
        return a0, b0
    return float(a), float(b)


def exponent_summary(rows: pd.DataFrame, column: str) -> dict[str, float]:
    """The fitted exponent b of the per-size maxima of ``column``, its log-log slope, and a."""
    maxima = per_size_maxima(rows, column)
    a, b = power_law_fit(maxima.index.to_numpy(), maxima.to_numpy())
    return {"a": a, "b": b, "loglog": loglog_slope(maxima.index.to_numpy(), maxima.to_numpy())}


def at_snapshot(rows: pd.DataFrame, snapshot: str) -> pd.DataFrame:
    return rows[rows["snapshot"] == snapshot]


# --- mode connectivity ---------------------------------------------------------------------------

def interpolation_dips(curves: pd.DataFrame, split: str = "test") -> pd.Series:
    """Per pair: how far the accuracy on α ∈ [0, 1] falls below the lower endpoint (α = 0 or 1),
    in accuracy points; 0 for a linearly connected pair."""
    column = f"{split}_accuracy"
    inside = curves[(curves["alpha"] >= 0) & (curves["alpha"] <= 1)]

    def dip(curve: pd.DataFrame) -> float:
        by_alpha = curve.set_index("alpha")[column]
        endpoints = min(by_alpha.loc[by_alpha.index.min()], by_alpha.loc[by_alpha.index.max()])
        return float(max(0.0, endpoints - by_alpha.min()))

    return inside.groupby("pair").apply(dip, include_groups=False)
