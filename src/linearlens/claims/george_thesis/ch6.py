"""Claims for Chapter 6 (NTK alignment) and appendix B. The thesis's claims about Figs 6.1-6.6 and B.1-B.8
(tangent-kernel spectrum, alignment with the labels, SuperNat, complexity measures); Fig 6.5's left half is
an algorithm box, drawn with its curves."""

from dataclasses import dataclass

from ...analysis.george_thesis.ch6 import (
    rbf_capacity_curves,
    rbf_capacity_trends,
    read_rbf_capacity,
    read_supernat,
    supernat_best_errors,
    supernat_final_errors,
)
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

@dataclass(frozen=True)
class SupernatThresholds:
    seed_share: float  # H22: SuperNat's final test error is below GD's in at least this share of the seeds
    equal_within: float = 1e-9  # relative difference that counts as equal (two runs at the same minimiser)


# Spec §3 H22: "final test error" at full scale, "same (exact toy)" at quick scale: the seed mean below
# GD's, and, as the weakest per-seed reading of "below GD's", in half of the seeds or more.
SUPERNAT_THRESHOLDS = {
    "quick": SupernatThresholds(seed_share=0.5),
    "paper": SupernatThresholds(seed_share=0.5),
}


def supernat_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H22: SuperNat's test error ends below gradient descent's on the noisy linear-regression toy."""
    limits = SUPERNAT_THRESHOLDS[job.params["thresholds"]]
    record = read_supernat(job.inputs["runs"][0])
    final = supernat_final_errors(record)
    best = supernat_best_errors(record)
    kappa = job.params["spec"]["kappa"]
    gd, supernat = final["gd"].mean(), final["supernat"].mean()
    margin = 1 - limits.equal_within
    below = final["supernat"] < margin * final["gd"]
    statement = "SuperNat's test error is below gradient descent's on noisy linear regression (Fig 6.5 right)"
    context = (f"; lowest seed-mean test error over the run: GD {best.loc['gd', 'mean']:.4f} at iteration "
               f"{best.loc['gd', 'iteration']}, SuperNat {best.loc['supernat', 'mean']:.4f} at iteration "
               f"{best.loc['supernat', 'iteration']} (κ {kappa})")
    return [
        ClaimCheck("H22", "fig_6_5", statement,
                   f"seed-mean test MSE at the last iteration: SuperNat < GD by more than {limits.equal_within:g} "
                   "relative",
                   f"SuperNat {supernat:.4f}, GD {gd:.4f} over {len(final)} seeds" + context,
                   bool(supernat < margin * gd)),
        ClaimCheck("H22", "fig_6_5", statement + ", seed by seed",
                   f"SuperNat's final test MSE below GD's (by more than {limits.equal_within:g} relative) in "
                   f"≥ {limits.seed_share:.0%} of the seeds",
                   f"{int(below.sum())} of {len(final)} seeds (largest |difference| "
                   f"{(final['supernat'] - final['gd']).abs().max():.2e})",
                   bool(below.mean() >= limits.seed_share)),
    ]

# --- end of supernat ---

# --- Fig B.3: which norm measures capacity (random RBF features) (rbf_capacity) ---

@dataclass(frozen=True)
class RbfCapacityThresholds:
    identity_max_spearman: float  # H25: ρ(A = Id bound, test error) over c below this: it fails to track
    optimised_min_spearman: float  # H25: ρ(optimised bound, test error) over c at least this: it tracks
    loose_growth: float  # H25: A = Id bound at c = 1 ≥ this × its minimum over c; the optimised one below it


# Spec §3 H25 is qualitative at both scales; the thresholds read "tracks" as a Spearman ρ of at least
# 0.5 over the c grid, and "becomes loose" as growing at least twofold from its minimum to c = 1.
RBF_CAPACITY_THRESHOLDS = {
    "quick": RbfCapacityThresholds(identity_max_spearman=0.5, optimised_min_spearman=0.5, loose_growth=2.0),
    "paper": RbfCapacityThresholds(identity_max_spearman=0.5, optimised_min_spearman=0.5, loose_growth=2.0),
}


def rbf_capacity_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H25: the A = Id bound becomes loose and fails to track the test error as c → 1; the optimised-A
    bound (Prop B.2.5) tracks it."""
    limits = RBF_CAPACITY_THRESHOLDS[job.params["thresholds"]]
    curves = rbf_capacity_curves(read_rbf_capacity(job.inputs["runs"][0]))
    trends = rbf_capacity_trends(curves)
    over = f"over {len(curves)} values of c in [0, 1] (subsample means)"
    growth = limits.loose_growth
    id_rho, opt_rho = trends["bound_identity_spearman"], trends["bound_optimised_spearman"]
    id_growth, opt_growth = trends["bound_identity_growth"], trends["bound_optimised_growth"]
    return [
        ClaimCheck("H25", "fig_B_3", "the A = Id bound becomes increasingly loose as c → 1",
                   f"A = Id bound at c = 1 ≥ {growth:g} × its minimum over c",
                   f"{id_growth:.3g} × (c = 1: {curves['bound_identity_mean'].iloc[-1]:.3g}, "
                   f"minimum {curves['bound_identity_mean'].min():.3g})", bool(id_growth >= growth)),
        ClaimCheck("H25", "fig_B_3", "the A = Id bound fails to reflect the shape of the test error",
                   f"Spearman ρ(A = Id bound, test error) {over} < {limits.identity_max_spearman:g}",
                   f"ρ = {id_rho:.3f}", bool(id_rho < limits.identity_max_spearman)),
        ClaimCheck("H25", "fig_B_3", "the optimised-A bound (Prop B.2.5) tracks the test error",
                   f"Spearman ρ(optimised bound, test error) {over} ≥ {limits.optimised_min_spearman:g}",
                   f"ρ = {opt_rho:.3f}", bool(opt_rho >= limits.optimised_min_spearman)),
        ClaimCheck("H25", "fig_B_3", "the optimised-A bound does not become loose as c → 1",
                   f"optimised bound at c = 1 < {growth:g} × its minimum over c",
                   f"{opt_growth:.3g} × (c = 1: {curves['bound_optimised_mean'].iloc[-1]:.3g}, "
                   f"minimum {curves['bound_optimised_mean'].min():.3g})", bool(opt_growth < growth)),
    ]

# --- end of rbf_capacity ---

# --- Fig B.1: output change along the Jacobian's top singular directions (perturbation) ---

# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

# --- end of complexity ---
