"""Analysis for Chapter 4 (EKFAC) and appendix A. Torch-free summaries (pandas and numpy only) behind Fig 4.2
(gradient correlations in the KFE; KFAC vs EKFAC error against the exact Fisher), Figs 4.3-4.6 and A.1-A.5
(training with KFAC and EKFAC: auto-encoder, VGG11, ResNet34). Issue 26 fills Fig 4.2, issue 27 Figs 4.3-4.6
and A.1-A.5. Fig 4.1 (cartoon of the rescalings) is a drawing, in the figures module only."""

from __future__ import annotations

import re
import zlib

import numpy as np
import pandas as pd

# --- Fig 4.2: KFAC and EKFAC against the exact empirical Fisher along an SGD trajectory ---

METHOD_LABELS = {"kfac": "KFAC (amortised)", "ekfac": "EKFAC (s* on the current minibatch)",
                 "ekfac_probe": "EKFAC, s* on F's probe (Thm A.2.1's optimum)"}


def read_errors(path: str) -> pd.DataFrame:
    return pd.read_csv(path)


def read_correlations(path: str) -> dict[str, np.ndarray]:
    with np.load(path) as contents:
        return {key: contents[key] for key in contents.files}


def layer_numbers(frame: pd.DataFrame) -> list[int]:
    """The Linear layers (1-based) the run has per-layer errors for."""
    return sorted({int(match[1]) for column in frame.columns if (match := re.fullmatch(r"kfac_error_layer(\d+)",
                                                                                      column))})


def mean_off_diagonal(correlation: np.ndarray) -> float:
    """Mean |corr_ij| over i ≠ j."""
    magnitude = np.abs(correlation)
    size = len(magnitude)
    return float((magnitude.sum() - np.trace(magnitude)) / (size * size - size))


def recompute_drift(frame: pd.DataFrame, method: str, column: str = "error") -> float:
    """Mean rise of a method's error over a recompute interval: its last logged value before the next
    recompute minus its value at the recompute (intervals with both ends logged)."""
    rises = []
    for _, interval in frame.groupby("recomputed_at"):
        if len(interval) > 1:
            values = interval.sort_values("step")[f"{method}_{column}"]
            rises.append(values.iloc[-1] - values.iloc[0])
    return float(np.mean(rises)) if rises else float("nan")


def theorem_margins(frame: pd.DataFrame) -> pd.DataFrame:
    """Per logged step and layer: ‖F − F_EKFAC‖ with s* on F's own examples over ‖F − F_KFAC‖ (both in the
    same KFE), where Theorem A.2.1 says ≤ 1; and the same ratio over the block diagonal ("all")."""
    columns = {f"layer{layer}": (f"ekfac_probe_error_layer{layer}", f"kfac_error_layer{layer}")
               for layer in layer_numbers(frame)}
    columns["all"] = ("ekfac_probe_error", "kfac_error")
    return pd.DataFrame({name: frame[ekfac] / frame[kfac] for name, (ekfac, kfac) in columns.items()}).set_index(
        frame["step"])


def error_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per method: time-averaged relative error (mean over the logged steps, which are equally spaced) over
    the block diagonal and against the full F, and the mean drift over a recompute interval."""
    methods = list(METHOD_LABELS)
    return pd.DataFrame({"time_average": [frame[f"{m}_error"].mean() for m in methods],
                         "time_average_full": [frame[f"{m}_error_full"].mean() for m in methods],
                         "drift": [recompute_drift(frame, m) for m in methods]}, index=methods)


# --- Figs 4.3-4.6, A.1-A.5: training with KFAC, EKFAC, EKFAC-ra and first-order baselines ---
#
# A group (the auto-encoder of Figs 4.3-4.4; the CNNs of 4.5-4.6, A.1-A.5) names its optimisers, each
# either curvature-based ({"method": kfac | ekfac | ekfac_ra, "freq": recompute every freq steps}) or
# first-order ({"name": sgd | adam, ...torch keywords}); a run is one optimiser at one (η, ε) point and
# one batch size. The hyper-parameter search (the (η, ε) grid plus random points around each grid
# point) is laid out here; the per-epoch envelopes and the selections are done here too, on the runs'
# per-epoch rows, never in training (the thesis's curves are per-epoch envelopes over the searched
# hyper-parameters, not single runs).

CURVATURE_METHODS = ("kfac", "ekfac", "ekfac_ra")
OPTIMISER_LABELS = {"ekfac": "EKFAC", "ekfac_ra": "EKFAC-ra", "kfac": "KFAC", "sgd": "SGD", "sgd_bn": "SGD + BN",
                    "adam_bn": "Adam + BN", "adam": "Adam"}


def uses_curvature(optimiser: dict) -> bool:
    return "method" in optimiser


def search_points(spec: dict, optimiser: str) -> list[dict]:
    """The (η, ε) points searched for one optimiser: the grid, then ``random_points`` log-uniform draws
    within ``random_spread`` decades of each grid point (thesis: 20 around each), rounded to 3 significant
    digits so that run names are stable, each point once. First-order optimisers have no ε: their grid is
    η alone."""
    curvature = uses_curvature(spec["optimisers"][optimiser])
    dampings = spec["grid"]["damping"] if curvature else [None]
    grid = [(lr, damping) for lr in spec["grid"]["lr"] for damping in dampings]
    points = list(grid)
    for index, (lr, damping) in enumerate(grid):
        rng = np.random.default_rng([spec["seed"], zlib.crc32(optimiser.encode()), index])
        for _ in range(spec.get("random_points", 0)):
            points.append((_near(lr, rng, spec["random_spread"]),
                           None if damping is None else _near(damping, rng, spec["random_spread"])))
    # a draw that rounds onto a point already searched is that run: searched once
    return [{"lr": lr, "damping": damping} for lr, damping in dict.fromkeys(points)]


def _near(value: float, rng: np.random.Generator, decades: float) -> float:
    return float(f"{value * 10 ** rng.uniform(-decades, decades):.3g}")


def run_name(run: dict) -> str:
    """E.g. ekfac_f50_bs100_lr0.01_eps0.001 (sgd_bn_bs100_lr0.1; a schedule adds _halve5)."""
    point = [f"lr{run['lr']:g}"] + ([f"eps{run['damping']:g}"] if run.get("damping") is not None else [])
    return "_".join([*_setting_parts(run), *point, *_schedule_parts(run)])


def _setting_parts(run: dict) -> list[str]:
    return [run["optimiser"], *([f"f{run['freq']}"] if run.get("freq") is not None else []), f"bs{run['batch_size']}"]


def _schedule_parts(run: dict) -> list[str]:
    return [f"halve{run['halve_every']}"] if run.get("halve_every") else []


def search_runs(spec: dict) -> list[dict]:
    """Every run of a group's search: each optimiser at each of its batch sizes (its own ``batch_sizes``, or
    the group's) at each of its points, with a constant η and, when the group has ``halve_every``, again
    at the optimiser's first batch size with η halved every that many epochs."""
    schedules = [None] + ([spec["halve_every"]] if spec.get("halve_every") else [])
    runs = []
    for optimiser, settings in spec["optimisers"].items():
        sizes = settings.get("batch_sizes", spec["batch_sizes"])
        for batch_size in sizes:
            for halve_every in schedules if batch_size == sizes[0] else [None]:
                for point in search_points(spec, optimiser):
                    runs.append({"optimiser": optimiser, "batch_size": batch_size, **point,
                                 "freq": settings.get("freq"), "halve_every": halve_every})
    return runs


def jobs_of(runs: list[dict], one_job_per: str) -> dict[str, list[dict]]:
    """Runs grouped into jobs: one job per run ("run", paper scale: each run its own resumable job), or
    one per optimiser, all its batch sizes and schedules ("optimiser", quick scale: a job's start-up
    costs more than a run)."""
    if one_job_per not in ("run", "optimiser"):
        raise ValueError(f"one_job_per must be 'run' or 'optimiser', got {one_job_per!r}")
    jobs: dict[str, list[dict]] = {}
    for run in runs:
        name = run_name(run) if one_job_per == "run" else "_".join(_setting_parts(run)[:-1])
        jobs.setdefault(name, []).append(run)
    return jobs


def search_jobs(spec: dict) -> dict[str, list[dict]]:
    return jobs_of(search_runs(spec), spec["one_job_per"])


RUN_KEYS = ("dataset", "task", "model", "epochs", "seed", "conv_factors")


def training_group_settings(spec: dict, optimisers) -> dict:
    """What a group's runs depend on (a job's params: editing anything else of the group reruns none)."""
    return {**{key: spec[key] for key in RUN_KEYS if key in spec},
            "optimisers": {name: spec["optimisers"][name] for name in optimisers}}


def search_job_settings(spec: dict, runs: list[dict]) -> dict:
    """A search job's params: its runs, and the group's settings they depend on."""
    return {"settings": training_group_settings(spec, {run["optimiser"] for run in runs}), "runs": runs}


def selected_run_settings(spec: dict, optimiser: str, tracked: bool = False) -> dict:
    """A selected run's settings: what the optimiser's runs depend on, the batch sizes the selection is
    made at and, for the tracked run of Fig 4.4c, its tracking."""
    return {**training_group_settings(spec, [optimiser]), "batch_sizes": spec["batch_sizes"],
            **({"spectrum": spec["spectrum"]} if tracked else {})}


def selection_batch_size(spec: dict) -> int:
    """The batch size of the search at which Fig 4.4's hyper-parameters are selected: the first."""
    return spec["batch_sizes"][0]


def frequency_runs(spec: dict) -> list[tuple[str, int]]:
    """Fig 4.4's (optimiser, freq) runs beyond the search's own frequency (those are read from the search)."""
    return [(optimiser, freq) for optimiser, freqs in spec.get("frequencies", {}).items() for freq in freqs]


def selected_run(search: pd.DataFrame, spec: dict, optimiser: str, freq: int | None = None) -> dict:
    """``optimiser``'s selected run (``selected_point`` at the selection batch size), at ``freq`` if given."""
    batch_size = selection_batch_size(spec)
    settings = spec["optimisers"][optimiser]
    return {"optimiser": optimiser, "batch_size": batch_size, **selected_point(search, optimiser, batch_size),
            "freq": freq if freq is not None else settings.get("freq")}


def read_runs(paths: list[str]) -> pd.DataFrame:
    """The per-epoch rows of runs (one CSV per job), concatenated."""
    return pd.concat([pd.read_csv(path) for path in paths], ignore_index=True)


def envelope(frame: pd.DataFrame, by: str = "optimiser", column: str = "train_loss") -> pd.DataFrame:
    """Per ``by`` group and epoch, the run with the lowest ``column`` at that epoch (the thesis's "hyper-
    parameters reaching the lowest training loss for each epoch"): its row (the loss, the run's name, its
    cumulative training seconds and step). Diverged evaluations (non-finite losses) are left out."""
    finite = frame[np.isfinite(frame[column])].reset_index(drop=True)
    best = finite.loc[finite.groupby([by, "epoch"])[column].idxmin()]
    return best.sort_values([by, "epoch"]).reset_index(drop=True)


def time_envelope(frame: pd.DataFrame, by: str = "optimiser", column: str = "train_loss") -> pd.DataFrame:
    """Per ``by`` group, the best of its runs at each training time: at each time a run logged, the lowest
    of every run's latest ``column`` by then, each run on its own clock (the per-second panels; an
    epoch's envelope read at its run's time would let time run backwards). Rows: ``by``, seconds, the
    value, and the run holding it; diverged evaluations left out."""
    finite = frame[np.isfinite(frame[column])]
    parts = []
    for group, rows in finite.groupby(by, sort=False):
        wide = rows.pivot_table(index="seconds", columns="run", values=column, aggfunc="last").ffill()
        parts.append(pd.DataFrame({by: group, "seconds": wide.index, column: wide.min(axis=1).to_numpy(),
                                   "run": wide.idxmin(axis=1).to_numpy()}))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=[by, "seconds", column, "run"])


def stalled(losses: pd.Series, tail_share: float = 0.5, tolerance: float = 0.01) -> bool:
    """Whether a loss curve (in epoch order) fell by less than ``tolerance`` of its value over its last
    ``tail_share`` of epochs: a run sitting on a plateau it never leaves."""
    values = losses.dropna().to_numpy()
    if len(values) < 3:
        return False
    start = values[int(len(values) * (1 - tail_share))]
    return bool(start - values[-1] < tolerance * abs(start))


def best_validation_runs(frame: pd.DataFrame, column: str = "val_loss", by: str = "optimiser") -> pd.DataFrame:
    """Per ``by`` group, the rows of the run with the best overall validation ``column`` (its minimum over
    epochs): what the thesis's validation panels show."""
    finite = frame[np.isfinite(frame[column])].reset_index(drop=True)
    best_run = finite.loc[finite.groupby(by)[column].idxmin(), "run"]
    return frame[frame["run"].isin(best_run)].sort_values([by, "epoch"]).reset_index(drop=True)


def final_losses(frame: pd.DataFrame) -> pd.DataFrame:
    """Each run's last evaluated row (its final training loss, or the loss it diverged at)."""
    return frame.sort_values("epoch").groupby("run").tail(1).set_index("run")


def selected_point(frame: pd.DataFrame, optimiser: str, batch_size: int) -> dict:
    """The (η, ε) of ``optimiser``'s run at ``batch_size`` with the lowest final training loss among runs
    that finished: the hyper-parameters Fig 4.4 trains at other frequencies (the thesis does not say
    which; the best of Fig 4.3's search per optimiser)."""
    finals = final_losses(frame)
    candidates = finals[(finals["optimiser"] == optimiser) & (finals["batch_size"] == batch_size)
                        & (finals["ended"] == "finished") & np.isfinite(finals["train_loss"])]
    if candidates.empty:
        raise ValueError(f"no finished run of {optimiser} at batch size {batch_size} to select from")
    best = candidates.loc[candidates["train_loss"].idxmin()]
    damping = best["damping"]
    return {"lr": float(best["lr"]), "damping": None if pd.isna(damping) else float(damping)}


def envelope_wins(envelopes: pd.DataFrame, method: str, baseline: str, column: str = "train_loss") -> tuple[int, int]:
    """(epochs where ``method``'s envelope is below ``baseline``'s, epochs both have)."""
    wide = envelopes.pivot(index="epoch", columns="optimiser", values=column)[[method, baseline]].dropna()
    return int((wide[method] < wide[baseline]).sum()), len(wide)


def loss_by_time(envelopes: pd.DataFrame, seconds: float, column: str = "train_loss",
                 by: str = "optimiser") -> pd.Series:
    """Per group, the lowest envelope loss reached within ``seconds`` of training."""
    within = envelopes[envelopes["seconds"] <= seconds]
    return within.groupby(by)[column].min()


def common_time(envelopes: pd.DataFrame, by: str = "optimiser") -> float:
    """The longest training time every group's envelope covers."""
    return float(envelopes.groupby(by)["seconds"].max().min())


def final_by_setting(frame: pd.DataFrame) -> pd.Series:
    """Final training loss per (optimiser, freq) of single-run curves (the frequency runs)."""
    finals = final_losses(frame.dropna(subset=["train_loss"]))
    return finals.set_index(["optimiser", "freq"])["train_loss"]


def relative_distances(tracked: pd.DataFrame) -> pd.DataFrame:
    """Fig 4.4c's distances over ‖λ(G)‖ at each tracked step."""
    tracked = tracked.dropna(subset=["kfac_distance"])
    return pd.DataFrame({method: tracked[f"{method}_distance"] / tracked["spectrum_norm"]
                         for method in CURVATURE_METHODS}).set_index(tracked["step"])


# --- Figs 4.5-4.6, A.1-A.5: curves of (optimiser, batch size) settings ---

def setting_envelopes(frame: pd.DataFrame, settings: list[tuple[str, int]], scheduled: bool = False,
                      column: str = "train_loss", over_time: bool = False) -> pd.DataFrame:
    """The per-epoch envelope (``over_time``: ``time_envelope``) of each (optimiser, batch size) setting,
    over the runs with a constant η or (``scheduled``) with the halving schedule; a ``setting`` column
    names it, e.g. "KFAC, batch 64"."""
    schedule = frame["halve_every"].notna() if "halve_every" in frame else pd.Series(False, index=frame.index)
    parts = []
    for optimiser, batch_size in settings:
        chosen = frame[(frame["optimiser"] == optimiser) & (frame["batch_size"] == batch_size)
                       & (schedule == scheduled)]
        if not chosen.empty:
            best = time_envelope(chosen, column=column) if over_time else envelope(chosen, column=column)
            parts.append(best.assign(setting=f"{OPTIMISER_LABELS.get(optimiser, optimiser)}, batch {batch_size}",
                                     batch_size=batch_size))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def main_settings(spec: dict) -> list[tuple[str, int]]:
    """Figs 4.5-4.6's curves: every optimiser at its first batch size, then the group's ``also_show``."""
    settings = [(name, opt.get("batch_sizes", spec["batch_sizes"])[0]) for name, opt in spec["optimisers"].items()]
    return settings + [tuple(pair) for pair in spec.get("also_show", [])]


def batch_size_settings(spec: dict, optimisers=("kfac", "ekfac")) -> list[tuple[str, int]]:
    """Figs A.1-A.3's curves: KFAC and EKFAC at each of their batch sizes."""
    return [(name, size) for name in optimisers if name in spec["optimisers"]
            for size in spec["optimisers"][name].get("batch_sizes", spec["batch_sizes"])]


def mean_log_gain_per_step(envelopes: pd.DataFrame, method: str, baseline: str, steps: np.ndarray) -> float:
    """Mean over ``steps`` (iterations) of log(baseline's envelope loss / method's), each envelope's log loss
    interpolated between its logged steps: the per-iteration comparison of settings logged at different steps."""
    def log_loss(setting):
        rows = envelopes[envelopes["setting"] == setting].sort_values("step")
        return np.interp(steps, rows["step"], np.log(rows["train_loss"]))
    return float(np.mean(log_loss(baseline) - log_loss(method)))


def mean_log_gain(envelopes: pd.DataFrame, method: str, baseline: str) -> float:
    """Mean over the epochs ≥ 1 both settings reach of log(baseline's envelope loss / method's): > 0 when
    ``method`` is lower on average (how much, in e-folds)."""
    wide = envelopes[envelopes["epoch"] >= 1].pivot_table(index="epoch", columns="setting", values="train_loss")
    both = wide[[method, baseline]].dropna()
    return float(np.log(both[baseline] / both[method]).mean()) if len(both) else float("nan")
