"""Analysis for Chapter 6 (NTK alignment) and appendix B. Torch-free summaries (pandas and numpy only) behind
Figs 6.1-6.6 and B.1-B.8 (tangent-kernel spectrum, alignment with the labels, SuperNat, complexity
measures); Fig 6.5's left half is an algorithm box, drawn with its curves."""

from __future__ import annotations

import numpy as np
import pandas as pd

# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and its alignment with the labels over training (alignment) ---

RUN_COLUMNS = ("family", "setting", "seed", "label_noise", "lr")


def read_kernel_runs(paths: list[str], runs: list[dict]) -> pd.DataFrame:
    """One frame of a group's run files (rows, layers or spectra), each row tagged with its run."""
    frames = []
    for path, run in zip(paths, runs):
        frame = pd.read_csv(path)
        for position, column in enumerate(RUN_COLUMNS):
            frame.insert(position, column, run[column])
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def half_rise_step(steps: pd.Series, values: pd.Series) -> float:
    """The first step where a curve has covered half its way from its start to its peak: when it
    rises (NaN when it never rises)."""
    start, peak = values.iloc[0], values.max()
    if not peak > start:
        return float("nan")
    return float(steps[values >= start + (peak - start) / 2].iloc[0])


def noise_label(label_noise: float) -> str:
    return f"{label_noise:.0%} random labels" if label_noise else "no random labels"


def network_name(names: dict) -> str:
    """The network as the thesis names it, and what stands in for it at this scale."""
    return f"{names['standin']} (stand-in for {names['label']})" if names.get("standin") else names["label"]


def run_title(run: dict, families: dict) -> str:
    return f"{network_name(families[run['family']])}\n{noise_label(run['label_noise'])}, lr {run['lr']:g}"


def spearman(x, y) -> float:
    return float(pd.Series(np.asarray(x, dtype=float)).corr(pd.Series(np.asarray(y, dtype=float)), method="spearman"))

# --- end of alignment ---

# --- Figs 6.4, B.7: alignment on easy vs difficult examples (easy_difficult) ---

# --- end of easy_difficult ---

# --- Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task (disk) ---

# --- end of disk ---

# --- Fig B.2: spectral bias of a random MLP's tangent kernel (spectral_bias) ---

# --- end of spectral_bias ---

# --- Fig 6.5: SuperNat vs gradient descent on noisy linear regression (supernat) ---

# --- end of supernat ---

# --- Fig B.3: which norm measures capacity (random RBF features) (rbf_capacity) ---

# --- end of rbf_capacity ---

# --- Fig B.1: output change along the Jacobian's top singular directions (perturbation) ---

TOP, RANDOM = "top singular", "random"
# The scalars of a run's npz repeated on each of its rows (the arrays are the changes and the spectrum).
PERTURBATION_SCALARS = ("seed", "epsilon", "steps", "n_params", "n_train", "n_probe", "n_eval", "num_classes",
                        "train_accuracy", "train_loss", "test_accuracy", "test_loss")


def read_perturbation_runs(paths) -> pd.DataFrame:
    """One row per (run, direction): direction 1…k are the top right singular vectors of the Jacobian
    (``kind`` "top singular"), k+1…2k the random ones ("random"); ``change`` = ‖f_{w+εv}(X) − f_w(X)‖₂,
    ``eigenvalue`` λ_j of the probe Gram for the top ones (NaN for random), and the run's scalars."""
    frames = []
    for path in paths:
        with np.load(path) as run:
            top, random = run["top_changes"], run["random_changes"]
            k = len(top)
            frame = pd.DataFrame({"direction": np.arange(1, 2 * k + 1), "kind": [TOP] * k + [RANDOM] * len(random),
                                  "change": np.concatenate([top, random]),
                                  "eigenvalue": np.concatenate([run["spectrum"][:k], np.full(len(random), np.nan)])})
            for name in PERTURBATION_SCALARS:
                frame[name] = run[name].item()
            frame["eigenvalue_share"] = frame["eigenvalue"] / run["spectrum"].sum()
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def perturbation_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per seed: mean change along the top and the random directions and their ratio (claim H26), the
    smallest top change and the largest random one, the share of top directions that move f more than
    every random direction, and the test accuracy."""
    rows = []
    for seed, run in runs.groupby("seed"):
        top, random = run.loc[run["kind"] == TOP, "change"], run.loc[run["kind"] == RANDOM, "change"]
        rows.append({"seed": seed, "mean_top": top.mean(), "mean_random": random.mean(),
                     "ratio": top.mean() / random.mean(), "min_top": top.min(), "max_random": random.max(),
                     "share_above_random": float((top > random.max()).mean()),
                     "test_accuracy": run["test_accuracy"].iloc[0]})
    return pd.DataFrame(rows)


# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

# --- end of complexity ---
