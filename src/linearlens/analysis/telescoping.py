"""Summaries of finished runs that plots and claims share: pandas and numpy only, so the report
environment (no torch) can read results through them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .records import last_records


def final_by_width(runs: pd.DataFrame) -> pd.DataFrame:
    """The last record of every (width, seed) run of a width sweep, with its width."""
    last = last_records(runs, ["setting", "seed"]).copy()
    last["width"] = last["setting"].str.removeprefix("width").astype(int)
    return last.sort_values("width")


# What each width sweep's top panel plots, as the paper does: MSE in Figs 3 and 10, the 0-1
# error in Fig 9 ("no double descent in error"; "train and test error monotonically improve").
DOUBLE_DESCENT_METRIC = {"dd_cifar_catdog": "mse", "dd_mnist_noisy": "error", "dd_mnist_clean": "error",
                         "dd_mnist1d": "mse"}


def double_descent_metric(family: str, final: pd.DataFrame) -> str:
    """"mse" or "error": the family's metric, MSE where the records have no 0-1 error."""
    metric = DOUBLE_DESCENT_METRIC.get(family, "mse")
    recorded = all(column in final and final[column].notna().all() for column in (f"train_{metric}", f"test_{metric}"))
    return metric if recorded else "mse"


def interpolation_width(final: pd.DataFrame) -> float:
    """The width at which the parameter count reaches the number of training points (p ≈ n),
    interpolated on a log scale between the swept widths."""
    by_width = final.groupby("width")[["parameters", "n_train"]].first()
    widths = by_width.index.to_numpy(dtype=float)
    return float(np.exp(np.interp(np.log(by_width["n_train"].iloc[0]),
                                  np.log(by_width["parameters"].to_numpy(dtype=float)), np.log(widths))))


def relative_mse(mse_network: dict[float, float], mse_boosting: dict[float, float]) -> dict[float, float]:
    """R_MSE(p) = (MSE^p_NN − MSE^p_GBT) / (MSE^0_NN − MSE^0_GBT); 1 at p = 0 by construction."""
    base = mse_network[0.0] - mse_boosting[0.0]
    return {p: (mse_network[p] - mse_boosting[p]) / base for p in mse_network}


def relative_mse_table(runs: pd.DataFrame) -> pd.DataFrame:
    """R_MSE(p) of the network against each boosting library, per (panel, seed): columns panel,
    seed, library, p, r_mse."""
    records = []
    for (panel, seed), run in runs.groupby(["panel", "seed"]):
        mse = run.drop_duplicates(["model", "p"]).set_index(["model", "p"])["mse"]
        network = mse["network"].to_dict()
        for library in sorted(set(run["model"]) - {"network"}):
            for p, ratio in relative_mse(network, mse[library].to_dict()).items():
                records.append({"panel": panel, "seed": seed, "library": library, "p": p, "r_mse": ratio})
    return pd.DataFrame.from_records(records)
