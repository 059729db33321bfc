"""The iterative-linearisation paper's claims (spec §3, C1–C13) as checks with explicit thresholds.

Two threshold sets, both fixed from the paper's statements before any run: ``paper`` for the
paper's setup on CIFAR-10, ``stand_in`` for the quick and smoke scales, whose stand-in data can
only show the shape of each claim (the config names which set applies). Accuracies are fractions;
gaps are stated in percentage points.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..analysis.iterative_linearisation import (
    adam_roles,
    best_accuracies,
    k_label,
    k_value,
    kept_runs,
    read_records,
    scaling_slope,
    scheduled,
)
from ..analysis.records import last_records, read_runs
from ..manifests.jobs import ClaimsJob
from . import ClaimCheck, rank_correlation

POINT = 0.01  # one percentage point of accuracy


@dataclass(frozen=True)
class Thresholds:
    finite_k_gap: float  # C1, C2: each finite K ends at most this many points below K = 1
    batch_mode_end_gap: float  # C3: full batch vs mini-batch at the end, points
    batch_mode_mean_gap: float  # C3: mean |difference| over the last half, points
    augmented_gap: float  # C4: K = 1 minus the large K at the end, at most
    augmented_gap_floor: float | None  # C4: and at least (None: no lower bound)
    augmented_ranges: tuple | None  # C4: final accuracy ranges (K = 1, large K), or None
    resnet_gap: float  # C6
    scaling_gap_growth: float  # C7: gap at the largest n minus gap at the smallest n, more than
    scaling_finite_k_gap: float  # C7: each finite K within this of K = 1 at every n
    scaling_checks_slope: bool  # C7: also the log-log slope and the two K = 1 learning rates
    probe_final_gap: float  # C8: K = 1 minus the large K at the last checkpoint, more than
    probe_every_checkpoint: float | None  # C8: K = 1 ≥ large K − this at every checkpoint (None: not checked)
    probe_rise: bool  # C8: both curves end above their epoch-0 value
    filter_crossing_share: float  # C9: first column where d₁ ≥ d_K(end), within this share of columns
    filter_k1_ahead: bool  # C9: d₁ > d_K at every column
    adam_gap: float  # C10: IL-Adam at least this many points below K = 1
    adam_ranges: tuple | None  # C10: final accuracy ranges (K = 1, IL-Adam), or None
    adam_baseline_above: float | None  # C10: plain Adam above this (None: above or equal to K = 1)
    period_fit: float = 0.99  # C10: linearised training accuracy at the end of every period
    relinearisation_agreement: float = 1e-6  # C5
    identity: tuple = (("float32", 1e-6), ("float64", 1e-12))  # C12
    best_accuracy_cap: float | None = None  # C13


THRESHOLDS = {
    "paper": Thresholds(
        finite_k_gap=2, batch_mode_end_gap=3, batch_mode_mean_gap=5, augmented_gap=2, augmented_gap_floor=-1,
        augmented_ranges=((0.79, 0.85), (0.78, 0.84)), resnet_gap=3, scaling_gap_growth=3, scaling_finite_k_gap=2,
        scaling_checks_slope=True, probe_final_gap=1, probe_every_checkpoint=0.5, probe_rise=False,
        filter_crossing_share=0.25, filter_k1_ahead=True, adam_gap=4, adam_ranges=((0.66, 0.73), (0.57, 0.65)),
        adam_baseline_above=0.70, best_accuracy_cap=0.85),
    "stand_in": Thresholds(
        finite_k_gap=3, batch_mode_end_gap=4, batch_mode_mean_gap=5, augmented_gap=3, augmented_gap_floor=None,
        augmented_ranges=None, resnet_gap=5, scaling_gap_growth=0, scaling_finite_k_gap=3,
        scaling_checks_slope=False, probe_final_gap=0, probe_every_checkpoint=None, probe_rise=True,
        filter_crossing_share=0.40, filter_k1_ahead=False, adam_gap=3, adam_ranges=None, adam_baseline_above=None),
}


def _points(value: float) -> str:
    return f"{100 * value:.1f} points"


def final_accuracy(runs: pd.DataFrame, column: str = "test_accuracy_network") -> pd.Series:
    """Each K's accuracy at its last scheduled evaluation, averaged over seeds."""
    points = scheduled(runs)
    last = last_records(points, ["K", "seed"])
    return last.groupby("K")[column].mean()


def _seed_mean_curve(runs: pd.DataFrame, column: str = "test_accuracy_network") -> pd.Series:
    return scheduled(runs).groupby("step")[column].mean()


def finite_k_checks(runs: pd.DataFrame, claim_id: str, mode: str, limits: Thresholds) -> list[ClaimCheck]:
    """C1 / C2: every finite K ends within ``finite_k_gap`` points of K = 1."""
    final = final_accuracy(runs)
    checks = []
    for k in sorted(final.index, key=k_value):
        if str(k) in ("1", "inf"):
            continue
        gap = (final["1"] - final[k]) / POINT
        relinearisations = int(runs.loc[runs["K"] == k, "relinearisations"].max())
        checks.append(ClaimCheck(
            claim_id, "fig_2", f"{mode}: large-K iterative linearisation approaches K = 1 ({k_label(k)})",
            f"final test accuracy of the network ≥ K = 1 − {limits.finite_k_gap:g} points (seed mean)",
            f"K = 1 {final['1']:.3f}, {k_label(k)} {final[k]:.3f} (gap {gap:.1f} points, "
            f"{relinearisations} re-linearisations)", bool(gap <= limits.finite_k_gap)))
    return checks


def batch_mode_checks(full_batch: pd.DataFrame, mini_batch: pd.DataFrame, limits: Thresholds) -> list[ClaimCheck]:
    """C3: matched (i-th smallest) K of the two sweeps on the full-batch step axis (mini-batch
    steps scaled by lr_mb / lr_fb) differ little at the end and over the last half."""
    ratio = mini_batch["lr"].iloc[0] / full_batch["lr"].iloc[0]
    fb_ks = sorted(full_batch["K"].unique(), key=k_value)
    mb_ks = sorted(mini_batch["K"].unique(), key=k_value)
    checks = []
    for fb_k, mb_k in zip(fb_ks, mb_ks):
        fb = _seed_mean_curve(full_batch[full_batch["K"] == fb_k])
        mb = _seed_mean_curve(mini_batch[mini_batch["K"] == mb_k])
        mb.index = mb.index * ratio
        end = min(fb.index.max(), mb.index.max())
        grid = np.linspace(end / 2, end, 50)
        difference = np.interp(grid, fb.index, fb.to_numpy()) - np.interp(grid, mb.index, mb.to_numpy())
        end_gap, mean_gap = abs(difference[-1]) / POINT, np.abs(difference).mean() / POINT
        checks.append(ClaimCheck(
            "C3", "fig_2", f"very little changes from full batch to mini-batch ({k_label(fb_k)} full batch vs "
            f"{k_label(mb_k)} mini-batch)",
            f"on the lr·t axis: |difference| at the end < {limits.batch_mode_end_gap:g} points and mean "
            f"|difference| over the last half < {limits.batch_mode_mean_gap:g} points (seed means)",
            f"end {end_gap:.1f} points, last-half mean {mean_gap:.1f} points",
            bool(end_gap < limits.batch_mode_end_gap and mean_gap < limits.batch_mode_mean_gap)))
    return checks


def _large_k(runs: pd.DataFrame):
    return max(runs["K"].unique(), key=k_value)


def augmented_checks(runs: pd.DataFrame, limits: Thresholds) -> list[ClaimCheck]:
    """C4: the large K ends close to K = 1; C5: the linearised model is above the network within
    periods and equal to it at every re-linearisation."""
    final = final_accuracy(runs)
    k = _large_k(runs)
    gap = (final["1"] - final[k]) / POINT
    passed = gap <= limits.augmented_gap and (limits.augmented_gap_floor is None or gap >= limits.augmented_gap_floor)
    check = f"K = 1 minus {k_label(k)} final test accuracy ≤ {limits.augmented_gap:g} points"
    if limits.augmented_gap_floor is not None:
        check += f" and ≥ {limits.augmented_gap_floor:g}"
    if limits.augmented_ranges:
        (low1, high1), (lowk, highk) = limits.augmented_ranges
        passed = passed and low1 <= final["1"] <= high1 and lowk <= final[k] <= highk
        check += f"; K = 1 in [{low1:.0%}, {high1:.0%}], {k_label(k)} in [{lowk:.0%}, {highk:.0%}]"
    checks = [ClaimCheck("C4", "fig_3", "with augmentation the final accuracies differ by under 1% (82.3% for "
                         "K = 1, 81.4% for K = 5·10⁶)", check,
                         f"K = 1 {final['1']:.3f}, {k_label(k)} {final[k]:.3f} (gap {gap:.1f} points)", bool(passed))]
    large = runs[runs["K"] == k]
    points = scheduled(large)
    within = points[points["delta_norm"] > 0]
    lead = float((within["test_accuracy_linearised"] - within["test_accuracy_network"]).mean()) / POINT
    checks.append(ClaimCheck("C5", "fig_3", "within a period the linearised model is ahead of the network",
                             "mean over evaluations within periods of (linearised − network test accuracy) > 0",
                             f"{lead:.2f} points over {len(within)} evaluations",
                             bool(lead > 0) if len(within) else None))
    after = large[large["point"] == "after_relinearisation"]
    if after.empty:
        checks.append(ClaimCheck("C5", "fig_3", "at a re-linearisation the linearised model equals the network",
                                 "evaluations just after re-linearisations", "none recorded", None))
    else:
        disagreement = float(np.abs(after["test_loss_linearised"] - after["test_loss_network"]).max())
        checks.append(ClaimCheck(
            "C5", "fig_3", "at a re-linearisation the linearised model equals the network",
            f"max |test loss of the linearised model − network's| just after a re-linearisation ≤ "
            f"{limits.relinearisation_agreement:g}", f"{disagreement:.2g} over {len(after)} re-linearisations",
            bool(disagreement <= limits.relinearisation_agreement)))
    return checks


def resnet_checks(panels: dict[str, pd.DataFrame], limits: Thresholds) -> list[ClaimCheck]:
    """C6: in each panel the large K ends within ``resnet_gap`` points of K = 1; a diverged run
    is reported as such (the check is then not evaluable)."""
    checks = []
    for title, runs in panels.items():
        k = _large_k(runs)
        statement = f"{title}: large-K iterative linearisation reaches similar test accuracy to SGD"
        check = f"K = 1 minus {k_label(k)} final test accuracy ≤ {limits.resnet_gap:g} points"
        diverged = runs[(runs["K"] == k) & runs["diverged"]]
        if not diverged.empty:
            checks.append(ClaimCheck("C6", "fig_4", statement, check,
                                     f"{k_label(k)} diverged (stopped at step {int(diverged['step'].max())})", None))
            continue
        final = final_accuracy(runs)
        gap = (final["1"] - final[k]) / POINT
        checks.append(ClaimCheck("C6", "fig_4", statement, check,
                                 f"K = 1 {final['1']:.3f}, {k_label(k)} {final[k]:.3f} (gap {gap:.1f} points)",
                                 bool(gap <= limits.resnet_gap)))
    return checks


def scaling_checks(runs: pd.DataFrame, limits: Thresholds) -> list[ClaimCheck]:
    """C7: K = ∞ below K = 1 at the same learning rate at every n, the gap growing with n (and
    a shallower log-log slope at paper scale); every finite K close to K = 1 at every n."""
    best = best_accuracies(runs)
    mean = best.groupby(["K", "lr", "n_train"])["best_accuracy"].mean()
    infinite_lr = best.loc[best["K"].astype(str) == "inf", "lr"].iloc[0]
    k1 = mean.loc[("1", infinite_lr)]
    kinf = mean.loc[("inf", infinite_lr)]
    gaps = (k1 - kinf) / POINT
    sizes = gaps.index.to_numpy()
    checks = [
        ClaimCheck("C7", "fig_5", "forbidding feature learning (K = ∞) hurts at every training-set size",
                   f"best test accuracy of K = ∞ < K = 1 (lr {infinite_lr:g}) at every n (seed means)",
                   ", ".join(f"n={n}: {g:.1f}" for n, g in gaps.items()) + " points", bool((gaps > 0).all())),
        ClaimCheck("C7", "fig_5", "K = ∞ scales worse with data than K = 1",
                   f"gap at the largest n − gap at the smallest n > {limits.scaling_gap_growth:g} points",
                   f"{gaps.iloc[-1] - gaps.iloc[0]:.1f} points (n={sizes[0]} → {sizes[-1]})",
                   bool(gaps.iloc[-1] - gaps.iloc[0] > limits.scaling_gap_growth))]
    small = best["lr"].min()
    reference = mean.loc[("1", small)]
    for k in sorted({k for k in best["K"].unique() if str(k) not in ("1", "inf")}, key=k_value):
        behind = (reference - mean.loc[(k, small)]) / POINT
        checks.append(ClaimCheck(
            "C7", "fig_5", f"finite K scales like K = 1 when trained to convergence ({k_label(k)})",
            f"best test accuracy ≥ K = 1 − {limits.scaling_finite_k_gap:g} points at every n (lr {small:g})",
            ", ".join(f"n={n}: {g:.1f}" for n, g in behind.items()) + " points behind",
            bool((behind <= limits.scaling_finite_k_gap).all())))
    if limits.scaling_checks_slope:
        slope_1 = scaling_slope(best[(best["K"].astype(str) == "1") & (best["lr"] == infinite_lr)])
        slope_inf = scaling_slope(best[best["K"].astype(str) == "inf"])
        checks.append(ClaimCheck("C7", "fig_5", "K = ∞ has the shallower data-scaling exponent",
                                 "|slope of log test error against log n| of K = ∞ < K = 1's",
                                 f"K = ∞ {slope_inf:.3f}, K = 1 {slope_1:.3f}", bool(abs(slope_inf) < abs(slope_1))))
        large = best["lr"].max()
        lr_gap = (mean.loc[("1", large)] - mean.loc[("1", small)]).abs() / POINT
        checks.append(ClaimCheck("C7", "fig_5", "the learning rate is irrelevant for K = 1",
                                 f"|K = 1 at lr {large:g} − K = 1 at lr {small:g}| ≤ 2 points at every n",
                                 f"largest {lr_gap.max():.1f} points", bool((lr_gap <= 2).all())))
    return checks


def probe_checks(probes: pd.DataFrame, limits: Thresholds) -> list[ClaimCheck]:
    """C8: the large-K features are less linearly separable: lower at the end (and, at paper
    scale, never clearly above K = 1), both improving on the random features."""
    k = _large_k(probes)
    checks = []
    for layer, at_layer in probes.groupby("layer"):
        curves = at_layer.groupby(["K", "step"])["probe_accuracy"].mean()
        k1, kl = curves.loc["1"], curves.loc[k]
        final_gap = (k1.iloc[-1] - kl.iloc[-1]) / POINT
        passed = final_gap > limits.probe_final_gap
        check = f"K = 1 minus {k_label(k)} probe accuracy at the last checkpoint > {limits.probe_final_gap:g} points"
        measured = f"K = 1 {k1.iloc[-1]:.3f}, {k_label(k)} {kl.iloc[-1]:.3f}"
        if limits.probe_every_checkpoint is not None:
            worst = float(((kl - k1) / POINT).iloc[1:].max())
            passed = passed and worst <= limits.probe_every_checkpoint
            check += f"; K = 1 ≥ {k_label(k)} − {limits.probe_every_checkpoint:g} points at every later checkpoint"
            measured += f", largest lead of {k_label(k)} {worst:.1f} points"
        if limits.probe_rise:
            passed = passed and k1.iloc[-1] > k1.iloc[0] and kl.iloc[-1] > kl.iloc[0]
            check += "; both end above their epoch-0 value"
            measured += f" (epoch 0: {k1.iloc[0]:.3f}, {kl.iloc[0]:.3f})"
        checks.append(ClaimCheck("C8", "fig_6", f"layer {layer}: the large-K features improve slower and level off "
                                 "lower", check, measured, bool(passed)))
    return checks


def filter_checks(changes: dict[str, list[tuple[int, np.ndarray]]], n_filters: int, limits: Thresholds) -> list[ClaimCheck]:
    """C9: the large K's final first-layer filters are reached by K = 1 early in training."""
    k = max(changes, key=k_value)
    distance = {key: np.array([np.linalg.norm(change[:n_filters]) for _, change in columns])
                for key, columns in changes.items()}
    d1, dk = distance["1"], distance[k]
    reached = np.flatnonzero(d1 >= dk[-1])
    first = int(reached[0]) + 1 if len(reached) else None
    share = first / len(d1) if first else float("inf")
    passed = share <= limits.filter_crossing_share
    check = (f"the first column where ‖W_e − W_0‖ of K = 1 reaches that of {k_label(k)} at the end lies within the "
             f"first {limits.filter_crossing_share:.0%} of the {len(d1)} columns")
    if limits.filter_k1_ahead:
        passed = passed and bool((d1 > dk[:len(d1)]).all())
        check += "; K = 1 ahead at every column"
    measured = f"column {first} of {len(d1)}" if first else "never reached"
    return [ClaimCheck("C9", "fig_7", f"after training, the {k_label(k)} filters look like K = 1's about 10% of "
                       "the way through", check, measured, bool(passed))]


def adam_checks(runs: pd.DataFrame, limits: Thresholds) -> list[ClaimCheck]:
    """C10: solving each linearisation with Adam generalises worse than K = 1 SGD, not because of
    Adam (plain Adam is at least as good as SGD); every period is fitted."""
    roles = adam_roles(runs)
    points = scheduled(runs)
    final = last_records(points, ["setting", "seed"])
    final = final.groupby("setting")["test_accuracy_network"].mean()
    sgd, il = final[roles["sgd"]], final[roles["il_adam"]]
    gap = (sgd - il) / POINT
    passed = gap >= limits.adam_gap
    check = f"IL-Adam final test accuracy ≤ K = 1 SGD − {limits.adam_gap:g} points"
    if limits.adam_ranges:
        (low1, high1), (lowa, higha) = limits.adam_ranges
        passed = passed and low1 <= sgd <= high1 and lowa <= il <= higha
        check += f"; K = 1 in [{low1:.0%}, {high1:.0%}], IL-Adam in [{lowa:.0%}, {higha:.0%}]"
    checks = [ClaimCheck("C10", "fig_8", "fully solving each linearisation (Adam) generalises worse: 61.3% vs "
                         "69.4% for K = 1", check, f"K = 1 SGD {sgd:.3f}, IL-Adam {il:.3f} (gap {gap:.1f} points)",
                         bool(passed))]
    if "adam" in roles:
        adam = final[roles["adam"]]
        floor = limits.adam_baseline_above if limits.adam_baseline_above is not None else sgd
        checks.append(ClaimCheck("C10", "fig_8", "Adam by itself does better (over 70%): the loss is due to solving "
                                 "the linearisations, not to Adam",
                                 f"plain Adam final test accuracy ≥ {'K = 1 SGD' if limits.adam_baseline_above is None else f'{floor:.0%}'}",
                                 f"Adam {adam:.3f}, K = 1 SGD {sgd:.3f}", bool(adam >= floor)))
    ends = runs[(runs["setting"] == roles["il_adam"]) & (runs["point"] == "before_relinearisation")]
    worst = float(ends["train_accuracy_linearised"].min()) if len(ends) else float("nan")
    checks.append(ClaimCheck("C10", "fig_8", "each linearisation is fully optimised (100% train accuracy)",
                             f"training accuracy of the linearised model ≥ {limits.period_fit:.0%} at the end of "
                             "every period", f"lowest {worst:.4f} over {len(ends)} periods",
                             bool(len(ends) and worst >= limits.period_fit) if len(ends) else None))
    return checks


def damping_checks(summary: pd.DataFrame, drawn: list[float], train_rmse_limit: float) -> list[ClaimCheck]:
    """C11: more damping, lower and more consistent test RMSE, similar minima, smoother functions."""
    kept = kept_runs(summary, train_rmse_limit)
    stats = kept.groupby("damping")["test_rmse"].agg(["mean", "std", "min"])
    smallest, largest = stats.index.min(), stats.index.max()
    factor = stats.loc[smallest, "mean"] / stats.loc[largest, "mean"]
    rho = rank_correlation(stats["mean"])
    spread = stats["min"].max() / stats["min"].min()
    variation = kept.groupby("damping")["total_variation"].mean()
    return [
        ClaimCheck("C11", "fig_9", "increasing damping lowers the mean test RMSE and makes it more consistent",
                   "mean test RMSE at the largest λ at least 5× lower than at the smallest λ, and its std lower",
                   f"mean {stats.loc[smallest, 'mean']:.3g} → {stats.loc[largest, 'mean']:.3g} (×{factor:.1f}), "
                   f"std {stats.loc[smallest, 'std']:.3g} → {stats.loc[largest, 'std']:.3g}",
                   bool(factor >= 5 and stats.loc[largest, "std"] < stats.loc[smallest, "std"])),
        ClaimCheck("C11", "fig_9", "the mean test RMSE falls as damping grows",
                   "Spearman ρ(λ, mean test RMSE) ≤ −0.8", f"ρ {rho:.3f}", bool(rho <= -0.8)),
        ClaimCheck("C11", "fig_9", "the minimum test RMSEs are similar across damping values",
                   "largest / smallest per-λ minimum test RMSE ≤ 4", f"{spread:.2f}", bool(spread <= 4)),
        ClaimCheck("C11", "fig_9", "the learnt functions become smoother as damping increases",
                   f"mean total variation on the test grid at λ = {max(drawn):g} < at λ = {min(drawn):g}",
                   f"{variation.get(min(drawn), float('nan')):.3g} → {variation.get(max(drawn), float('nan')):.3g}",
                   bool(variation.get(max(drawn), np.inf) < variation.get(min(drawn), -np.inf))),
    ]


def identity_checks(differences: dict[str, float], steps: int, limits: Thresholds) -> list[ClaimCheck]:
    """C12: IL with K = 1 takes the steps of ordinary training."""
    tolerance = dict(limits.identity)
    return [ClaimCheck("C12", "fig_2", "iterative linearisation with K = 1 is (stochastic) gradient descent",
                       f"max |θ_IL(K=1) − θ_SGD| after {steps} steps ≤ {tolerance[dtype]:g} in {dtype}",
                       f"{difference:.3g}", bool(difference <= tolerance[dtype]))
            for dtype, difference in differences.items()]


def best_accuracy_check(runs: pd.DataFrame, limits: Thresholds) -> list[ClaimCheck]:
    """C13: the CNN "only gets to maximum ∼80%" on CIFAR-10 (a paper-scale statement)."""
    cnn = scheduled(runs[runs["experiment"].isin(["full_batch", "mini_batch", "augmented", "adam", "data_scaling"])])
    best = float(cnn["test_accuracy_network"].max()) if len(cnn) else float("nan")
    return [ClaimCheck("C13", "fig_3", "the CNN only gets to about 80% on CIFAR-10",
                       "best CNN test accuracy across the figures ≤ "
                       + (f"{limits.best_accuracy_cap:.0%}" if limits.best_accuracy_cap else "(paper scale only)"),
                       f"{best:.3f}", bool(best <= limits.best_accuracy_cap) if limits.best_accuracy_cap else None)]


# --- the manifest's claim sets (src/linearlens/manifests/iterative_linearisation.py) -----------

def _limits(job: ClaimsJob) -> Thresholds:
    return THRESHOLDS[job.params["claim_thresholds"]]


def full_batch_claims(job: ClaimsJob) -> list[ClaimCheck]:
    return finite_k_checks(read_records(job.inputs["runs"]), "C1", "full batch", _limits(job))


def mini_batch_claims(job: ClaimsJob) -> list[ClaimCheck]:
    return finite_k_checks(read_records(job.inputs["runs"]), "C2", "mini-batch", _limits(job))


def batch_mode_claims(job: ClaimsJob) -> list[ClaimCheck]:
    return batch_mode_checks(read_records(job.inputs["full_batch"]), read_records(job.inputs["mini_batch"]), _limits(job))


def augmented_claims(job: ClaimsJob) -> list[ClaimCheck]:
    return augmented_checks(read_records(job.inputs["runs"]), _limits(job))


def resnet_claims(job: ClaimsJob) -> list[ClaimCheck]:
    return resnet_checks({panel: read_records(paths) for panel, paths in job.inputs.items()}, _limits(job))


def scaling_claims(job: ClaimsJob) -> list[ClaimCheck]:
    return scaling_checks(read_records(job.inputs["runs"]), _limits(job))


def probe_claims(job: ClaimsJob) -> list[ClaimCheck]:
    return probe_checks(read_records(job.inputs["probes"]), _limits(job))


def filter_claims(job: ClaimsJob) -> list[ClaimCheck]:
    from ..experiments.iterative_linearisation import first_layer_changes  # reads checkpoints: torch

    filters = job.params["filters"]
    changes, _ = first_layer_changes(job.inputs["checkpoints"], filters.get("seed", 0))
    return filter_checks(changes, filters["n_filters"], _limits(job))


def adam_claims(job: ClaimsJob) -> list[ClaimCheck]:
    return adam_checks(read_records(job.inputs["runs"]), _limits(job))


def damping_claims(job: ClaimsJob) -> list[ClaimCheck]:
    damping = job.params
    return damping_checks(read_runs(job.inputs["summaries"]), damping["drawn"]["dampings"],
                          damping["train_rmse_limit"])


def identity_claims(job: ClaimsJob) -> list[ClaimCheck]:
    identity = json.loads(Path(job.inputs["identity"][0]).read_text())
    return identity_checks(identity["max_abs_difference"], identity["steps"], _limits(job))


def best_accuracy_claims(job: ClaimsJob) -> list[ClaimCheck]:
    return best_accuracy_check(read_records(job.inputs["runs"]), _limits(job))
