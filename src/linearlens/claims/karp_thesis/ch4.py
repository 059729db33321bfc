"""Chapter 4, a one-layer transformer learning decision lists: the claims of Fig 4.1 (Sec 4.3.4),
as checks over the one-step run.

==== ========= =====================================================================================
id   figure    statement (the check)
==== ========= =====================================================================================
DL1  fig_4_1   the cP structure is picked up in one step: every column a of V₁ peaks at row π(a)
               (thesis figure; a numpy re-run: 100%; fraction of input columns ≥ 99%)
DL2  fig_4_1   c = mean V₁[π(a), a] against its first-order population value (a numpy re-run: ≈ 7.0 at
               L = 200, n = 25, η = L²; relative deviation ≤ 2%)
DL3  fig_4_1   the rest of V₁: largest and mean off-structure entries, the secondary band V₁[π(a), a − 10]
               (informative: a numpy re-run: 0.75 at N = 10,000, −0.035, 0.64)
==== ========= =====================================================================================

The first-order value of V₁[π(a), a] is η/(n·L_in)·(E[#{j: y_j = π(a)} | a ∈ s] − n/|vocabulary|)
(the run computes the expectation exactly per token). Its mean over a is nearly free of sampling
error: every label of a sequence is π of a token of that sequence, so Σ_{a ∈ s} #{j: y_j = π(a)} = n
for every s, and the sampled mean of c departs from η/(n·L_in)·(1 − n/|vocabulary|) only through
softmax(V₀ p) ≠ uniform. DL2 is therefore a check of the step's arithmetic (labels, η, the gradient's
sign and scale), not of the sample size; the per-column spread around the per-token values is
sampling noise and is reported beside it.

Decisions where the thesis gives no number (this project's readings): "every column" reads as ≥ 99% of the input
columns; DL2's 2% tolerance; the off-structure numbers carry no verdict, since
the thesis only shows the picture.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...analysis.karp_thesis.ch4 import read_one_step, structure_summary, vocabulary_text
from ...manifests.jobs import ClaimsJob
from .. import ClaimCheck


@dataclass(frozen=True)
class StructureThresholds:
    """Chapter 4's pass criteria, read from ``karp_thesis.claim_thresholds.structure``."""

    columns_at_permutation: float  # DL1: fraction of input columns whose argmax row is π(a)
    structure_tolerance: float  # DL2: |c − c_first_order| / c_first_order at most this


SPEC_REFERENCE = {"structure_mean": 7.00, "largest_off_structure_mean": 0.75, "off_structure_mean": -0.035,
                  "secondary_band_mean": 0.64}  # a numpy re-run at L = 200, n = 25, η = L², N = 10,000, seed 0


def decision_list_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """DL1-DL3 on the one-step run (none when the job has no run)."""
    if not job.inputs.get("one_step"):
        return []
    limits = StructureThresholds(**job.params["thresholds"])
    record = read_one_step(job.inputs["one_step"][0])
    summary = structure_summary(record)
    setting = _setting(record["settings"])
    return [permutation_check(summary, setting, limits), structure_check(summary, setting, limits),
            off_structure_check(summary, setting)]


def _setting(settings: dict) -> str:
    return (f"L = {settings['vocabulary_length']}, n = {settings['sequence_length']}, "
            f"η = {settings['learning_rate']:,g}, N = {settings['sequences']:,}, seed {settings['seed']}; "
            f"{vocabulary_text(settings)}")


def permutation_check(summary: dict, setting: str, limits: StructureThresholds) -> ClaimCheck:
    fraction = summary["fraction_at_permutation"]
    return ClaimCheck(
        "DL1", "fig_4_1", "after one gradient step under uniform attention (W = 0), V picks up the cP structure: "
        "each column a of V₁ is largest at row π(a) (spec reference: 100% of the columns)",
        f"{setting}: the fraction of input columns a whose largest entry is at row π(a) ≥ "
        f"{limits.columns_at_permutation:.0%}",
        f"{fraction:.1%} of {summary['columns']} columns ({round(fraction * summary['columns'])} at π(a))",
        bool(fraction >= limits.columns_at_permutation))


def structure_check(summary: dict, setting: str, limits: StructureThresholds) -> ClaimCheck:
    measured, expected = summary["structure_mean"], summary["analytic_structure_mean"]
    deviation = abs(measured - expected) / abs(expected) if expected else float("inf")
    return ClaimCheck(
        "DL2", "fig_4_1", "the structure entry c = mean V₁[π(a), a] is η/(n·L)·(E[#{j: y_j = π(a)} | a ∈ s] − "
        f"n/(L + 1)) (spec reference {SPEC_REFERENCE['structure_mean']:.2f} at L = 200, n = 25, η = L²)",
        f"{setting}: |c − c_population| / c_population ≤ {limits.structure_tolerance:.0%}, c_population the mean over "
        "the input tokens of the exact first-order population value",
        f"c = {measured:.3f} against {expected:.3f} (deviation {deviation:.2%}); per column "
        f"{summary['structure_min']:.2f}-{summary['structure_max']:.2f}, RMS deviation from the per-token population "
        f"values {summary['analytic_rms_deviation']:.3f} (sampling noise)",
        bool(deviation <= limits.structure_tolerance))


def off_structure_check(summary: dict, setting: str) -> ClaimCheck:
    reference, largest = SPEC_REFERENCE, summary["largest_off_structure_mean"]
    ratio = f" (c / that = {summary['structure_mean'] / largest:.1f})" if largest > 0 else ""
    return ClaimCheck(
        "DL3", "fig_4_1", "away from the structure V₁ stays small: the largest off-structure entry per column, the "
        "mean off-structure entry, and a faint secondary band V₁[π(a), a − 10] (tokens whose label-determining "
        "token is a)",
        f"informative, {setting} (spec reference at N = 10,000, seed 0: {reference['largest_off_structure_mean']:.2f}, "
        f"{reference['off_structure_mean']:.3f}, {reference['secondary_band_mean']:.2f})",
        f"largest off-structure entry per column {largest:.3f} on average{ratio}; mean off-structure "
        f"entry {summary['off_structure_mean']:.4f}; secondary band {summary['secondary_band_mean']:.3f}",
        None, note="not evaluated: informative, the thesis states no size for 'small' off the structure")
