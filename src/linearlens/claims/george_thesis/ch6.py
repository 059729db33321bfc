"""Claims for Chapter 6 (NTK alignment) and appendix B. The thesis's claims about Figs 6.1-6.6 and B.1-B.8
(tangent-kernel spectrum, alignment with the labels, SuperNat, complexity measures); Fig 6.5's left half is
an algorithm box, drawn with its curves."""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...analysis.george_thesis.ch6 import COMPLEXITY_MEASURES, gap_correlations, panel_curves, read_complexity_finals
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

# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

@dataclass(frozen=True)
class ComplexityThresholds:
    """H23 (spec §3): our measure (6.4.11) follows the generalisation gap. Quick column: the sign
    of its correlation on the corruption sweep; full column: Spearman ρ high (≥ 0.8) and the
    highest of the measures on the corruption sweep, and high on the other sweeps."""

    corruption_rho_above: float  # ρ(ours, gap) on the corruption sweep must exceed this …
    corruption_rho_inclusive: bool  # … or equal it
    corruption_highest: bool  # and be the highest ρ of all measures there
    other_panels_rho_min: float | None  # ρ(ours, gap) on the other sweeps at least this (None: reported only)


COMPLEXITY_THRESHOLDS = {
    "quick": ComplexityThresholds(corruption_rho_above=0.0, corruption_rho_inclusive=False, corruption_highest=False,
                                  other_panels_rho_min=None),
    "paper": ComplexityThresholds(corruption_rho_above=0.8, corruption_rho_inclusive=True, corruption_highest=True,
                                  other_panels_rho_min=0.8),
}
COMPLEXITY_STATEMENT = ("The proposed complexity measure and Neyshabur et al.'s are the only ones to follow the shape "
                        "of the generalisation gap as width, label corruption and channels vary")


def _rhos(row: pd.Series) -> str:
    return ", ".join(f"{measure} {row[measure]:.2f}" for measure in COMPLEXITY_MEASURES)


def _exceeds(value: float, bound: float, inclusive: bool) -> bool:
    return value >= bound if inclusive else value > bound


def complexity_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H23 on the runs of Fig 6.6: Spearman ρ of every measure with the gap in each panel (seed
    means per swept value); the check is on the corruption panel (``corruption`` in the config's
    panels), the other panels are checked at paper scale and reported at quick scale."""
    spec, limits = job.params["spec"], COMPLEXITY_THRESHOLDS[job.params["thresholds"]]
    rhos = gap_correlations(panel_curves(read_complexity_finals(job.inputs, spec)))
    checks = []
    for panel in rhos.index:
        row, ours = rhos.loc[panel], rhos.loc[panel, "learning_flow"]
        measured = f"Spearman ρ with the gap ({panel}): {_rhos(row)}"
        if spec["panels"][panel]["vary"] == "corruption":
            sign = "≥" if limits.corruption_rho_inclusive else ">"
            check = f"{panel} sweep: ρ(ours, gap) {sign} {limits.corruption_rho_above:g}"
            if limits.corruption_highest:
                check += " and the highest ρ of all measures"
            passed = None if np.isnan(ours) else _exceeds(ours, limits.corruption_rho_above,
                                                          limits.corruption_rho_inclusive)
            if passed is not None and limits.corruption_highest:
                passed = passed and bool(ours >= row.drop("learning_flow").max(skipna=True))
        elif limits.other_panels_rho_min is None:
            check, passed = f"{panel} sweep: ρ(ours, gap) reported (not asserted at this scale)", None
        else:
            check = f"{panel} sweep: ρ(ours, gap) ≥ {limits.other_panels_rho_min:g}"
            passed = None if np.isnan(ours) else bool(ours >= limits.other_panels_rho_min)
        checks.append(ClaimCheck("H23", "fig_6_6", COMPLEXITY_STATEMENT, check, measured,
                                 None if passed is None else bool(passed)))
    return checks

# --- end of complexity ---
