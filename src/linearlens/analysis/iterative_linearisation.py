"""Summaries of iterative-linearisation runs that its figures and claims share (pandas and numpy
only): K as a label and a number, the scheduled evaluations, Fig 5's best accuracies and scaling
slope, Fig 8's roles of the runs, Fig 9's kept runs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .records import read_runs


def read_records(paths) -> pd.DataFrame:
    """Run or probe records, K kept as written ("1", "800", "inf")."""
    return read_runs(paths, dtype={"K": str})


def k_label(k) -> str:
    k = str(k)
    if k == "inf":
        return "K = ∞"
    value = int(k)
    return f"K = {value:,}" if value < 10_000 else f"K = {value:.0e}".replace("e+0", "e")


def k_value(k) -> float:
    return float("inf") if str(k) == "inf" else float(k)


def scheduled(runs: pd.DataFrame) -> pd.DataFrame:
    """The evaluations of the paper's schedule (not the extra ones around re-linearisations)."""
    return runs[runs["point"] == "scheduled"]


def adam_roles(runs: pd.DataFrame) -> dict[str, str]:
    """Which setting is the K = 1 SGD baseline, the IL-Adam run and plain Adam (K = 1 with Adam)."""
    settings = runs.groupby("setting")[["K", "optimiser"]].first()
    roles = {}
    for setting, (k, optimiser) in settings.iterrows():
        if str(k) != "1":
            roles["il_adam"] = setting
        elif optimiser == "adam":
            roles["adam"] = setting
        else:
            roles["sgd"] = setting
    return roles


def optimised_column(k, split: str = "train") -> str:
    """The accuracy column of the model a run optimises: the linearised model for K = ∞ (its
    network at θ₀ + δ is not what is trained), the network otherwise."""
    return f"{split}_accuracy_linearised" if str(k) == "inf" else f"{split}_accuracy_network"


def run_outcomes(runs: pd.DataFrame, fitted: float, settled_within: float = 0.01) -> pd.DataFrame:
    """Per run (setting, seed): K, lr, n_train, its last step, and how it ended: ``diverged``;
    ``converged``, trained until its optimised model fits at least ``fitted`` of the training set
    (at the last scheduled evaluation); ``settled``, its best test accuracy no longer rising (the
    last quarter of its evaluations improve on the best before by under ``settled_within``)."""
    rows = []
    for (setting, seed), run in scheduled(runs).sort_values("step", kind="stable").groupby(["setting", "seed"]):
        k, last = run["K"].iloc[0], run.iloc[-1]
        test = run[optimised_column(k, "test")].to_numpy()
        split = max(1, len(test) - max(1, len(test) // 4))
        diverged = bool(runs.loc[(runs["setting"] == setting) & (runs["seed"] == seed), "diverged"].any())
        rows.append({"setting": setting, "seed": seed, "K": k, "lr": last["lr"], "n_train": last["n_train"],
                     "step": int(last["step"]), "train_accuracy": float(last[optimised_column(k)]),
                     "diverged": diverged, "converged": not diverged and last[optimised_column(k)] >= fitted,
                     "settled": not diverged and test[split:].max() - test[:split].max() < settled_within})
    return pd.DataFrame(rows)


def best_accuracies(runs: pd.DataFrame) -> pd.DataFrame:
    """Per run, the best test accuracy over its scheduled evaluations ("optimal early stopping",
    selected on the test set as the paper does): the linearised model's for K = ∞ (the network at
    θ₀ + δ is meaningless after long linear training), the network's otherwise."""
    points = scheduled(runs)
    column = np.where(points["K"].astype(str) == "inf", points["test_accuracy_linearised"],
                      points["test_accuracy_network"])
    points = points.assign(best_accuracy=column)
    best = points.groupby(["setting", "seed", "K", "lr", "n_train"], as_index=False)["best_accuracy"].max()
    diverged = runs.groupby(["setting", "seed"])["diverged"].any()
    best["diverged"] = [bool(diverged[(s, seed)]) for s, seed in zip(best["setting"], best["seed"])]
    return best.assign(test_error=1 - best["best_accuracy"], curve=[f"{k_label(k)}, lr {lr:g}" for k, lr in
                                                                    zip(best["K"], best["lr"])])


def scaling_slope(best: pd.DataFrame) -> float:
    """Slope of log(test error) against log(n), over the seed means."""
    mean = best.groupby("n_train")["test_error"].mean()
    return float(np.polyfit(np.log(mean.index.to_numpy(float)), np.log(mean.to_numpy()), 1)[0])


def kept_runs(summary: pd.DataFrame, train_rmse_limit: float) -> pd.DataFrame:
    """The runs the paper plots: finite, with train RMSE at most the limit."""
    return summary[summary["finite"] & (summary["train_rmse"] <= train_rmse_limit)]
