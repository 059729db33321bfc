"""Chapter 3 and Appendix B, local signal adaptivity (a CNN against its tangent kernel): the claims
of Figs 3.2-3.5 and Tables 3.1, B.1 (Fig 3.1 is photographs, listed only), as checks over the
runs; ``local_signal_claims`` checks those of every configured experiment (inputs by name)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...analysis.karp_thesis.ch3 import (
    MODEL_LABELS,
    STILL_LEARNING_POINTS,
    TOY_THESIS,
    final_accuracies,
    last_gains,
    read_toy_run,
    table_3_1_frame,
    table_b_1_frame,
    toy_linear_ceiling,
    trend,
)
from ...manifests.jobs import ClaimsJob
from .. import ClaimCheck


def local_signal_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """Every chapter-3 check whose runs are among the job's inputs; absent inputs skip theirs."""
    checks = []
    if job.inputs.get("toy"):
        checks += toy_claims(read_toy_run(job.inputs["toy"]), job.params["toy"],
                             ToyThresholds(**job.params["thresholds"]["toy"]))
    return checks + noisy_image_claims(job)


def _num(value: float, digits: int = 3) -> str:
    return "n/a" if not np.isfinite(value) else f"{value:.{digits}f}".replace("-", "−")


def _signed(value: float, digits: int = 3) -> str:
    return "n/a" if not np.isfinite(value) else f"{value:+.{digits}f}".replace("-", "−")


# --- Fig 3.3: the LSA toy model (Sec 3.3, Algorithm 3.1) ---
#
# ==== ======= ==================================================================================
# id   figure  statement (the check)
# ==== ======= ==================================================================================
# T1   fig_3_3 w·w* increases (Spearman ρ with the step ≥ 0.8, last above first)
# T2   fig_3_3 b decreases, negative with growing magnitude (ρ ≤ −0.8, last below first, last < 0)
# T3   fig_3_3 |b|/(w·w*) increases (ρ ≥ 0.8 over the evaluations with w·w* > 0, last above first)
# T4   fig_3_3 test accuracy increases (ρ ≥ 0.8, last above first)
# T5   fig_3_3 the final accuracy is well above the linear classifier's Φ(1/(√(k − 1)σ)) (≥ 0.05 above)
# T6   fig_3_3 paper scale: final accuracy in [0.72, 0.86] at 10,000 steps (ours: a numpy re-run reached 0.789)
# T7   fig_3_3 paper scale: final |b|/(w·w*) in [0.35, 0.55] at 10,000 steps (ours: a numpy re-run reached 0.44)
# T8   fig_3_3 b's short positive phase, b/(w·w*) = O(1/k) while b > 0 (informative, Sec 3.4)
# ==== ======= ==================================================================================
#
# The thesis states the trends without numbers (Fig 3.3's caption, Sec 3.4): "increases" reads as a
# Spearman rank correlation with the step of at least 0.8 (a strong monotone trend over the
# evaluations, robust to the ±0.007 sampling noise of one evaluation's accuracy) and a last value
# beyond the first; "well above" the linear ceiling as at least 0.05 above it. The same at both
# scales. The acceptance bands T6, T7 (ours: the thesis gives no final numbers) are for the thesis's
# 10,000 steps: other runs leave them unevaluated (None).


@dataclass(frozen=True)
class ToyThresholds:
    trend: float  # T1-T4: |Spearman ρ| with the step at least this
    above_ceiling: float  # T5: final accuracy at least this above the linear classifier's
    final_accuracy: list[float] | None  # T6: the band [low, high], where it applies
    final_ratio: list[float] | None  # T7: the band [low, high], where it applies


TOY_TRENDS = (  # T1-T4: (id, column, sign of the trend, statement)
    ("T1", "w_dot_wstar", +1, "as training progresses, w·w* increases"),
    ("T2", "b", -1, "b decreases (b < 0, with increasing magnitude)"),
    ("T3", "ratio", +1, "the ratio |b|/|w·w*| increases (more and more noise is thresholded out)"),
    ("T4", "test_accuracy", +1, "the test accuracy increases correspondingly"),
)


def _trend_check(frame: pd.DataFrame, claim_id: str, column: str, sign: int, statement: str,
                 limits: ToyThresholds) -> ClaimCheck:
    rows = frame[frame["w_dot_wstar"] > 0] if column == "ratio" else frame  # the ratio's sign needs w·w* > 0
    summary = trend(rows, column)
    rho, change = summary["rho"], summary["change"]
    negative = column == "b"  # b also ends negative
    passed = None if not np.isfinite(rho) else bool(sign * rho >= limits.trend and sign * change > 0
                                                     and (summary["last"] < 0 or not negative))
    ends = " and last < 0" if negative else ""
    direction = "≥ " if sign > 0 else "≤ −"
    return ClaimCheck(claim_id, "fig_3_3", statement,
                      f"Spearman ρ(step, {column}) {direction}{limits.trend:g} and last {'>' if sign > 0 else '<'} "
                      f"first{ends} ({len(rows)} evaluations)",
                      f"ρ = {_num(rho)}; {_num(summary['first'], 4)} at step {int(rows['step'].iloc[0]):,} → "
                      f"{_num(summary['last'], 4)} at step {int(rows['step'].iloc[-1]):,}", passed,
                      note="" if passed is not None else "not evaluated: the trend is undefined (constant values or "
                      "fewer than two evaluations)")


def _band_check(claim_id: str, statement: str, value: float, band, last_step: int, quantity: str) -> ClaimCheck:
    thesis_steps = TOY_THESIS["steps"]
    if band is None:
        return ClaimCheck(claim_id, "fig_3_3", statement, f"{quantity} in the band (paper scale only)",
                          f"{_num(value)} at step {last_step:,}", None,
                          note="not evaluated at this scale: the band is for the thesis's settings, run at paper "
                          "scale only")
    low, high = band
    check = f"{quantity} at step {thesis_steps:,} in [{low:g}, {high:g}]"
    if last_step != thesis_steps:
        return ClaimCheck(claim_id, "fig_3_3", statement, check,
                          f"{_num(value)} at step {last_step:,}", None,
                          note=f"not evaluated: the run ends at step {last_step:,}, not the thesis's {thesis_steps:,}")
    return ClaimCheck(claim_id, "fig_3_3", statement, check, f"{_num(value)}", bool(low <= value <= high))


def toy_claims(frame: pd.DataFrame, spec: dict, limits: ToyThresholds) -> list[ClaimCheck]:
    """T1-T8 on one run's evaluations (``TOY_COLUMNS``)."""
    checks = [_trend_check(frame, *trend_spec, limits) for trend_spec in TOY_TRENDS]
    last = frame.iloc[-1]
    last_step = int(last.step)
    ceiling = toy_linear_ceiling(spec)
    margin = last.test_accuracy - ceiling
    checks.append(ClaimCheck(
        "T5", "fig_3_3", "the LSA model's accuracy rises well above the linear classifier's, which fails with "
        "probability about 1/2 (Sec 3.3: Φ(1/log k) = 0.558 at k = 1000)",
        f"final test accuracy − Φ(1/(√(k − 1)·σ)) ≥ {limits.above_ceiling:g}",
        f"{_num(last.test_accuracy)} at step {last_step:,} against {_num(ceiling)} ({_signed(margin)})"
        if np.isfinite(margin) else "n/a", None if not np.isfinite(margin) else bool(margin >= limits.above_ceiling),
        note="" if np.isfinite(margin) else "not evaluated: the final accuracy or the linear ceiling is undefined"))
    checks.append(_band_check("T6", "final test accuracy of the reproduction at the thesis's settings (spec §11.1: "
                              "0.789 in a numpy re-run; DEFAULT acceptance band)", float(last.test_accuracy),
                              limits.final_accuracy, last_step, "final test accuracy"))
    checks.append(_band_check("T7", "final |b|/(w·w*) at the thesis's settings (spec §11.1: 0.44 in a numpy re-run; "
                              "DEFAULT acceptance band)", float(last.ratio), limits.final_ratio, last_step,
                              "final |b|/(w·w*)"))
    k = spec["k"]
    checks.append(ClaimCheck(
        "T8", "fig_3_3", "there is a short phase at the start during which b grows positive; η_b/η_w = 1/k keeps "
        "|b|/|w·w*| ≤ Θ(1/k) while b > 0 (Sec 3.4, informative: no constant is stated)",
        "largest b, steps with b > 0, largest k·b/(w·w*) while b > 0 (tracked every step)",
        f"b peaked at {last.b_peak:.3g}, positive after {int(last.b_positive_steps)} of {last_step:,} steps; "
        f"k·b/(w·w*) ≤ {k * last.positive_ratio_peak:.3g}", None,
        note="not evaluated: informative, the thesis states the order Θ(1/k) without a constant"))
    return checks


# --- Figs 3.2, 3.4, Tables 3.1, B.1: the network against its linearisation on noisy images ---
#
# ==== ========= ===================================================================================
# id   figure    statement (the check)
# ==== ========= ===================================================================================
# L1   table_3_1 the NTK degrades while the WRN barely moves: NTK's lost share ≥ 2× the WRN's, every setting
# L2   table_3_1 the WRN keeps > 96% everywhere (paper scale)
# L3   table_3_1 the NTK keeps < 70% on CIFAR-10 with ImageNet noise (paper scale)
# L4   table_B_1 the degradation gap persists: the NTK loses more points than the WRN, every size × placement
# L5   table_B_1 placement ordering fixed corner > random corner > random location (mean accuracy)
# L6   table_B_1 every model is better on the larger images (mean accuracy; needs both sizes)
# L7   table_B_1 every cell within ±1.5 points of the thesis (paper scale)
# L8   fig_3_2   the WRN's layers grow sparser over training
# ==== ========= ===================================================================================
#
# Decisions where the thesis gives no number (this project's readings): "virtually all models" (L5) reads as the
# ordering of the accuracies averaged over sizes, models and levels (the thesis's own table passes it,
# its four (size, model) rows do not all); "increasingly sparse" (L8) as: the mean active fraction over
# layers falls from the first evaluated epoch to the last, and at least half the layers fall. L2, L3
# and L7 compare with the thesis's numbers, which only the paper-scale runs can meet: at quick scale
# they carry the measured number and no verdict. L1, L4 and L5 compare trained models (the thesis's
# 200 epochs): where a run they read was still learning when its epoch cap stopped it (its test
# accuracy rose by more than ``still_learning`` points over its last evaluation interval), they are
# not evaluated, with the runs and their gains in the note.

PLACEMENT_ORDER = ("fixed_corner", "random_corner", "random_loc")  # best first (App. B.4)


@dataclass(frozen=True)
class LocalSignalThresholds:
    degrades_by: float  # L1: the NTK's lost share at least this × the WRN's (a reading; the thesis's least 4.6)
    network_keeps: float  # L2: % of the zero-noise accuracy
    ntk_keeps_at_most: float  # L3
    table_tolerance: float  # L7: points per cell
    sparser_layers: float  # L8: the fraction of layers whose active fraction falls
    against_thesis: bool  # L2, L3, L7 are asserted
    # L1, L4, L5: a run gaining more over its last interval; not a scale setting: the figures mark
    # the same runs with this constant
    still_learning: float = STILL_LEARNING_POINTS


def noisy_image_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """Every noisy-image check whose runs are among the job's inputs (none without them)."""
    limits = LocalSignalThresholds(**job.params["thresholds"]["local_signal"])
    checks = []
    if job.inputs.get("runs"):
        runs = pd.concat([pd.read_csv(path) for path in job.inputs["runs"]], ignore_index=True)
        final, gains = final_accuracies(runs), last_gains(runs)
        spec = job.params["spec"]
        images = spec["images"]
        figure_runs = [(name, s["placement"], s["size"]) for name, s in images["settings"].items()]
        checks += retained_checks(table_3_1_frame(final, images["settings"]), limits,
                                  _learning(gains, figure_runs, limits), _training_text(spec))
        table = images.get("table_B_1")
        if table:
            table_runs = [(table["setting"], placement, size) for placement in table["placements"]
                          for size in table["sizes"]]
            checks += table_b_1_checks(table_b_1_frame(final, table, images["sizes"]), limits,
                                       _learning(gains, table_runs, limits))
    if job.inputs.get("sparsity"):
        checks.append(sparsity_check(pd.read_csv(job.inputs["sparsity"][0]), limits))
    return checks


def _learning(gains: pd.DataFrame, runs, limits: LocalSignalThresholds) -> pd.DataFrame:
    """The runs among ``runs`` ((setting, placement, size) triples) still learning when they stopped."""
    keys = gains["variant"].str.split("/").str[1].str.rsplit("-", n=1)
    read = np.array([(setting, placement, size) in runs for setting, (placement, size) in zip(gains["setting"], keys)],
                    dtype=bool)
    chosen = gains[read]
    return chosen[chosen["gain"] > limits.still_learning]


def _still_learning_note(learning: pd.DataFrame, limits: LocalSignalThresholds) -> str:
    listed = "; ".join(f"{MODEL_LABELS[row.model]} {row.variant} +{row.gain:.1f} over epochs {row.since:g}-{row.epoch:g}"
                       for row in learning.sort_values("gain", ascending=False).itertuples())
    return (f"not evaluated at this scale: {len(learning)} of the runs it compares were still learning when their "
            f"epoch cap stopped them (test accuracy up by more than {limits.still_learning:g} points over the last "
            f"evaluation interval: {listed}), so their final accuracies are not the trained models' the thesis "
            "compares")


def _verdict(passed: bool, learning: pd.DataFrame, limits: LocalSignalThresholds, note: str = "") -> dict:
    """A check's verdict and note: none on runs still learning."""
    if len(learning):
        return {"passed": None, "note": _still_learning_note(learning, limits) + (f"; {note}" if note else "")}
    return {"passed": passed, "note": note}


def _training_text(spec: dict) -> str:
    model = spec["model"]
    return (f"the stand-in WRN (widths {'-'.join(str(w) for w in model['widths'])}) trains "
            f"{spec['network']['epochs']} epochs and its NTK {spec['linearisation']['epochs']}")


def retained_checks(table: pd.DataFrame, limits: LocalSignalThresholds, learning: pd.DataFrame | None = None,
                    training: str = "the stand-in WRN and its NTK train briefly") -> list[ClaimCheck]:
    learning = learning if learning is not None else pd.DataFrame(columns=["gain"])
    by_model = {model: table[table["model"] == label].set_index("setting")["retained_pct"]
                for model, label in (("network", "WRN"), ("linearisation", "NTK"))}
    lost = {model: 100.0 - retained for model, retained in by_model.items()}
    ratios = lost["linearisation"] / lost["network"].clip(lower=1e-9)
    listed = "; ".join(f"{setting}: WRN keeps {by_model['network'][setting]:.1f}%, NTK "
                       f"{by_model['linearisation'][setting]:.1f}% (NTK loses {ratios[setting]:.2f}× as much)"
                       for setting in ratios.index)
    checks = [ClaimCheck("L1", "table_3_1", "As the noise grows the NTK's performance decreases significantly while "
                         "the WRN's is relatively unaffected (Table 3.1: the WRN retains 96.8-99.8%, the NTK "
                         "69.8-92.8%)",
                         f"in every setting the NTK loses at least {limits.degrades_by:g}× the share of its zero-noise "
                         f"accuracy the WRN loses (DEFAULT; measured: the smallest ratio; {listed})",
                         round(float(ratios.min()), 2),
                         **_verdict(bool((ratios >= limits.degrades_by).all()), learning, limits,
                                    _stand_in_note(table, training)),
                         failure_reason="stand_in",
                         document_threshold="thesis's own smallest ratio: 4.6 (CIFAR-2, Gaussian noise)")]
    network_min = float(by_model["network"].min())
    checks.append(ClaimCheck("L2", "table_3_1", "The WRN retains more than 96% of its accuracy in every setting",
                             f"min retained(WRN) > {limits.network_keeps:g}%"
                             + ("" if limits.against_thesis else " (asserted at paper scale only: the quick "
                                                                 "stand-in's levels and data differ)"),
                             round(network_min, 2),
                             network_min > limits.network_keeps if limits.against_thesis else None,
                             note="" if limits.against_thesis else "not evaluated at this scale: the thesis's number needs its data, network and noise levels (paper scale); the quick stand-in's differ"))
    imagenet = [s for s in by_model["linearisation"].index if s.startswith("CIFAR-10")]
    if imagenet:
        ntk = float(by_model["linearisation"][imagenet[0]])
        checks.append(ClaimCheck("L3", "table_3_1", "The NTK retains less than 70% on CIFAR-10 with ImageNet noise",
                                 f"retained(NTK, {imagenet[0]}) < {limits.ntk_keeps_at_most:g}%"
                                 + ("" if limits.against_thesis else " (asserted at paper scale only)"),
                                 round(ntk, 2), ntk < limits.ntk_keeps_at_most if limits.against_thesis else None,
                                 note="" if limits.against_thesis else "not evaluated at this scale: the thesis's number needs its data, network and noise levels (paper scale); the quick stand-in's differ"))
    return checks


def _stand_in_note(table: pd.DataFrame, training: str) -> str:
    """What the quick stand-in changes about Table 3.1's comparison (quick scale's levels and models)."""
    gaussian = table[table["setting"].str.contains("Gaussian")]
    level = f"the Gaussian setting's largest σ here is {gaussian['max_level'].iloc[0]:g} (thesis: σ = 2); " \
        if len(gaussian) else ""
    zero = table.set_index(["model", "setting"])["accuracy_no_noise"].unstack(0)
    start = float((zero["WRN"] - zero["NTK"]).max()) if {"WRN", "NTK"} <= set(zero.columns) else float("nan")
    return (f"{level}{training} on stand-in data (digits, photograph crops), and the NTK starts up to {start:.1f} "
            "points below the WRN without noise, so 'retained' divides by different zero-noise accuracies")


def placement_means(table: pd.DataFrame) -> pd.Series:
    """Mean accuracy (%) per placement over every size, model and level of Table B.1."""
    return table.groupby("placement")["accuracy_pct"].mean()


def table_b_1_checks(table: pd.DataFrame, limits: LocalSignalThresholds,
                     learning: pd.DataFrame | None = None) -> list[ClaimCheck]:
    learning = learning if learning is not None else pd.DataFrame(columns=["gain"])
    wide = table.pivot_table(index=["size_key", "placement"], columns=["model", "sigma"], values="accuracy_pct")
    lowest, highest = table["sigma"].min(), table["sigma"].max()
    drops = {model: wide[(model, lowest)] - wide[(model, highest)] for model in ("WRN", "NTK")}
    gaps = drops["NTK"] - drops["WRN"]
    checks = [ClaimCheck("L4", "table_B_1", "The gap in WRN vs NTK performance degradation persists in all cases",
                         f"in every size × placement the NTK's accuracy falls by more points than the WRN's from "
                         f"σ = {lowest:g} to σ = {highest:g} ({int((gaps > 0).sum())}/{len(gaps)} do; measured: the "
                         "smallest NTK-minus-WRN drop in points)", round(float(gaps.min()), 2),
                         **_verdict(bool((gaps > 0).all()), learning, limits), failure_reason="stand_in")]
    means = placement_means(table)
    present = [p for p in PLACEMENT_ORDER if p in means.index]
    if len(present) > 1:
        ordered = all(means[a] > means[b] for a, b in zip(present, present[1:]))
        checks.append(ClaimCheck("L5", "table_B_1", "Placement ordering fixed corner > random corner > random "
                                 "location for virtually all models",
                                 "mean accuracy over sizes, models and levels ordered "
                                 + " > ".join(f"{p} {means[p]:.2f}" for p in present),
                                 round(float(means[present[0]] - means[present[-1]]), 2),
                                 **_verdict(ordered, learning, limits)))
    sizes = table["size_key"].unique()
    size_means = table.groupby(["model", "size_key"])["accuracy_pct"].mean().unstack()
    if {"small", "large"} <= set(sizes):
        gains = size_means["large"] - size_means["small"]
        checks.append(ClaimCheck("L6", "table_B_1", "All models are better on the larger images",
                                 "mean accuracy on 32 on 64 > on 16 on 32, for each model (measured: the "
                                 "smaller gain in points)", round(float(gains.min()), 2), bool((gains > 0).all())))
    else:
        checks.append(ClaimCheck("L6", "table_B_1", "All models are better on the larger images",
                                 "needs both image sizes; this configuration runs only " + ", ".join(sizes),
                                 None, None, note="not evaluated at this scale: the configuration runs one image "
                                 "size (" + ", ".join(sizes) + "); the comparison needs both"))
    compared = table.dropna(subset=["thesis_pct"])
    worst = float(compared["difference"].abs().max()) if len(compared) else float("nan")
    evaluable = limits.against_thesis and len(compared) == len(table)
    checks.append(ClaimCheck("L7", "table_B_1", "Table B.1's accuracies (single-seed runs)",
                             f"every cell within ±{limits.table_tolerance:g} points of the thesis (measured: the "
                             f"largest difference over {len(compared)} comparable cells)"
                             + ("" if limits.against_thesis else "; asserted at paper scale only"),
                             round(worst, 2) if np.isfinite(worst) else None,
                             worst <= limits.table_tolerance if evaluable else None,
                             note="" if evaluable else "not evaluated at this scale: the thesis's cells need its data, "
                             "network and noise levels (paper scale), and every cell a thesis value"))
    return checks


def sparsity_check(rows: pd.DataFrame, limits: LocalSignalThresholds) -> ClaimCheck:
    """L8 from the first evaluation after training starts (epoch ≥ 1) to the last."""
    layers = [column for column in rows.columns if column.startswith("active_relu")]
    trained = rows[rows["epoch"] >= 1].sort_values("epoch")
    first, last = trained.iloc[0], trained.iloc[-1]
    falling = [layer for layer in layers if last[layer] < first[layer]]
    mean_change = float(np.mean([last[layer] - first[layer] for layer in layers]))
    passed = mean_change < 0 and len(falling) >= limits.sparser_layers * len(layers)
    return ClaimCheck("L8", "fig_3_2", "The intermediate layers become increasingly sparse over training",
                      f"mean active fraction over the {len(layers)} ReLU layers falls from epoch {first['epoch']:g} "
                      f"to {last['epoch']:g}, and at least {limits.sparser_layers:.0%} of the layers fall "
                      f"({len(falling)} do; measured: the mean change)", round(mean_change, 4), passed)
