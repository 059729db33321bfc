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


def best_accuracies(runs: pd.DataFrame) -> pd.DataFrame:
    """Per run, the best test accuracy over its scheduled evaluations ("optimal early stopping",
    selected on the test set as the paper does): the linearised model's for K = ∞ (the network at
    θ₀ + δ is meaningless after long linear training), the network's otherwise."""
    points = scheduled(runs)
    column = np.where(points["K"].astype(str) == "inf", points["test_accuracy_linearised"],
                      points["test_accuracy_network"])
    points = points.assign(best_accuracy=column)
    best = points.groupby(["setting", "seed", "K", "lr", "n_train"], as_index=False)["best_accuracy"].max()
    return best.assign(test_error=1 - best["best_accuracy"], curve=[f"{k_label(k)}, lr {lr:g}" for k, lr in
                                                                    zip(best["K"], best["lr"])])


def scaling_slope(best: pd.DataFrame) -> float:
    """Slope of log(test error) against log(n), over the seed means."""
    mean = best.groupby("n_train")["test_error"].mean()
    return float(np.polyfit(np.log(mean.index.to_numpy(float)), np.log(mean.to_numpy()), 1)[0])


def kept_runs(summary: pd.DataFrame, train_rmse_limit: float) -> pd.DataFrame:
    """The runs the paper plots: finite, with train RMSE at most the limit."""
    return summary[summary["finite"] & (summary["train_rmse"] <= train_rmse_limit)]
