"""Claims for Chapter 6 (NTK alignment) and appendix B. The thesis's claims about Figs 6.1-6.6 and B.1-B.8
(tangent-kernel spectrum, alignment with the labels, SuperNat, complexity measures); Fig 6.5's left half is
an algorithm box, drawn with its curves."""

from __future__ import annotations

from dataclasses import dataclass

from ...analysis.george_thesis.ch6 import perturbation_summary, read_perturbation_runs
from ...manifests.jobs import ClaimsJob
from .. import ClaimCheck

# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and its alignment with the labels over training (alignment) ---

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

@dataclass(frozen=True)
class PerturbationThresholds:
    ratio: float  # H26: mean change along the top directions / mean along random ones, at least ("≫ 1")
    share_above: float  # H26: share of top directions that move f more than every random one, at least


# Spec §3 H26: "ratio (mean top-50 / mean random) ≫ 1" at both scales; ≫ read as 10x. Fixed before any run.
PERTURBATION_THRESHOLDS = {
    "quick": PerturbationThresholds(ratio=10.0, share_above=1.0),
    "paper": PerturbationThresholds(ratio=10.0, share_above=1.0),
}


def perturbation_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H26 (Fig B.1): perturbations along the top singular directions of the Jacobian change f a lot, along
    random directions almost nothing. Every seed must pass; the measured value is the worst seed's."""
    limits = PERTURBATION_THRESHOLDS[job.params["thresholds"]]
    summary = perturbation_summary(read_perturbation_runs(job.inputs["runs"]))
    ratio, share = summary["ratio"].min(), summary["share_above_random"].min()
    per_seed = "; ".join(f"seed {int(row.seed)}: top mean {row.mean_top:.3g}, random mean {row.mean_random:.3g}, "
                         f"top min {row.min_top:.3g}, random max {row.max_random:.3g}" for row in summary.itertuples())
    statement = ("perturbing w along the top singular directions of the Jacobian changes f a lot; along random "
                 "directions almost nothing")
    return [
        ClaimCheck("H26", "fig_B_1", statement,
                   f"mean ‖Δf‖ along the top directions / mean along random ones ≥ {limits.ratio:g} for every seed "
                   f"(measured: the smallest ratio over seeds; {per_seed})", float(ratio), bool(ratio >= limits.ratio)),
        ClaimCheck("H26", "fig_B_1", "large only for top singular directions: every top direction moves f more "
                   "than any random one",
                   f"share of top directions whose ‖Δf‖ exceeds the largest random one ≥ {limits.share_above:.0%} "
                   "for every seed (measured: the smallest share over seeds)", float(share),
                   bool(share >= limits.share_above)),
    ]


# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

# --- end of complexity ---
