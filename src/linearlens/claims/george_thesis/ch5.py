"""Claims for Chapter 5 (lazy vs hasty) and appendix C. The thesis's claims about Figs 5.1-5.4 and C.1-C.9
(linearised vs non-linear training on easy and difficult examples; the quadratic model)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...analysis.george_thesis.ch5 import (
    TOY_REGION_MARGIN,
    crossing_summary,
    delta_loss_maps,
    read_toy_runs,
    region_means,
    toy_regimes,
    toy_regions,
)
from ...manifests.jobs import ClaimsJob
from .. import ClaimCheck

# --- Fig 5.1: the yin-yang toy, α = 1 vs α = 100, Δloss maps at loss thresholds ---

@dataclass(frozen=True)
class ToyThresholds:
    """H8 (spec §3; the same check at both scales, quick on 20 seeds): at every training-loss
    threshold, the median first iteration below it of the linearised runs over that of the
    non-linear runs above ``speedup``; and at each threshold the mean Δloss (eq. 5.3.1) over the
    easy region below ``easy_below`` and over the disks above ``disks_above``."""

    speedup: float = 1.0
    easy_below: float = 0.0
    disks_above: float = 0.0


TOY_THRESHOLDS = {"quick": ToyThresholds(), "paper": ToyThresholds()}


def toy_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H8 on the yin-yang runs (Fig 5.1): the non-linear regime trains faster, and at equal training
    loss it does better on the large easy areas and worse on the disks."""
    limits = TOY_THRESHOLDS[job.params["thresholds"]]
    runs = read_toy_runs(job.inputs["runs"])
    return [_speedup_check(runs, limits)] + _delta_checks(runs, limits)


def _speedup_check(runs: dict, limits: ToyThresholds) -> ClaimCheck:
    nonlinear, linear = toy_regimes(runs)
    crossings = crossing_summary(runs).set_index(["threshold", "alpha"])
    ratios, parts = [], []
    for threshold in runs["thresholds"]:
        fast, slow = crossings.loc[(threshold, nonlinear)], crossings.loc[(threshold, linear)]
        ratio = slow["median_iteration"] / fast["median_iteration"]
        ratios.append(ratio)
        parts.append(f"loss {threshold:g}: {_median(fast)} vs {_median(slow)} ({ratio:.2f}×)")
    passed = None if any(np.isnan(ratios)) else all(ratio > limits.speedup for ratio in ratios)
    return ClaimCheck(
        "H8", "fig_5_1", "the non-linear regime (α = 1) trains faster than the linearised one (α = 100)",
        f"at every training-loss threshold, median first iteration below it (α = {linear:g}) / (α = {nonlinear:g}) > "
        f"{limits.speedup:g} (a run that never gets there counts as slowest; no verdict when neither regime's median "
        "run gets there)", "; ".join(parts), passed)


def _median(row: pd.Series) -> str:
    iteration = row["median_iteration"]
    reached = f"{int(row['reached'])}/{int(row['runs'])} runs reached"
    return f"{iteration:,.0f} ({reached})" if np.isfinite(iteration) else f"never ({reached})"


def _delta_checks(runs: dict, limits: ToyThresholds) -> list[ClaimCheck]:
    maps = delta_loss_maps(runs)
    regions = toy_regions(int(runs["grid_side"]))
    means = region_means(maps["delta"], regions)
    easy = (f"the easy region (the disk-free quadrants x₁x₂ > 0 at least {TOY_REGION_MARGIN:g} from every class "
            f"boundary, {int(regions['easy'].sum())} grid points)")
    disks = f"the two disks ({int(regions['disks'].sum())} grid points)"
    checks = []
    for k, threshold in enumerate(runs["thresholds"]):
        counts = (f"{maps['reached_nonlinear'][k]}/{maps['runs_nonlinear']} non-linear and "
                  f"{maps['reached_linear'][k]}/{maps['runs_linear']} linearised runs reached it")
        statement = (f"at training loss {threshold:g}, the non-linear regime does better on the large same-class areas "
                     "and worse on the small disks")
        for region, mean, sign, bound in ((easy, means["easy"][k], "<", limits.easy_below),
                                          (disks, means["disks"][k], ">", limits.disks_above)):
            if np.isnan(mean):  # a regime without a run at this threshold: no map to read
                checks.append(ClaimCheck("H8", "fig_5_1", statement, f"mean Δloss over {region} {sign} {bound:g}",
                                         f"no Δloss map: {counts}", None))
                continue
            extra = f"; between the disks and x₂ = 0: {means['between'][k]:+.4f}" if region is disks else ""
            checks.append(ClaimCheck(
                "H8", "fig_5_1", statement, f"mean Δloss (non-linear − linearised, eq. 5.3.1) over {region} {sign} "
                f"{bound:g}", f"{mean:+.4f} ({counts}{extra})", bool(mean < bound if sign == "<" else mean > bound)))
    return checks


# --- Figs 5.4, C.9: the quadratic model in closed form, and a 2-layer linear MLP on its datasets ---


# --- Figs 5.2, C.1-C.6: α-scaled runs on C-score groups and noisy labels, linearity metrics ---


# --- Figs 5.3, C.7, C.8: spurious correlations ---
