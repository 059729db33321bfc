"""Chapter 3 and Appendix B, local signal adaptivity (a CNN against its tangent kernel): where the
runs live and the summaries behind Figs 3.2-3.5 and Tables 3.1, B.1 (Fig 3.1 is photographs,
listed only), torch-free, shared by the figures and the claims."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

RUNS = "results/karp_thesis/runs/ch3"

# --- Fig 3.3: the LSA toy model (Sec 3.3, Algorithm 3.1) ---
#
# One run trains f_{w,b}(X) = Σ_i φ_b(⟨w, X_i⟩) by SGD on fresh samples and writes one CSV row per
# evaluation (``TOY_COLUMNS``). The thesis's "σ = 1" is the noise MULTIPLIER of the authors' code
# (spec trap C3-1): the noise rows' standard deviation is multiplier · log(k)/√k (natural log),
# 0.2184 at k = 1000.

TOY_RUNS = f"{RUNS}/toy"
# step: SGD steps taken; w_dot_wstar: w·w*; w_perp_norm: ‖w − (w·w*)w*‖; ratio: |b|/(w·w*);
# test_accuracy: mean(y·f ≥ 0) and test_loss: mean log(1 + e^{−y f}) on fresh test samples;
# train_loss: the loss of the last training batch (NaN at step 0); b_peak: the largest b of steps
# 0..step; b_positive_steps: steps after which b > 0, so far; positive_ratio_peak: the largest
# b/(w·w*) after a step that left b > 0 and w·w* > 0 (0 if none): the thesis's "|b|/|w·w*| never
# exceeds Θ(1/k) while b > 0" (Sec 3.4).
TOY_COLUMNS = ("step", "w_dot_wstar", "w_perp_norm", "w_norm", "b", "ratio", "test_accuracy", "test_loss",
               "train_loss", "b_peak", "b_positive_steps", "positive_ratio_peak")
# The thesis's settings (caption of Fig 3.3, App. B.3; the evaluation from the authors' code).
TOY_THESIS = {"k": 1000, "d": 10, "noise_multiplier": 1.0, "lr_w": 0.1, "lr_b": 1e-4, "batch_size": 500,
              "steps": 10_000, "eval_every": 100, "test_samples": 5000}
# The signal row replaces one of the k rows (the authors' code; the thesis has k + 1 rows).
TOY_SIGNAL_ROWS = 1


def toy_run_path(spec: dict) -> str:
    """The run's per-evaluation rows: one file per seed."""
    return f"{TOY_RUNS}/seed{spec['seed']}.csv"


def noise_std(k: int, multiplier: float) -> float:
    """σ = multiplier · log(k)/√k, the noise rows' standard deviation per coordinate."""
    return multiplier * math.log(k) / math.sqrt(k)


def toy_noise_std(spec: dict) -> float:
    return noise_std(spec["k"], spec["noise_multiplier"])


def linear_ceiling(k: int, sigma: float, noise_rows: int | None = None) -> float:
    """Accuracy of the best linear classifier l(X) = Σ_i ⟨w*, X_i⟩ = y + N(0, rows·σ²): Φ(1/(√rows·σ))
    with rows the number of noise rows (k − 1 by default: the signal row replaces one of k). At
    multiplier 1 that is Φ(1/log k) up to the k/(k − 1) in the variance: 0.558 at k = 1000."""
    rows = k - TOY_SIGNAL_ROWS if noise_rows is None else noise_rows
    return 0.5 * (1.0 + math.erf(1.0 / (math.sqrt(rows) * sigma) / math.sqrt(2.0)))


def toy_linear_ceiling(spec: dict) -> float:
    return linear_ceiling(spec["k"], toy_noise_std(spec))


def read_toy_run(paths) -> pd.DataFrame:
    """The evaluations of one run (the first path), in step order."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    return pd.read_csv(paths[0]).sort_values("step", ignore_index=True)


def step_correlation(frame: pd.DataFrame, column: str) -> float:
    """Spearman ρ between the step and a column over its finite values (NaN with fewer than three)."""
    values = frame[column].to_numpy(dtype=float)
    finite = np.isfinite(values)
    if finite.sum() < 3 or np.ptp(values[finite]) == 0:
        return float("nan")
    return float(stats.spearmanr(frame["step"].to_numpy()[finite], values[finite]).statistic)


def trend(frame: pd.DataFrame, column: str) -> dict[str, float]:
    """How a curve moves over training: Spearman ρ with the step, first and last finite values and
    their difference."""
    finite = frame[np.isfinite(frame[column].to_numpy(dtype=float))]
    first, last = (float(finite[column].iloc[i]) if len(finite) else float("nan") for i in (0, -1))
    return {"rho": step_correlation(frame, column), "first": first, "last": last, "change": last - first}


def toy_settings_text(spec: dict) -> str:
    """The run's settings as a caption states them, with the noise multiplier read as in the code."""
    sigma = toy_noise_std(spec)
    return (f"k = {spec['k']} rows of d = {spec['d']}, noise multiplier {spec['noise_multiplier']:g} (the thesis's "
            f"\"σ = 1\" read as in the authors' code: noise std = {spec['noise_multiplier']:g}·log k/√k = {sigma:.4f}), "
            f"η_w = {spec['lr_w']:g}, η_b = {spec['lr_b']:g}, batch {spec['batch_size']} fresh samples per step, "
            f"{spec['steps']:,} steps, evaluation every {spec['eval_every']} steps on {spec['test_samples']:,} fresh "
            f"samples, seed {spec['seed']}")
