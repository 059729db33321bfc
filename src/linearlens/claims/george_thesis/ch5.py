"""Claims for Chapter 5 (lazy vs hasty) and appendix C. The thesis's claims about Figs 5.1-5.4 and C.1-C.9
(linearised vs non-linear training on easy and difficult examples; the quadratic model)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ...analysis.george_thesis.ch5 import (
    ANALYTIC_EXAMPLES,
    ANALYTIC_REGIMES,
    TOY_REGION_MARGIN,
    analytic_curves,
    crossing_ratio,
    crossing_summary,
    crossing_times,
    delta_loss_maps,
    hard_when_easy_reached,
    learning_order,
    order_text,
    peak_ratio,
    read_analytic,
    read_toy_runs,
    read_twolayer,
    region_means,
    toy_regimes,
    toy_regions,
    twolayer_curves,
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

@dataclass(frozen=True)
class AnalyticThresholds:
    """H15 (spec §3: "exact" at both scales; quick = paper, the runs are cheap). The thesis's
    orderings read as checks on per-example or per-group MSE curves, each relative to its initial
    value: a curve is "learned" when it has fallen to ``learned`` of its start."""

    learned: float = 0.1
    halved: float = 0.5  # Ex.2: the clean group has "reached a small error" when its MSE has halved …
    noisy_still: float = 1.0  # … while the noisy group's is still at least its initial MSE
    noisy_rise: float = 1.1  # Ex.2: the noisy group's MSE first rises, by 10% or more (the dominant mode alone: (2 − 2q/n)², 2.25 at q/n = 1/4)
    minority_still: float = 0.5  # Ex.3: when the majority is learned, the minority keeps half its initial MSE or more
    vanished: float = 0.01  # eq. 5.4.8 at the smallest σ: slower modes below this share of θ*


ANALYTIC_THRESHOLDS = {"quick": AnalyticThresholds(), "paper": AnalyticThresholds()}

EX1_STATEMENT = "Example 1: linearisation flips the order in which the examples are learned"
EX2_STATEMENT = "Example 2 (label noise): the non-linear dynamics fits the clean labels first"
EX2_RISE = "Example 2: fitting the dominant label mode first gives the noisy examples the wrong label (their error rises)"
EX3_STATEMENT = "Example 3 (spurious correlation): the non-linear dynamics fits the majority (spurious-agreeing) group first"


def _regime_text(values: dict[str, float]) -> str:
    return ", ".join(f"{regime} {values[regime]:.3f}" for regime in ANALYTIC_REGIMES)


# Each ordering: its measurements on one set of curves {regime: (times, (T, groups) MSE)}, and the
# verdict on them, so that the init-mean curves and every single init are judged alike.

def _finish(curves: dict, limits: AnalyticThresholds) -> dict[str, np.ndarray]:
    return {regime: crossing_times(*curves[regime], limits.learned) for regime in ANALYTIC_REGIMES}


def _flipped(curves: dict, limits: AnalyticThresholds) -> bool:
    orders = {regime: learning_order(finish) for regime, finish in _finish(curves, limits).items()}
    return orders["linear"] is not None and orders["nonlinear"] == orders["linear"][::-1]


def _noisy_still(curves: dict, limits: AnalyticThresholds) -> dict[str, float]:
    return {regime: hard_when_easy_reached(*curves[regime], limits.halved) for regime in ANALYTIC_REGIMES}


def _clean_first(curves: dict, limits: AnalyticThresholds) -> bool:
    still = _noisy_still(curves, limits)
    return bool(still["nonlinear"] >= limits.noisy_still and still["nonlinear"] > still["linear"])


def _noisy_rise(curves: dict) -> dict[str, float]:
    return {regime: peak_ratio(curves[regime][1][:, 1]) for regime in ANALYTIC_REGIMES}


def _noisy_rises(curves: dict, limits: AnalyticThresholds) -> bool:
    return bool(_noisy_rise(curves)["nonlinear"] >= limits.noisy_rise)


def _majority_lead(curves: dict, limits: AnalyticThresholds) -> dict[str, float]:
    return {regime: crossing_ratio(*curves[regime], limits.learned) for regime in ANALYTIC_REGIMES}


def _majority_first(curves: dict, limits: AnalyticThresholds) -> bool:
    lead = _majority_lead(curves, limits)
    return bool(lead["nonlinear"] > 1 and lead["nonlinear"] > lead["linear"])


def _minority_still(curves: dict, limits: AnalyticThresholds) -> dict[str, float]:
    return {regime: hard_when_easy_reached(*curves[regime], limits.learned) for regime in ANALYTIC_REGIMES}


def _minority_waits(curves: dict, limits: AnalyticThresholds) -> bool:
    return bool(_minority_still(curves, limits)["nonlinear"] >= limits.minority_still)


def _example_checks(name: str, figure: str, curves: dict, limits: AnalyticThresholds, what: str) -> list[tuple]:
    """(check, verdict function) pairs of one example: the check on ``curves``, the function to
    judge other curves (single inits) the same way."""
    if name == "example_1":
        finish = _finish(curves, limits)
        measured = "; ".join(f"{regime} order {order_text(finish[regime])} (times "
                             f"{np.round(finish[regime], 3).tolist()})" for regime in ANALYTIC_REGIMES)
        return [(ClaimCheck("H15", figure, EX1_STATEMENT,
                            f"{what}: the order in which the examples' squared errors fall to {limits.learned:g} of "
                            "their initial values is, in the non-linear regime, exactly the reverse of the linear one",
                            measured, _flipped(curves, limits)), _flipped)]
    if name == "example_2":
        return [
            (ClaimCheck("H15", figure, EX2_STATEMENT,
                        f"{what}: when the clean group's MSE has fallen to {limits.halved:g} of its initial value, the "
                        f"noisy group's MSE is, in the non-linear regime, still ≥ {limits.noisy_still:g} × its initial "
                        "value, and above the linear regime's at the same point",
                        f"noisy MSE / initial then: {_regime_text(_noisy_still(curves, limits))}",
                        _clean_first(curves, limits)), _clean_first),
            (ClaimCheck("H15", figure, EX2_RISE,
                        f"{what}: in the non-linear regime the noisy group's MSE rises to ≥ {limits.noisy_rise:g} × "
                        "its initial value before it falls",
                        f"peak noisy MSE / initial: {_regime_text(_noisy_rise(curves))}",
                        _noisy_rises(curves, limits)), _noisy_rises),
        ]
    return [
        (ClaimCheck("H15", figure, EX3_STATEMENT,
                    f"{what}: the time for the minority group's MSE to fall to {limits.learned:g} of its initial "
                    "value over the majority's is > 1 in the non-linear regime and larger than in the linear one",
                    f"t_minority / t_majority: {_regime_text(_majority_lead(curves, limits))}",
                    _majority_first(curves, limits)), _majority_first),
        (ClaimCheck("H15", figure, EX3_STATEMENT,
                    f"{what}: when the majority's MSE has fallen to {limits.learned:g} of its initial value, the "
                    f"minority's is still ≥ {limits.minority_still:g} of its own in the non-linear regime",
                    f"minority MSE / initial then: {_regime_text(_minority_still(curves, limits))}",
                    _minority_waits(curves, limits)), _minority_waits),
    ]


def _dominant_mode_check(example: dict, spec: dict) -> ClaimCheck:
    """Ex.2's mechanism: the mode of u₁ = ȳ/√n (the largest μ) has the largest ỹ, so the
    non-linear flow learns it first. With the label-aligned basis of the degenerate eigenspace
    the rest of the label sits on one mode, of ỹ = 2η√(q(n − q)/n)."""
    y_tilde = example["y_tilde"]
    config = spec["examples"]["example_2"]
    n, q, eta = config["n"], config["q"], config["eta"]
    aligned = 2 * eta * np.sqrt(q * (n - q) / n)
    return ClaimCheck("H15", "fig_5_4", "Example 2: the dominant label mode y₁ = (1 − 2q/n)ȳ is learned first",
                      "ỹ of the top mode (u₁ = ȳ/√n, μ₁ = n + η²) above every other mode's ỹ "
                      f"({spec['degenerate_basis']} basis of the degenerate eigenspace)",
                      f"ỹ₁ {y_tilde[0]:.3f}, largest other {y_tilde[1:].max():.3f} (a label-aligned basis would give "
                      f"one mode of ỹ = 2η√(q(n−q)/n) = {aligned:.3f})", bool(y_tilde[0] > y_tilde[1:].max()))


def _sequentialisation_check(record: dict, limits: AnalyticThresholds) -> ClaimCheck:
    """Eq. 5.4.8 on Example 1's modes: S[σ, λ, λ'] = θ_λ'(t_λ)/θ*_λ'."""
    ratios, sigmas, y_tilde = record["ratios"], record["sigmas"], record["y_tilde"]
    epsilon = float(record["epsilon"])
    faster = y_tilde[None, :] > y_tilde[:, None]  # [λ, λ']: ỹ_λ' > ỹ_λ
    slower = y_tilde[None, :] < y_tilde[:, None]
    gap = np.abs(1 - ratios[-1]) * record["theta_star"][None, :]  # |θ_λ'(t_λ) − θ*_λ'| at the smallest σ
    decreasing = bool(np.all(np.diff(ratios[:, slower], axis=0) < 0))
    vanished = float(ratios[-1][slower].max())
    return ClaimCheck("H15", "fig_5_4", "eq. 5.4.8: with a vanishing initialisation the modes are learned one after "
                      "another (when a mode gets ε-close, faster modes have converged and slower ones not moved)",
                      f"Example 1, ε = {epsilon:g}, σ = {', '.join(f'{s:g}' for s in sigmas)}: at the smallest σ every "
                      f"mode with larger ỹ is within ε of θ*, every mode with smaller ỹ is below {limits.vanished:g} θ*, "
                      "and that share decreases strictly as σ decreases",
                      f"largest |θ − θ*| of faster modes {gap[faster].max():.2e}; largest θ/θ* of slower modes "
                      f"{', '.join(f'{v:.3g}' for v in ratios[:, slower].max(axis=1))} (by σ)",
                      bool(np.all(gap[faster] <= epsilon)) and decreasing and vanished <= limits.vanished)


def analytic_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H15 on the closed forms (Fig 5.4), the sequentialisation of eq. 5.4.8, and the same orderings
    on the 2-layer MLP simulation (Fig C.9: init-mean curves, with the count of single inits that
    pass)."""
    limits = ANALYTIC_THRESHOLDS[job.params["thresholds"]]
    spec = job.params["spec"]
    record = read_analytic(job.inputs["closed_forms"][0])
    checks = []
    for name in ANALYTIC_EXAMPLES:
        curves = {regime: analytic_curves(record[name], regime, dense=True) for regime in ANALYTIC_REGIMES}
        checks += [check for check, _ in _example_checks(name, "fig_5_4", curves, limits, "closed forms")]
        if name == "example_2":
            checks.append(_dominant_mode_check(record[name], spec))
    checks.append(_sequentialisation_check(record["sequentialisation"], limits))
    config = spec["twolayer"]
    what = (f"2-layer linear MLP, mean of {config['inits']} inits (α {config['alphas']['linear']:g} linear, "
            f"{config['alphas']['nonlinear']:g} non-linear)")
    for path in job.inputs["twolayer"]:
        run = read_twolayer(path)
        per_init = {regime: twolayer_curves(run, regime) for regime in ANALYTIC_REGIMES}
        mean = {regime: (times, curves.mean(axis=1)) for regime, (times, curves) in per_init.items()}
        inits = [{regime: (times, curves[:, k]) for regime, (times, curves) in per_init.items()}
                 for k in range(config["inits"])]
        for check, verdict in _example_checks(str(run["example"]), "fig_C_9", mean, limits, what):
            passing = sum(verdict(curves, limits) for curves in inits)
            checks.append(replace(check, measured=f"{check.measured}; single inits passing: {passing} of {len(inits)}"))
    return checks


# --- Figs 5.2, C.1-C.6: α-scaled runs on C-score groups and noisy labels, linearity metrics ---


# --- Figs 5.3, C.7, C.8: spurious correlations ---
