"""Analysis for Chapter 3 (NNGeometry). Torch-free summaries (pandas and numpy only) behind Figs 3.3-3.6
(quality of diagonal, quasi-diagonal, KFAC and EKFAC Fisher approximations: solve, mv, vTMv, trace) and Fig
3.7 (two-class NTK Gram and its kernel PCA over training). Figs 3.1 (code listing) and 3.2 (schematic) are
drawings, in the figures module only."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import linprog

# The thesis's names of the approximations (NNGeometry's classes), in its order.
REPRESENTATION_NAMES = {"diag": "PMatDiag", "quasi_diag": "PMatQuasiDiag", "kfac": "PMatKFAC", "ekfac": "PMatEKFAC"}


# --- the settings each run depends on ---------------------------------------------------------

def training_spec(spec: dict) -> dict:
    """What the training run's result depends on."""
    return {key: spec[key] for key in ("dataset", "model", "dtype", "seed", "training", "checkpoints")}


def fisher_quality_spec(spec: dict) -> dict:
    return {key: spec[key] for key in ("dtype", "seed", "fisher")}


def ntk_pair_spec(spec: dict) -> dict:
    return {key: spec[key] for key in ("dtype", "ntk")}


# --- Figs 3.3-3.6: quality of the FIM approximations ----------------------------------------------

def read_json(path) -> dict:
    return json.loads(Path(path).read_text())


def read_quality(paths: list[str]) -> list[dict]:
    """The checkpoints' records, by increasing epoch."""
    return sorted((read_json(path) for path in paths), key=lambda record: record["epoch"])


PER_DIRECTION = ("vTMv_error", "mv_cos", "mv_residual")
PER_DAMPING = ("solve_cos", "solve_residual")


def quality_frame(records: list[dict]) -> pd.DataFrame:
    """One row per (epoch, representation, metric, relative λ, direction) with its value; trace
    errors have no direction, and only the solve metrics have a λ (NaN otherwise)."""
    rows = []
    for record in records:
        epoch = record["epoch"]
        for name, metrics in record["representations"].items():
            rows.append((epoch, name, "trace_error", np.nan, np.nan, metrics["trace_error"]))
            for metric in PER_DIRECTION:
                rows += [(epoch, name, metric, np.nan, j, value) for j, value in enumerate(metrics[metric])]
            for metric in PER_DAMPING:
                for damping, values in zip(record["relative_dampings"], metrics[metric]):
                    rows += [(epoch, name, metric, damping, j, value) for j, value in enumerate(values)]
    return pd.DataFrame(rows, columns=["epoch", "representation", "metric", "relative_damping", "direction", "value"])


def metric_summary(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean and standard deviation over the directions of one metric, per epoch, representation
    (and λ for the solve metrics)."""
    chosen = frame[frame["metric"] == metric]
    keys = ["epoch", "representation"] + (["relative_damping"] if metric in PER_DAMPING else [])
    return chosen.groupby(keys, sort=False)["value"].agg(["mean", "std"]).reset_index()


def solve_score(frame: pd.DataFrame) -> pd.DataFrame:
    """cos(v, v') averaged over the λ grid and the directions (the area under Fig 3.3's cos curves
    in log λ), per epoch and representation: epochs as rows, representations as columns."""
    chosen = frame[frame["metric"] == "solve_cos"]
    return chosen.groupby(["epoch", "representation"], sort=False)["value"].mean().unstack()


def mean_metric(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """A metric's mean over directions: epochs as rows, representations as columns."""
    chosen = frame[frame["metric"] == metric]
    return chosen.groupby(["epoch", "representation"], sort=False)["value"].mean().unstack()


def per_direction(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """A metric per direction v (the solve metrics averaged over the λ grid): (epoch, direction) as rows,
    representations as columns. Every representation is measured on the same v, so rows pair them."""
    chosen = frame[frame["metric"] == metric]
    return chosen.groupby(["epoch", "direction", "representation"], sort=False)["value"].mean().unstack()


def model_label(model: dict) -> str:
    """A zoo spec as a name with its settings: "resnet50, small_inputs=True"."""
    return ", ".join([model["name"]] + [f"{key}={value}" for key, value in model.items() if key != "name"])


def checkpoint_label(record: dict) -> str:
    """"epoch 3 (test acc. 91%)", the initialisation named as such."""
    name = "initialisation" if record["epoch"] == 0 else f"epoch {record['epoch']}"
    return f"{name} (test acc. {record['test_accuracy']:.0%})"


# --- Fig 3.7: the NTK of a two-class function ---------------------------------------------------

def read_npz(path) -> dict[str, np.ndarray]:
    with np.load(path) as contents:
        return {key: contents[key] for key in contents.files}


def read_pairs(paths: list[str]) -> list[dict]:
    return sorted((read_npz(path) for path in paths), key=lambda run: int(run["epoch"]))


def normalised_gram(gram: np.ndarray) -> np.ndarray:
    """G_ij / sqrt(G_ii G_jj), the thesis's display (rows and columns scaled by 1/sqrt(diag G))."""
    scale = 1.0 / np.sqrt(np.diag(gram))
    return gram * scale[:, None] * scale[None, :]


def centred(gram: np.ndarray) -> np.ndarray:
    """C G C with C = I − 11ᵀ/n."""
    return gram - gram.mean(0, keepdims=True) - gram.mean(1, keepdims=True) + gram.mean()


def kernel_pca(gram: np.ndarray, centre: bool = True, components: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """The examples' coordinates on the top principal components of the (centred) Gram, sqrt(λ_j) u_j,
    and the share of the Gram's trace each component carries."""
    matrix = centred(gram) if centre else gram
    values, vectors = np.linalg.eigh(matrix)
    top = np.argsort(values)[::-1][:components]
    lam = np.clip(values[top], 0, None)
    return vectors[:, top] * np.sqrt(lam)[None, :], lam / np.clip(values, 0, None).sum()


def block_contrast(gram: np.ndarray, labels: np.ndarray) -> float:
    """Mean normalised kernel between distinct examples of the same class minus that between the
    classes: the intra-class blocks of Fig 3.7's top row."""
    normalised = normalised_gram(gram)
    same = labels[:, None] == labels[None, :]
    off_diagonal = ~np.eye(len(labels), dtype=bool)
    return float(normalised[same & off_diagonal].mean() - normalised[~same].mean())


def linearly_separable(points: np.ndarray, labels: np.ndarray) -> bool:
    """Whether a line separates the two classes of the 2-D points: a (w, b) with y_i (w·z_i + b) ≥ 1,
    y = ±1, exists (a feasibility linear programme)."""
    signs = np.where(labels == 1, 1.0, -1.0)
    scale = np.abs(points).max() or 1.0
    constraints = -signs[:, None] * np.hstack([points / scale, np.ones((len(points), 1))])
    result = linprog(np.zeros(points.shape[1] + 1), A_ub=constraints, b_ub=-np.ones(len(points)),
                     bounds=[(None, None)] * (points.shape[1] + 1), method="highs")
    return result.status == 0


def pair_summary(runs: list[dict], centre: bool) -> pd.DataFrame:
    """Per checkpoint: the block contrast, whether the kernel-PCA plane separates the classes, and
    the share of the centred Gram's trace on its top two components."""
    rows = []
    for run in runs:
        points, shares = kernel_pca(run["gram"], centre)
        rows.append({"epoch": int(run["epoch"]), "block_contrast": block_contrast(run["gram"], run["labels"]),
                     "separable": linearly_separable(points, run["labels"]), "top2_share": float(shares.sum()),
                     "test_accuracy": float(run["test_accuracy"])})
    return pd.DataFrame(rows)
