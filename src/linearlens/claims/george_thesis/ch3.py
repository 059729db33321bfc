"""Claims for Chapter 3 (NNGeometry): H1 (the memory of a dense FIM of ResNet50) and H2 (which Fisher
approximation is best for which operation, Figs 3.3-3.6), and the NTK's adaptation to the task of Fig 3.7
(the thesis's qualitative claim, without an H number). Figs 3.1 (code listing) and 3.2
(schematic) are drawings, in the figures module only."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...analysis.george_thesis.ch3 import (
    REPRESENTATION_NAMES,
    mean_metric,
    pair_summary,
    per_direction,
    quality_frame,
    read_pairs,
    read_quality,
)
from ...manifests.jobs import ClaimsJob
from .. import ClaimCheck

# --- H1: a dense FIM of the thesis's ResNet50 ---

THESIS_PARAMETERS = 24e6  # "a 24M parameters Resnet50"
THESIS_PETABYTES = 2.3  # "F would require 2.3 petabytes of memory (24M × 24M × 4 bytes for float32)"


def dense_fisher_petabytes(parameters: float, bytes_per_entry: int = 4) -> float:
    """The memory of a dense d × d FIM, in petabytes (10¹⁵ bytes)."""
    return parameters * parameters * bytes_per_entry / 1e15


# --- H2: the quality of the Fisher approximations ---

@dataclass(frozen=True)
class FisherQualityThresholds:
    """H2, the same at both scales. Each ordering must hold at every checkpoint; the solve
    is compared by cos(v, v') averaged over the λ grid. ``trace_small``: the largest relative trace
    error of the approximations that keep F's diagonal (diagonal, quasi-diagonal, EKFAC), whose only
    error the thesis puts down to Monte-Carlo sampling: their traces equal that of the Monte-Carlo FIM
    they are built from, so the check means something only when that FIM is an independent draw
    (``approximation_draws: independent``; with F's own labels the error is round-off by identity).
    "Best" is a lead over every rival that the directions v resolve: the mean of the paired differences
    (every representation sees the same v) beyond ``resolution`` standard errors of that mean; a lead
    within them is not evaluated (too few directions to order the two), a deficit beyond them fails."""

    trace_small: float
    resolution: float


EXACT_TRACE = ("diag", "quasi_diag", "ekfac")


def _name(representation: str) -> str:
    return REPRESENTATION_NAMES.get(representation, representation)


def paired_leads(table, chosen: str, higher: bool) -> dict[tuple[int, str], tuple[float, float]]:
    """Per checkpoint and rival: ``chosen``'s mean lead over the rival across the paired directions (> 0:
    ``chosen`` better) and the standard error of that mean."""
    leads = {}
    for epoch, rows in table.groupby(level="epoch"):
        for rival in table.columns.drop(chosen):
            difference = (rows[chosen] - rows[rival]) * (1 if higher else -1)
            error = difference.std(ddof=1) / np.sqrt(len(difference)) if len(difference) > 1 else np.nan
            leads[(epoch, rival)] = (float(difference.mean()), float(error))
    return leads


def _best_check(figure: str, statement: str, check: str, table, chosen: str, higher: bool,
                resolution: float) -> ClaimCheck:
    if chosen not in table.columns or len(table.columns) < 2:
        return ClaimCheck("H2", figure, statement, check, f"{_name(chosen)} or a rival was not measured", None,
                          note="not evaluated at this scale: the configuration leaves out "
                          f"{_name(chosen)} or every rival representation")
    means = table.groupby(level="epoch").mean()
    leads = paired_leads(table, chosen, higher)
    closest = {epoch: min(((lead, error, rival) for (e, rival), (lead, error) in leads.items() if e == epoch))
               for epoch in means.index}
    measured = "; ".join(f"epoch {epoch}: " + ", ".join(f"{_name(n)} {v:.3g}" for n, v in row.items())
                         + f" ({_name(chosen)}'s smallest lead, over {_name(closest[epoch][2])}: "
                           f"{closest[epoch][0]:+.3g} ± {closest[epoch][1]:.2g} s.e.)"
                         for epoch, row in means.iterrows())
    check = f"{check}, by more than {resolution:g} standard errors of the paired difference over the directions v"
    behind = [epoch for epoch, (lead, error, _) in closest.items() if lead < -resolution * error]
    unresolved = [epoch for epoch, (lead, error, _) in closest.items() if not abs(lead) > resolution * error]
    if behind or not unresolved:
        return ClaimCheck("H2", figure, statement, check, measured, not behind)
    return ClaimCheck("H2", figure, statement, check, measured, None, note=(
        f"not evaluated: at epoch(s) {', '.join(map(str, unresolved))} {_name(chosen)} and its closest rival differ "
        f"by less than {resolution:g} standard errors over the {len(table.index.unique('direction'))} directions v, "
        f"too few to order them"))


def dense_fisher_check(parameters: float, stated_petabytes: float, own_parameters: int) -> ClaimCheck:
    """H1: the thesis's own arithmetic (no run enters it; the run's network's dense F is shown beside)."""
    petabytes = dense_fisher_petabytes(parameters)
    return ClaimCheck(
        "H1", "fig_3_3", f"a dense FIM of the {parameters / 1e6:g}M-parameter ResNet50 would need "
        f"{stated_petabytes:g} PB ({parameters / 1e6:g}M × {parameters / 1e6:g}M × 4 bytes)",
        f"({parameters / 1e6:g}M)² × 4 B in PB, rounded to one decimal, equals {stated_petabytes:g}",
        f"{petabytes:.3f} PB (this run's network: {own_parameters:,} parameters, dense float32 F "
        f"{dense_fisher_petabytes(own_parameters):.3g} PB)", round(petabytes, 1) == stated_petabytes)


def fisher_quality_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H1 as arithmetic (and the run's own network's dense F beside it), and H2's orderings on the
    checkpoints' metrics (Figs 3.3-3.6)."""
    limits = FisherQualityThresholds(**job.params["thresholds"])
    records = read_quality(job.inputs["runs"])
    frame = quality_frame(records)
    checks = [dense_fisher_check(THESIS_PARAMETERS, THESIS_PETABYTES, records[0]["n_params"])]
    checks.append(_best_check(
        "fig_3_3", "PMatKFAC is the best approximation for operations involving the inverse FIM (solve)",
        "PMatKFAC has the highest cos(v, v′) averaged over the λ grid and the directions, at every checkpoint",
        per_direction(frame, "solve_cos"), "kfac", True, limits.resolution))
    checks.append(_best_check(
        "fig_3_4", "PMatEKFAC is the best approximation for the forward FIM: Fv",
        "PMatEKFAC has the highest mean cos(Fv, F_approx v) at every checkpoint",
        per_direction(frame, "mv_cos"), "ekfac", True, limits.resolution))
    checks.append(_best_check(
        "fig_3_4", "PMatEKFAC is the best approximation for the forward FIM: Fv (residual)",
        "PMatEKFAC has the lowest mean ‖F_approx v − Fv‖/‖Fv‖ at every checkpoint",
        per_direction(frame, "mv_residual"), "ekfac", False, limits.resolution))
    checks.append(_best_check(
        "fig_3_5", "PMatEKFAC is the best approximation for the forward FIM: vᵀFv",
        "PMatEKFAC has the lowest mean |vᵀF_approx v − vᵀFv|/|vᵀFv| at every checkpoint",
        per_direction(frame, "vTMv_error"), "ekfac", False, limits.resolution))
    checks += _trace_checks(mean_metric(frame, "trace_error"), limits, job.params["spec"]["fisher"])
    return checks


def _trace_checks(errors, limits: FisherQualityThresholds, fisher: dict) -> list[ClaimCheck]:
    exact = [name for name in EXACT_TRACE if name in errors.columns]
    measured = "; ".join(f"epoch {epoch}: " + ", ".join(f"{_name(n)} {v:.2g}" for n, v in row.items())
                         for epoch, row in errors.iterrows())
    statement = "PMatDiag, PMatQuasiDiag and PMatEKFAC estimate the trace very accurately"
    criterion = f"their relative trace error ≤ {limits.trace_small:g} at every checkpoint"
    if fisher["approximation_draws"] != "independent":
        small = ClaimCheck("H2", "fig_3_6", statement, criterion, measured, None,
                           note="not evaluated: the approximations reuse F's Monte-Carlo labels, so their traces "
                           "equal tr F by identity (set approximation_draws: independent)")
    elif not exact:
        small = ClaimCheck("H2", "fig_3_6", statement, criterion, measured, None,
                           note="not evaluated at this scale: none of the three representations was configured")
    else:
        small = _with_noise_reason(ClaimCheck("H2", "fig_3_6", statement, criterion, measured,
                                              bool((errors[exact] <= limits.trace_small).all().all())), fisher)
    if not exact or "kfac" not in errors:
        kfac = ClaimCheck("H2", "fig_3_6", "PMatKFAC's trace estimate is less accurate", "", measured, None,
                          note="not evaluated at this scale: PMatKFAC or all three others left out of the configuration")
    else:
        kfac = _with_noise_reason(ClaimCheck(
            "H2", "fig_3_6", "PMatKFAC's trace estimate is less accurate",
            "PMatKFAC's relative trace error exceeds each of theirs at every checkpoint", measured,
            bool((errors["kfac"] > errors[exact].max(axis=1)).all())), fisher)
    return [small, kfac]


def _with_noise_reason(check: ClaimCheck, fisher: dict) -> ClaimCheck:
    """A failing trace check on independent draws, explained: the three exact-trace errors are the Monte-Carlo
    noise between two estimates of F, and where it is large it swamps KFAC's structural error too."""
    if check.passed is not False or fisher["approximation_draws"] != "independent":
        return check
    return replace(check, failure_reason="regime", note=(
        f"the errors of PMatDiag, PMatQuasiDiag and PMatEKFAC are the Monte-Carlo noise between two estimates of F "
        f"({fisher['examples']} examples × {fisher['samples']} labels each; their traces are exact for the one they "
        f"are built from); it grows as the stand-in network grows confident (a few labels of classes it does not "
        f"predict carry tr F), beyond the small fluctuation the thesis's ResNet50 on 200 classes leaves"))


# --- Fig 3.7: the NTK adapts to the task ---

def ntk_pair_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """Fig 3.7 (a qualitative claim, without an H number): the intra-class blocks of the normalised Gram strengthen, and
    the kernel-PCA plane goes from mixing the two classes at initialisation to separating them."""
    summary = pair_summary(read_pairs(job.inputs["runs"]), job.params["spec"]["ntk"]["centred"])
    first, last = summary.iloc[0], summary.iloc[-1]
    contrasts = " → ".join(f"{c:.3f} (epoch {e})" for e, c in zip(summary["epoch"], summary["block_contrast"]))
    return [
        ClaimCheck("F3.7", "fig_3_7", "the NTK encodes the task later in training: it highlights intra-class examples",
                   "block contrast (mean normalised Gram within classes minus between them) is higher at the last "
                   "checkpoint than at the first", contrasts, bool(last["block_contrast"] > first["block_contrast"])),
        separation_check(summary),
    ]


def separation_check(summary) -> ClaimCheck:
    """Mixed at initialisation, separable at the end: a line separates the two classes on the kernel-PCA
    plane at the last checkpoint and none does at the first."""
    first, last = summary.iloc[0], summary.iloc[-1]
    separable = ", ".join(f"epoch {e}: {'yes' if s else 'no'}" for e, s in zip(summary["epoch"], summary["separable"]))
    already = bool(first["separable"])
    return ClaimCheck(
        "F3.7", "fig_3_7", "examples mixed at initialisation become linearly separable on the first two kernel "
        "principal components as training progresses",
        "the two classes are not linearly separable on the top-2 kernel PCA plane at the first checkpoint "
        "(initialisation) and are at the last", separable, bool(not already and last["separable"]),
        failure_reason="stand_in" if already else None,
        note="the stand-in pair (8×8 digits 3 and 8) is already separable at initialisation, where the thesis's "
        "Tiny ImageNet classes are mixed" if already else "")
