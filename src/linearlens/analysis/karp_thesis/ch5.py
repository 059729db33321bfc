"""Chapter 5 and Appendix C, landscape-aware growing of language models: how the runs are cut into
jobs and read, and the summaries behind Figs 5.2-5.4 and Tables 5.1, 5.2, C.2 (torch-free: numpy,
pandas, scipy). Fig 5.1 is a drawing, in figures.karp_thesis.ch5.

A **growth run** (one per growing setting and seed) is one pretrained model
grown by every operator of the setting's space, each grown model trained the same number of steps
on the same batches. Its arrays:

- ``operator`` (G,) str: the operator's id, ``start{s}-b{b}-{init}`` (start 0-indexed, as the thesis's {0, 2, 4, 6, 8})
- ``start`` (G,) int, ``block_size`` (G,) int, ``init`` (G,) str in {"random", "duplicate"}
- ``steps`` (S,) int: the steps after growing at which the validation loss was measured (sorted:
  the window 0..window_end every ``window_every`` steps, continued ``smoothing // 2`` points past
  it for the centred smoothing, the lag steps and the final step)
- ``loss`` (G, S) float: validation loss of each grown model at each of those steps
- ``pre_growth_loss`` (): the pretrained model's validation loss at the moment of growing
- ``settings`` (): a JSON string: the setting as configured (name, objective, layers, grown layers,
  window_end, window_every, lag, lag_k, smoothing, final step, ...) and the data it was made from

A **stacking run** trains the same deep model in stages by last stacking
and by adaptive stacking (LAG@k per stage). Its arrays:

- ``strategy`` (2,) str: "adaptive", "last"
- ``stage_layers`` (n,) int: the depth of each stage
- ``chosen`` (2, n) str: the operator each strategy grew with at the start of each stage ("" for
  the first stage's freshly initialised model)
- ``candidates`` (n,) int: how many operators adaptive stacking probed at each stage
- ``stage_end_loss`` (2, n) float: validation loss at the end of each stage; the last is the final
- ``settings`` (): a JSON string, as above

Decisions where the thesis is silent (this project's choices): smoothing is a centred moving average over the
window's grid, truncated at the start (no pre-growth values) but full at the window's end
(the runs record the grid past it), and is applied to the window's
curves only (Figs 5.3, 5.4, Recall@k, regret); Fig 5.2 and LAG@k read raw losses. LAG@k reads the
loss at the first recorded step ≥ k. Every argmin (G*, G^i, a LAG pick) and every ranking for
Recall@k breaks ties by the run's operator order. A correlation over a constant column is NaN;
relative regret is 0 when all final losses are equal.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
from scipy import stats

from ...growth.operators import operator_space


def growth_operator_names(setting: dict) -> list[str]:
    return [op.name for op in operator_space(setting["grown_layers"], setting["starts"], setting["block_sizes"],
                                             setting["inits"])]


def growth_parts(setting: dict) -> list[str]:
    """The jobs a growth run is cut into: one per operator, or one for all."""
    return growth_operator_names(setting) if setting["one_job_per"] == "operator" else ["all"]


def part_operators(setting: dict, part: str) -> list[str]:
    return growth_operator_names(setting) if part == "all" else [part]


# What each job's params hold, so that a result reruns when what it depends on changes and for
# nothing else: pretraining ignores the growing window; no run reads the analysis-only keys.
PRETRAINING_KEYS = ("objective", "dataset", "model", "optimiser", "warmup_steps", "decay", "batch_size",
                    "validation_batches", "layers", "pretrain_steps")
ANALYSIS_ONLY_KEYS = ("document_setting", "proxy", "seeds", "one_job_per", "checkpoint")
# How a job fits its device, not what it computes: a job's own param, so changing it reruns nothing.
MEMORY_KEYS = ("micro_batch_size",)


def pretraining_setting(setting: dict) -> dict:
    return {key: setting[key] for key in PRETRAINING_KEYS}


def growing_run_setting(setting: dict) -> dict:
    return {key: value for key, value in setting.items() if key not in ANALYSIS_ONLY_KEYS + MEMORY_KEYS}


def stacking_run_setting(spec: dict) -> dict:
    return {key: value for key, value in spec.items() if key not in ("seeds",) + MEMORY_KEYS}


def read_run(path: str) -> dict:
    """A growth or stacking run's arrays by name, with its settings decoded under ``settings``."""
    with np.load(path, allow_pickle=False) as contents:
        record = {key: contents[key] for key in contents.files}
    record["settings"] = json.loads(str(record["settings"]))
    return record


# --- the thesis's numbers (Figs 5.2-5.4, Tables 5.1, 5.2, C.1) ----------------------------------

THESIS_FIG_5_2 = {"growth": {"pearson": -0.515, "spearman": -0.418},  # loss at 500k vs at 600k
                  "lag": {"pearson": 0.982, "spearman": 0.986}}  # loss at 505k vs at 600k
THESIS_FIG_5_3 = {"transition_step": 50, "start_correlation_below": -0.4, "end_correlation": 0.8,
                  "start_relative_regret": 0.8}  # Sec 5.3.3, read off the figure and the text
THESIS_FIG_5_4 = {"transition_step": 1000}  # UL2, Sec 5.4.1
# Tables 5.1, 5.2: (strategy, final validation loss, regret, relative regret), rows in STRATEGIES order.
THESIS_TABLE_5_1 = (("Oracle", 1.7461, 0.0, 0.0), ("LAG@200", 1.7461, 0.0, 0.0),
                    ("Best at initialization (LAG@0)", 1.7875, 0.0414, 0.7986),
                    ("Stack last block on top", 1.7747, 0.0286, 0.5517),
                    ("Stack random block on top", 1.7875, 0.0414, 0.7986))
THESIS_TABLE_5_2 = (("Oracle", 2.1254, 0.0, 0.0), ("LAG@2000", 2.1268, 0.0014, 0.0895),
                    ("Best at initialization (LAG@0)", 2.1398, 0.0144, 0.9202),
                    ("Stack last block on top", 2.1357, 0.0103, 0.6582),
                    ("Stack random block on top", 2.1398, 0.0144, 0.9202))
# Table C.1 (UL2 downstream, 1-shot): TyDi QA (en) EM, TriviaQA EM, LAMBADA accuracy; no proxy here.
THESIS_TABLE_C_1 = {"Oracle": (28.18, 13.84, 8.32), "LAG@2000": (25.23, 13.44, 7.60),
                    "Best at initialization (LAG@0)": (21.82, 12.19, 6.89),
                    "Stack last block on top": (21.59, 12.39, 6.90),
                    "Stack random block on top": (21.82, 12.19, 6.89)}
THESIS_TABLE_C_2 = {"Adaptive stacking": 1.5301, "Last stacking": 1.5432}
THESIS_SETTINGS = {  # steps counted from growing, as the runs count them
    "bert": {"document_setting": "BERT-BASE 12 → 16", "grown_at": 500_000, "train_steps": 100_000, "lag": 5_000,
             "lag_k": 200, "window_end": 200, "window_every": 1, "smoothing": 11},
    "ul2": {"document_setting": "UL2 decoder-only 12 → 16", "grown_at": 300_000, "train_steps": 100_000,
            "lag_k": 2_000, "window_end": 2_000, "window_every": 100, "smoothing": 1},
}


# --- reading a growth run ----------------------------------------------------------------------

def smoothed(loss, window: int) -> np.ndarray:
    """A centred moving average of ``window`` points along the last axis, truncated at the edges:
    each point averages the recorded points within ``window // 2`` of it that exist (the thesis
    does not say how it treats the edges). ``window`` must be odd so that the average is centred; 1
    leaves ``loss`` unchanged."""
    loss = np.asarray(loss, dtype=float)
    if window < 1 or window % 2 == 0:
        raise ValueError(f"the smoothing window must be a positive odd number of points, not {window}")
    half, count = window // 2, loss.shape[-1]
    totals = np.concatenate([np.zeros(loss.shape[:-1] + (1,)), np.cumsum(loss, axis=-1)], axis=-1)
    low = np.clip(np.arange(count) - half, 0, count)
    high = np.clip(np.arange(count) + half + 1, 0, count)
    return (totals[..., high] - totals[..., low]) / (high - low)


def recorded_step(run: dict, step: int) -> int:
    """The first recorded step at or after ``step`` (LAG@k reads the loss there when k itself was not
    recorded, e.g. between the UL2-like setting's every-5-steps evaluations)."""
    later = run["steps"][run["steps"] >= step]
    if not len(later):
        raise ValueError(f"no step at or after {step} was recorded (last {int(run['steps'][-1])})")
    return int(later[0])


def loss_at(run: dict, step: int) -> np.ndarray:
    """(G,) raw validation losses at ``recorded_step(run, step)``."""
    return run["loss"][:, int(np.searchsorted(run["steps"], recorded_step(run, step)))]


def final_step(run: dict) -> int:
    final = int(run["settings"]["train_steps"])
    if final not in run["steps"]:
        raise ValueError(f"the run has no loss at its final step {final}")
    return final


def final_losses(run: dict) -> np.ndarray:
    """(G,) validation losses at the final step, ``train_steps`` after growing."""
    return loss_at(run, final_step(run))


def window_losses(run: dict, smooth: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The window's steps (W,) (the every-``window_every`` grid up to window_end) and their (G, W)
    losses, smoothed by the run's ``smoothing`` unless ``smooth`` is False. The run records the grid
    ``smoothing // 2`` points past window_end, so the last points average a full centred window as
    the thesis's could (it measured every step); only the first points, which have no pre-growth
    values to average, average fewer (the thesis does not say how it treats the edges)."""
    settings = run["settings"]
    every, window = int(settings["window_every"]), int(settings["smoothing"]) if smooth else 1
    grid = (run["steps"] % every == 0) & (run["steps"] <= settings["window_end"] + (window // 2) * every)
    steps, loss = run["steps"][grid], run["loss"][:, grid]
    inside = steps <= settings["window_end"]
    return steps[inside], smoothed(loss, window)[:, inside]


def final_ranking_noise(run: dict, last: int = 10) -> dict[str, float]:
    """How far apart the operators end, against how much one operator moves about the others: the
    spread (std across operators) of the final losses' deviations from their mean, and the noise, the
    median over operators of the std of that deviation over the last ``last`` recorded steps before
    the final one. A final spread below the noise is a ranking one batch can reorder."""
    deviation = run["loss"] - run["loss"].mean(axis=0)
    final = int(np.searchsorted(run["steps"], final_step(run)))
    return {"spread": float(deviation[:, final].std()),
            "noise": float(np.median(deviation[:, max(final - last, 0):final].std(axis=1)))}


# --- correlations, Recall@k, regret (Sec 5.3) --------------------------------------------------

def correlations(x, y) -> dict[str, float]:
    """Pearson and Spearman correlation across operators (NaN where either side is constant)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on constant input and returns NaN
        return {"pearson": float(stats.pearsonr(x, y)[0]), "spearman": float(stats.spearmanr(x, y)[0])}


def _standardised_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks along the operator axis (0; ties averaged), centred and scaled to unit norm, so that the
    dot product of two columns is their Spearman correlation (NaN for a constant column)."""
    ranks = stats.rankdata(values, axis=0)
    ranks = ranks - ranks.mean(axis=0)
    with np.errstate(all="ignore"):
        return ranks / np.linalg.norm(ranks, axis=0)


def spearman_heatmap(window_loss: np.ndarray) -> np.ndarray:
    """(W, W): H[i, j] = Spearman over operators between the losses at window steps i and j."""
    ranks = _standardised_ranks(window_loss)
    return ranks.T @ ranks


def correlation_with_final(window_loss: np.ndarray, final: np.ndarray) -> np.ndarray:
    """(W,): Spearman over operators between the losses at each window step and the final losses."""
    return _standardised_ranks(final[:, None])[:, 0] @ _standardised_ranks(window_loss)


def step_picks(window_loss: np.ndarray) -> np.ndarray:
    """(W,): G^i, the operator with the lowest loss at each step (ties: the first in operator order)."""
    return np.argmin(window_loss, axis=0)


def recall_at_k(window_loss: np.ndarray, final: np.ndarray, ks=(1, 2, 3)) -> np.ndarray:
    """(len(ks), W) 0/1: whether G* = argmin final is among the k lowest losses at each step. Ties,
    in the final losses and at a step, go to the first operator in the run's order."""
    best = int(np.argmin(final))
    order = np.argsort(window_loss, axis=0, kind="stable")
    position = np.argmax(order == best, axis=0)  # G*'s place in each step's ranking
    return np.array([(position < k).astype(int) for k in ks])


def regret(window_loss: np.ndarray, final: np.ndarray) -> np.ndarray:
    """(W,): l(G^i) − l_min, eq. 5.1."""
    return final[step_picks(window_loss)] - final.min()


def relative_regret(window_loss: np.ndarray, final: np.ndarray) -> np.ndarray:
    """(W,): (l(G^i) − l_min) / (l_max − l_min), eq. 5.2 (0 where all final losses are equal)."""
    spread = final.max() - final.min()
    return regret(window_loss, final) / spread if spread > 0 else np.zeros(window_loss.shape[1])


def settled_from(steps: np.ndarray, holds: np.ndarray) -> int | None:
    """The first step from which ``holds`` is true at every later step (None if not at the last)."""
    holds = np.asarray(holds, dtype=bool)
    if not len(holds) or not holds[-1]:
        return None
    failing = np.flatnonzero(~holds)
    return int(steps[failing[-1] + 1]) if len(failing) else int(steps[0])


def phase_transition_step(steps: np.ndarray, correlation: np.ndarray, level: float) -> int | None:
    """The first window step from which the correlation with the final loss stays ≥ ``level``."""
    return settled_from(steps, np.nan_to_num(correlation, nan=-np.inf) >= level)


# --- Tables 5.1, 5.2: LAG@k against the oracle, LAG@0 and stacking on top ----------------------

STRATEGIES = ("oracle", "lag_k", "lag_0", "stack_last", "stack_random")  # the tables' row order
TABLE_COLUMNS = ["strategy", "operator", "final validation loss", "regret", "relative regret"]


def strategy_label(strategy: str, lag_k: int) -> str:
    return {"oracle": "Oracle", "lag_k": f"LAG@{lag_k}", "lag_0": "Best at initialization (LAG@0)",
            "stack_last": "Stack last block on top", "stack_random": "Stack random block on top"}[strategy]


def operator_index(run: dict, start: int, block_size: int, init: str) -> int:
    found = np.flatnonzero((run["start"] == start) & (run["block_size"] == block_size) & (run["init"] == init))
    if len(found) != 1:
        raise ValueError(f"the run has {len(found)} operators with start {start}, block {block_size}, {init}")
    return int(found[0])


def stack_on_top(run: dict, init: str) -> int:
    """Gradual stacking's operator: the last k layers (start L − k, 0-indexed) as one block, its new
    copy (or random block) on top."""
    layers, added = int(run["settings"]["layers"]), int(run["settings"]["grown_layers"])  # L and k
    return operator_index(run, layers - added, added, init)


def lag_pick(run: dict, k: int) -> int:
    """LAG@k: the lowest raw (unsmoothed) loss at the first recorded step ≥ k (ties: first operator)."""
    return int(np.argmin(loss_at(run, k)))


def strategy_picks(run: dict) -> dict[str, int]:
    """Each table row's operator (index into the run's operators)."""
    return {"oracle": int(np.argmin(final_losses(run))), "lag_k": lag_pick(run, int(run["settings"]["lag_k"])),
            "lag_0": lag_pick(run, 0), "stack_last": stack_on_top(run, "duplicate"),
            "stack_random": stack_on_top(run, "random")}


def strategy_table(run: dict) -> pd.DataFrame:
    """Table 5.1/5.2's rows (index: STRATEGIES): each strategy's operator and the final loss of its
    complete run, with regret and relative regret (eqs 5.1, 5.2) against the run's oracle."""
    final = final_losses(run)
    low, spread = final.min(), final.max() - final.min()
    rows = []
    for strategy, pick in strategy_picks(run).items():
        gap = float(final[pick] - low)
        rows.append([strategy_label(strategy, run["settings"]["lag_k"]), str(run["operator"][pick]),
                     float(final[pick]), gap, gap / spread if spread > 0 else 0.0])
    return pd.DataFrame(rows, columns=TABLE_COLUMNS, index=list(STRATEGIES))


def beside_thesis(table: pd.DataFrame, thesis_rows) -> pd.DataFrame:
    """The measured rows with the thesis's row of the same strategy beside each."""
    thesis = pd.DataFrame(list(thesis_rows), index=list(STRATEGIES),
                          columns=["thesis strategy", "thesis final validation loss", "thesis regret",
                                   "thesis relative regret"])
    return table.join(thesis)


# --- one growth run in numbers: the figures' captions and the claims ----------------------------

def growth_summary(run: dict, level: float = 0.7) -> dict:
    """The headline numbers of one run: correlations at growth and at the lag (raw losses), the
    smoothed correlation with final at the window's ends, the tables' relative regrets, and the
    steps from which Recall@1 stays 1, relative regret stays 0, the correlation stays ≥ ``level``."""
    final = final_losses(run)
    steps, window = window_losses(run)
    with_final = correlation_with_final(window, final)
    table = strategy_table(run)
    return {"seed": run["settings"]["seed"], "at_growth": correlations(loss_at(run, 0), final),
            "lag_step": recorded_step(run, run["settings"]["lag"]), "lag_k": int(run["settings"]["lag_k"]),
            "lag_k_step": recorded_step(run, run["settings"]["lag_k"]),
            "at_lag": correlations(loss_at(run, run["settings"]["lag"]), final),
            "start_correlation": float(with_final[0]), "end_correlation": float(with_final[-1]),
            "relative_regret": table["relative regret"].to_dict(),
            "recall_1_from": settled_from(steps, recall_at_k(window, final, ks=(1,))[0] == 1),
            "no_regret_from": settled_from(steps, relative_regret(window, final) == 0),
            "correlated_from": phase_transition_step(steps, with_final, level), "level": level,
            "after_lag": _correlations_after(run, final), **{f"final_{k}": v for k, v in final_ranking_noise(run).items()}}


def _correlations_after(run: dict, final: np.ndarray) -> dict[int, float]:
    """Pearson(raw loss at step, final loss) at every recorded step from the lag to before the final one."""
    steps = run["steps"][(run["steps"] >= run["settings"]["lag"]) & (run["steps"] < final_step(run))]
    return {int(step): correlations(loss_at(run, int(step)), final)["pearson"] for step in steps}


# --- Table C.2: adaptive against last stacking -------------------------------------------------

STACKING_LABELS = {"adaptive": "Adaptive stacking", "last": "Last stacking"}


def stacking_table(run: dict) -> pd.DataFrame:
    """Table C.2's rows: each strategy's final validation loss (the last stage's end) and the operator
    it grew with at each stage ("fresh" for the first stage's new model)."""
    rows = []
    for position, strategy in enumerate(run["strategy"]):
        chosen = " → ".join(str(name) or "fresh" for name in run["chosen"][position])
        rows.append([STACKING_LABELS[str(strategy)], float(run["stage_end_loss"][position, -1]), chosen])
    return pd.DataFrame(rows, columns=["strategy", "final validation loss", "operators per stage"],
                        index=[str(name) for name in run["strategy"]])


def probe_steps_total(run: dict) -> int:
    """Adaptive stacking's extra training: every probed operator trained ``probe_steps`` (n × k × s)."""
    return int(np.sum(run["candidates"]) * int(run["settings"]["probe_steps"]))
