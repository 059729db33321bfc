"""Analysis for Chapter 4 (EKFAC) and appendix A. Torch-free summaries (pandas and numpy only) behind Fig 4.2
(gradient correlations in the KFE; KFAC vs EKFAC error against the exact Fisher), Figs 4.3-4.6 and A.1-A.5
(training with KFAC and EKFAC: auto-encoder, VGG11, ResNet34). Issue 26 fills Fig 4.2, issue 27 Figs 4.3-4.6
and A.1-A.5. Fig 4.1 (cartoon of the rescalings) is a drawing, in the figures module only."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

# --- Fig 4.2: KFAC and EKFAC against the exact empirical Fisher along an SGD trajectory ---

CLASSIFIER_RUNS = "results/george_thesis/runs/ch4/mlp_classifier"
METHOD_LABELS = {"kfac": "KFAC (amortised)", "ekfac": "EKFAC (s* on the current minibatch)",
                 "ekfac_probe": "EKFAC, s* on F's probe (Thm A.2.1's optimum)"}


def mlp_classifier_paths() -> dict[str, str]:
    return {"errors": f"{CLASSIFIER_RUNS}/errors.csv", "correlations": f"{CLASSIFIER_RUNS}/correlations.npz"}


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
