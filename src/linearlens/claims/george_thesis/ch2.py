"""Claims for Chapter 2 (background). The thesis's claims about Fig 2.1 (four Gaussians equally far apart in
parameters but not as distributions; analytic). Fig 2.2 (tangent spaces and learning paths) is a drawing,
in the figures module only."""

from __future__ import annotations

from dataclasses import dataclass

from ...analysis.george_thesis.ch2 import pair_table, read_gaussians
from ...manifests.jobs import ClaimsJob
from .. import ClaimCheck


@dataclass(frozen=True)
class GaussianThresholds:
    """Example 4 (§2.4.1) read as numbers. "Equally distant in the parameter space": both distances 1 to
    round-off. "Very similar" vs "very different" distributions: the symmetrised KL of (C, D) at least an
    order of magnitude above that of (A, B). The 95% intervals of A and B "largely overlap": their
    intersection is at least half their union; those of C and D "do not overlap much": at most a quarter
    (half of the bar for "largely")."""

    distance_tolerance: float
    kl_ratio: float
    large_overlap: float
    small_overlap: float


def gaussians_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """Example 4 / Fig 2.1: equal parameter distances, very different distributions."""
    limits = GaussianThresholds(**job.params["thresholds"])
    table = pair_table(read_gaussians(job.inputs["run"][0]))
    ab, cd = table.loc["AB"], table.loc["CD"]
    mass = f"{job.params['spec']['interval_mass']:.0%}"
    distances_equal = all(abs(d - 1) <= limits.distance_tolerance for d in table["parameter_distance"])
    ratio = cd["kl_symmetric"] / ab["kl_symmetric"]
    kl_text = (f"KL(A‖B) + KL(B‖A) = {ab['kl_symmetric']:.4f} nats, KL(C‖D) + KL(D‖C) = {cd['kl_symmetric']:.4f} "
               f"nats, ratio {ratio:.1f} (KL(A‖B) {ab['kl_forward']:.4f}, KL(C‖D) {cd['kl_forward']:.4f}; one "
               f"sample tells A from B with accuracy {ab['bayes_accuracy']:.3f}, C from D with "
               f"{cd['bayes_accuracy']:.3f})")
    return [
        ClaimCheck("Ex4", "fig_2_1", "d_parameter(f^A, f^B) = d_parameter(f^C, f^D) = 1 in (μ, σ²) (eq. 2.4.2)",
                   f"both Euclidean distances equal 1 within {limits.distance_tolerance:g}",
                   f"d(A, B) = {ab['parameter_distance']:.15g}, d(C, D) = {cd['parameter_distance']:.15g}",
                   bool(distances_equal)),
        ClaimCheck("Ex4", "fig_2_1", "equally distant in parameter space, A and B are very similar distributions "
                   "while C and D are very different",
                   f"symmetrised KL of (C, D) ≥ {limits.kl_ratio:g} × that of (A, B)", kl_text,
                   bool(ratio >= limits.kl_ratio)),
        ClaimCheck("Ex4", "fig_2_1", f"the {mass} quantile intervals of f^A and f^B largely overlap",
                   f"intersection / union of the two intervals ≥ {limits.large_overlap:g}",
                   f"{ab['interval_overlap']:.3f}", bool(ab["interval_overlap"] >= limits.large_overlap)),
        ClaimCheck("Ex4", "fig_2_1", f"the {mass} quantile intervals of f^C and f^D do not overlap much",
                   f"intersection / union of the two intervals ≤ {limits.small_overlap:g}",
                   f"{cd['interval_overlap']:.3f}", bool(cd["interval_overlap"] <= limits.small_overlap)),
    ]
