"""Claims for Chapter 6 (NTK alignment) and appendix B. The thesis's claims about Figs 6.1-6.6 and B.1-B.8
(tangent-kernel spectrum, alignment with the labels, SuperNat, complexity measures); Fig 6.5's left half is
an algorithm box, drawn with its curves."""

from __future__ import annotations

from dataclasses import dataclass

from ...analysis.george_thesis.ch6 import (
    DISK_RATIO_INDEX,
    SPECTRAL_RATIO_INDEX,
    disk_summary,
    frequency_trend,
    percent,
    read_npz,
)
from ...manifests.jobs import ClaimsJob
from .. import ClaimCheck

# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and its alignment with the labels over training (alignment) ---

# --- end of alignment ---

# --- Figs 6.4, B.7: alignment on easy vs difficult examples (easy_difficult) ---

# --- end of easy_difficult ---

# --- Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task (disk) ---

@dataclass(frozen=True)
class DiskThresholds:
    """H16 (spec §3): λ20/λ1 at the first row over λ20/λ1 at the last row, more than ``ratio_drop``
    (the thesis: 1.5% → 0.2%, 7.5×; full scale asks for ≥ 5×, quick only for a decrease); and the
    class structure in the top eigenfunctions: their largest |correlation| with the grid labels
    rises from the first row to the last."""

    ratio_drop: float
    ratio_drop_strict: bool  # True: drop > ratio_drop (a decrease); False: drop ≥ ratio_drop


DISK_THRESHOLDS = {
    "quick": DiskThresholds(ratio_drop=1.0, ratio_drop_strict=True),
    "paper": DiskThresholds(ratio_drop=5.0, ratio_drop_strict=False),
}


def disk_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H16 on the seed means of the disk runs (Fig 6.1)."""
    limits = DISK_THRESHOLDS[job.params["thresholds"]]
    summary = disk_summary(job.inputs["runs"])
    by_row = summary.groupby("iteration")[["ratio", "label_correlation"]].mean()
    first, last = by_row.iloc[0], by_row.iloc[-1]
    start, end = int(by_row.index[0]), int(by_row.index[-1])
    seeds = summary["seed"].nunique()
    drop = first["ratio"] / last["ratio"]
    passed = drop > limits.ratio_drop if limits.ratio_drop_strict else drop >= limits.ratio_drop
    ratio = f"λ{DISK_RATIO_INDEX}/λ1"
    wanted = "decreases" if limits.ratio_drop_strict and limits.ratio_drop == 1 else (
        f"drops by {'more than' if limits.ratio_drop_strict else 'at least'} {limits.ratio_drop:g}×")
    return [
        ClaimCheck("H16", "fig_6_1", f"spectrum anisotropy grows: {ratio} = 1.5% at iteration 0, 0.2% at iteration 2000",
                   f"{ratio} (mean over {seeds} seed(s)) {wanted} from iteration {start:,} to {end:,}",
                   f"{percent(first['ratio'])} → {percent(last['ratio'])} ({drop:.2f}× drop)", bool(passed)),
        ClaimCheck("H16", "fig_6_1", "class structure (the boundary circle) appears in the top eigenfunctions",
                   f"largest |correlation| of the top eigenfunctions with the centred grid labels (mean over {seeds} "
                   f"seed(s)) is higher at iteration {end:,} than at {start:,}",
                   f"{first['label_correlation']:.3f} → {last['label_correlation']:.3f}",
                   bool(last["label_correlation"] > first["label_correlation"])),
    ]

# --- end of disk ---

# --- Fig B.2: spectral bias of a random MLP's tangent kernel (spectral_bias) ---

@dataclass(frozen=True)
class SpectralBiasThresholds:
    """H24 (spec §3; quick = full scale): over the eigenvectors j < 25 the dominant DFT frequency
    is monotone in j: every step non-decreasing (``monotone_share``, the spec's "monotone" read
    literally) and a rank correlation ρ(j, frequency) of at least ``spearman`` (the trend the
    thesis calls a remarkable alignment with Fourier modes); λ10/λ1 of the order of the thesis's 4%:
    within a factor 4 either way."""

    monotone_share: float = 1.0
    spearman: float = 0.9
    ratio_range: tuple[float, float] = (0.01, 0.16)


SPECTRAL_BIAS_THRESHOLDS = {"quick": SpectralBiasThresholds(), "paper": SpectralBiasThresholds()}


def spectral_bias_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H24 on the random MLP's tangent kernel (Fig B.2)."""
    limits = SPECTRAL_BIAS_THRESHOLDS[job.params["thresholds"]]
    run = read_npz(job.inputs["run"][0])
    trend = frequency_trend(run["dominant_frequency"])
    ratio = float(run["ratios"][SPECTRAL_RATIO_INDEX - 1])
    low, high = limits.ratio_range
    statement = "eigenvectors of increasing j have increasing Fourier frequency (first half of the spectrum)"
    span = f"j < {trend['count']}"
    return [
        ClaimCheck("H24", "fig_B_2", statement,
                   f"share of steps j → j + 1 ({span}) whose dominant frequency does not decrease ≥ "
                   f"{limits.monotone_share:.0%}", f"{trend['monotone_share']:.3f}",
                   bool(trend["monotone_share"] >= limits.monotone_share)),
        ClaimCheck("H24", "fig_B_2", statement, f"Spearman ρ(j, dominant frequency) over {span} ≥ {limits.spearman:g}",
                   f"{trend['spearman']:.3f}", bool(trend["spearman"] >= limits.spearman)),
        ClaimCheck("H24", "fig_B_2", f"fast eigenvalue decay: λ{SPECTRAL_RATIO_INDEX}/λ1 ≈ 4%",
                   f"λ{SPECTRAL_RATIO_INDEX}/λ1 within [{percent(low)}, {percent(high)}]", percent(ratio),
                   bool(low <= ratio <= high)),
    ]

# --- end of spectral_bias ---

# --- Fig 6.5: SuperNat vs gradient descent on noisy linear regression (supernat) ---

# --- end of supernat ---

# --- Fig B.3: which norm measures capacity (random RBF features) (rbf_capacity) ---

# --- end of rbf_capacity ---

# --- Fig B.1: output change along the Jacobian's top singular directions (perturbation) ---

# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

# --- end of complexity ---
