"""Chapter 2 and Appendix A, the algorithmic stability of SGD: the claims of Figs 2.1-2.4 and
A.1-A.15 (Table 2.1 is a configuration table), as checks over the pair runs.

Every exponent is the thesis's: b of y = a·m^b fitted by ``curve_fit`` to the per-m maxima
(``exponent_summary``); the log-log least-squares slope is quoted beside it (the linear-space fit is
dominated by the largest maxima, at small m).

==== ========= =====================================================================================
id   figure    statement (the check)
==== ========= =====================================================================================
K1   fig_2_1   logistic regression: stability tracks the logistic gap (|b_β − b_gap| ≤ 0.15, both ≤ −0.8)
K2   fig_2_1   logistic regression: ‖A(S) − A(S′)‖ decays like the gap (b ≤ −0.8)
K3   fig_2_1   logistic regression: 0-1 gap m^−0.82 (informative: the thesis's frame of reference)
K4   fig_2_2   networks, trial 1: stability decays markedly slower than the CE gap (b_β − b_gap ≥ +0.08)*
K5   fig_2_2   configuration 2a: stability does not decrease (b_β ≥ −0.05)*
K6   fig_A_2   K4 for every trial: A.2-A.4 at the main snapshot, A.5-A.7 early, A.8-A.10 late
     … A_10    (one check per figure, every trial's number shown)*
K7   fig_2_3   networks, trial 1: distances do not decrease with m (b ≥ −0.1)
K8   fig_A_11  K7 for every trial (one check per configuration)
K9   fig_A_12  ‖A(S)‖ against m (informative: the thesis states no criterion on the norms)
K10  fig_A_13  normalised distance: no significant decrease with m (b ≥ −0.1)
K11  fig_2_4   1a linearly connected, 2b not: 1a's max dip on α ∈ [0, 1] ≤ 0.02 < 2b's (per kept size)†
K12  fig_2_4   connectivity ordering 1a > 2a > 2b: median dip 1a < 2a < 2b (per kept size)†
K13  fig_A_14  K11's contrast for 1a's other trials (against 2b's first trial, per trial and size)†
K14  fig_A_15  2a's other trials "slightly decreasing" (informative: the dips beside 1a's)
K15  fig_A_1   the gap's rate differs across regions of m (informative: exponents and half-range slopes)
K16  fig_2_1/2 how often β̂ is attained at the swapped-in point z, which the test set holds (informative)
==== ========= =====================================================================================

Decisions where the thesis gives no number (this project's readings): "not decreasing" reads as a fitted exponent
≥ −0.1 (K7, K8, K10); the 0-1 gap (K3), the norms (K9), 2a's further trials (K14) and the sweep
(K15) carry no verdict, since the thesis offers them as a frame of reference or description only.

The regime (detected from the runs): the thesis's exponents and its connectivity contrast are
those of networks whose pairs leave their shared trajectory, A(S′) ending in a network apart from
A(S). Where a trial's pairs barely do (median ‖A(S) − A(S′)‖ / mean norm below 0.1 at the largest
m, a reading of ours), β̂ measures z's direct pushes on one trajectory and 2b cannot lose connectivity: the
checks marked * (on that trial) and † (on 2b's pairs at the size) are not evaluated, with the
distances in the note. K7, K8 and K10, which state that the pairs do not come together with m,
stay evaluated on the same runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...analysis.karp_thesis.ch2 import (
    at_snapshot,
    configurations,
    exponent_summary,
    interpolation_dips,
    loglog_slope,
    per_size_maxima,
    read_rows,
    sweep_rows,
)
from ...manifests.jobs import ClaimsJob
from .. import ClaimCheck


@dataclass(frozen=True)
class StabilityThresholds:
    """Chapter 2's pass criteria, read from ``karp_thesis.claim_thresholds.stability``."""

    logistic_agreement: float  # K1: |b_stability − b_gap| at most this …
    logistic_decay: float  # … and b_stability, b_gap (K1) and b_distance (K2) at most this
    slower_by: float  # K4, K6: b_stability − b_gap at least this
    flat_stability: float  # K5: 2a's b_stability at least this
    no_decrease: float  # K7, K8, K10: the distance exponents at least this (a reading; the thesis gives no number)
    connected_dip: float  # K11, K13: test accuracy at most this below the lower endpoint
    # K4-K6, K11-K13: the pairs have left their shared trajectory where the median normalised
    # distance ‖A(S) − A(S′)‖ / mean norm reaches this (a reading: A(S′) a tenth of the norm away)
    separated: float


MAIN = "main"
NETWORKS = ("1a", "2a", "2b")
# Appendix A.2's figures: the rows of every trial, per configuration and snapshot.
APPENDIX = {("1a", "main"): "fig_A_2", ("2a", "main"): "fig_A_3", ("2b", "main"): "fig_A_4",
            ("1a", "early"): "fig_A_5", ("2a", "early"): "fig_A_6", ("2b", "early"): "fig_A_7",
            ("1a", "late"): "fig_A_8", ("2a", "late"): "fig_A_9", ("2b", "late"): "fig_A_10"}
ITERATION = {"early": "t = 50,000", "main": "t = 100,000", "late": "t = 150,000"}
# Fig 2.2's reported exponents (CE gap, CE stability): the thesis's text, quoted in the statements.
THESIS_NETWORKS = {"1a": "gap m^−0.18, stability m^−0.09", "2a": "gap m^−0.48, stability does not decrease",
                   "2b": "gap m^−0.35, stability m^−0.17"}


def stability_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """Every chapter-2 check whose runs are among the job's inputs; absent inputs skip theirs."""
    limits = StabilityThresholds(**job.params["thresholds"])
    spec = job.params["spec"]
    checks = []
    if job.inputs.get("logistic"):
        logistic = read_rows(job.inputs["logistic"])
        checks += logistic_checks(logistic, limits) + at_z_checks(logistic, "fig_2_1")
    if job.inputs.get("networks"):
        networks = read_rows(job.inputs["networks"])
        checks += (network_checks(networks, spec, limits) + appendix_checks(networks, limits)
                   + distance_checks(networks, spec, limits) + at_z_checks(networks, "fig_2_2"))
    if job.inputs.get("curves"):
        networks = read_rows(job.inputs["networks"]) if job.inputs.get("networks") else None
        checks += connectivity_checks(read_rows(job.inputs["curves"]), spec, limits, networks)
    if job.inputs.get("sweep") or job.inputs.get("sweep_pairs"):
        sweep = sweep_rows({"sweep": job.inputs.get("sweep", []), "pairs": job.inputs.get("sweep_pairs", [])},
                           spec["sweep"]["samples"], spec["sweep"]["sizes"])
        checks += sweep_checks(sweep, spec["sweep"]["configuration"])
    return checks


UNFITTED = "not evaluated at this scale: an exponent could not be fitted (fewer than two sizes m with runs)"


def _check(*fields, **named) -> ClaimCheck:
    """A ClaimCheck; one left unevaluated without a note was so by an exponent that could not be fitted
    (``_verdict``), and says so."""
    passed = named["passed"] if "passed" in named else fields[5]
    if passed is None and not named.get("note"):
        named["note"] = UNFITTED
    return ClaimCheck(*fields, **named)


# --- formatting and verdicts ------------------------------------------------------------------------

def _num(value: float, digits: int = 2) -> str:
    return "n/a" if not np.isfinite(value) else f"{value:+.{digits}f}".replace("-", "−")


def _limit(value: float) -> str:
    return f"{value:g}".replace("-", "−")


def _fit_text(fit: dict) -> str:
    return f"b = {_num(fit['b'])} (log-log {_num(fit['loglog'])})"


def _verdict(values, passed: bool) -> bool | None:
    """None when an exponent could not be fitted (fewer than two sizes)."""
    return None if not all(np.isfinite(values)) else bool(passed)


def _all(verdicts: list) -> bool | None:
    return None if not verdicts or None in verdicts else all(verdicts)


def _failing_first(verdicts: list) -> bool | None:
    """False where any verdict fails (an unevaluated trial cannot rescue a failing one), else ``_all``."""
    return False if False in verdicts else _all(verdicts)


def _first_trial(spec: dict, configuration: str) -> int:
    return configurations(spec)[configuration]["trials"][0]


def _runs(rows: pd.DataFrame, configuration: str) -> pd.DataFrame:
    return rows[rows["configuration"] == configuration]


def _present(rows: pd.DataFrame) -> list[str]:
    return [name for name in NETWORKS if name in set(rows["configuration"])]


def _separation(rows: pd.DataFrame, m: int | None = None) -> pd.Series:
    """Per trial: the median normalised pair distance at size ``m`` (the largest for None)."""
    m = rows["m"].max() if m is None else m
    return rows[rows["m"] == m].groupby("trial")["normalised_distance"].median()


def _unseparated(rows: pd.DataFrame, limits: StabilityThresholds, m: int | None = None) -> str:
    """The note of a check left unevaluated because its pairs barely leave their shared trajectory
    (median normalised distance below ``limits.separated`` at size ``m``, the largest for None, in
    any trial of ``rows``); empty where every trial's pairs separate (or no rows)."""
    medians = _separation(rows, m) if len(rows) else pd.Series(dtype=float)
    if medians.empty or (medians >= limits.separated).all():
        return ""
    size = rows["m"].max() if m is None else m
    return ("not evaluated at this scale: the pairs barely leave their shared trajectory (median "
            f"‖A(S) − A(S′)‖ / mean norm at m = {size}: " + ", ".join(
                f"trial {trial} {value:.3f}" for trial, value in medians.items()) +
            f"; below {limits.separated:g}), so β̂ and the interpolation measure z's pushes on one trajectory, "
            "not the separated networks the thesis's statement is about")


# --- Fig 2.1: logistic regression ---------------------------------------------------------------------

def logistic_checks(rows: pd.DataFrame, limits: StabilityThresholds) -> list[ClaimCheck]:
    main = at_snapshot(rows, MAIN)
    if main.empty:
        return []
    gap, stability = exponent_summary(main, "gap_loss"), exponent_summary(main, "stability")
    distance, error = exponent_summary(main, "distance"), exponent_summary(main, "gap_error")
    difference = stability["b"] - gap["b"]
    decay = limits.logistic_decay
    return [
        _check("K1", "fig_2_1", "logistic regression: the logistic-loss stability has a dependence on m comparable "
                   "to the logistic-loss gap's (panels 1-3 between m^−1.05 and m^−1.13)",
                   f"|b_stability − b_gap| ≤ {limits.logistic_agreement:g} and b_stability, b_gap ≤ {_limit(decay)}",
                   f"b_stability − b_gap = {_num(difference, 3)} ({_num(stability['b'], 3)} vs {_num(gap['b'], 3)}; log-log "
                   f"{_num(stability['loglog'])} vs {_num(gap['loglog'])})",
                   _verdict([difference], abs(difference) <= limits.logistic_agreement
                            and stability["b"] <= decay and gap["b"] <= decay)),
        _check("K2", "fig_2_1", "logistic regression: ‖A(S) − A(S′)‖₂ decays with m like the gap and the stability "
                   "(between m^−1.05 and m^−1.13)", f"b_distance ≤ {_limit(decay)}", _fit_text(distance),
                   _verdict([distance["b"]], distance["b"] <= decay)),
        _check("K3", "fig_2_1", "logistic regression: the 0-1 gap decays a bit more weakly, m^−0.82 (shown for "
                   "completeness, as a frame of reference)", "informative: the 0-1 gap's exponent against the "
                   "thesis's −0.82 (no criterion in the thesis)", _fit_text(error), None,
                   note="not evaluated: informative, the thesis shows the 0-1 gap as a frame of reference only"),
    ]


# --- Fig 2.2 and A.2-A.10: the networks' gap and stability ----------------------------------------------

def _slower(rows: pd.DataFrame) -> tuple[float, str]:
    """b_stability − b_gap of one trial at one snapshot, with the exponents it rests on."""
    gap, stability = exponent_summary(rows, "gap_loss"), exponent_summary(rows, "stability")
    difference = stability["b"] - gap["b"]
    return difference, (f"b_stability − b_gap = {_num(difference, 3)} ({_num(stability['b'])} vs {_num(gap['b'])}; "
                        f"log-log {_num(stability['loglog'])} vs {_num(gap['loglog'])})")


def _trials_disagree(rows: pd.DataFrame, snapshot: str, limits: StabilityThresholds) -> str:
    """A note where the configuration's trials split on K4's criterion, with each trial's number
    (informative: a split on pairs that separated is a failure like any other; where they did not,
    the checks are not evaluated, ``_unseparated``). Empty where the trials agree (or there is one)."""
    runs = at_snapshot(rows, snapshot)
    differences = {trial: _slower(trial_rows)[0] for trial, trial_rows in runs.groupby("trial")}
    verdicts = {difference >= limits.slower_by for difference in differences.values() if np.isfinite(difference)}
    if len(verdicts) < 2:
        return ""
    return ("the trials split on this criterion (b_stability − b_gap " + ", ".join(
        f"trial {trial} {_num(value)}" for trial, value in differences.items()) + ")")


def network_checks(rows: pd.DataFrame, spec: dict, limits: StabilityThresholds) -> list[ClaimCheck]:
    checks = []
    for name in _present(rows):
        trial = _first_trial(spec, name)
        main = at_snapshot(_runs(rows, name)[_runs(rows, name)["trial"] == trial], MAIN)
        if main.empty:
            continue
        difference, text = _slower(main)
        error = exponent_summary(main, "gap_error")
        unseparated = _unseparated(main, limits)
        split = _trials_disagree(_runs(rows, name), MAIN, limits)
        regime = {"note": unseparated or split}
        checks.append(_check(
            "K4", "fig_2_2", f"configuration {name}: the cross-entropy stability decays markedly slower than the "
            f"cross-entropy gap (thesis: {THESIS_NETWORKS[name]})",
            f"trial {trial}, {ITERATION[MAIN]}: b_stability − b_gap ≥ {_num(limits.slower_by)}",
            f"{text}; 0-1 gap {_fit_text(error)}",
            None if unseparated else _verdict([difference], difference >= limits.slower_by), **regime))
        if name == "2a":
            stability = exponent_summary(main, "stability")
            checks.append(_check(
                "K5", "fig_2_2", "configuration 2a: the cross-entropy stability does not decrease with m",
                f"trial {trial}, {ITERATION[MAIN]}: b_stability ≥ {_limit(limits.flat_stability)}", _fit_text(stability),
                None if unseparated else _verdict([stability["b"]], stability["b"] >= limits.flat_stability),
                **regime))
    return checks


def appendix_checks(rows: pd.DataFrame, limits: StabilityThresholds) -> list[ClaimCheck]:
    """K6: Figs A.2-A.10, every trial of one configuration at one snapshot, one check per figure."""
    checks = []
    for (name, snapshot), figure in APPENDIX.items():
        runs = at_snapshot(_runs(rows, name), snapshot)
        if runs.empty:
            continue
        verdicts, parts, passing = [], [], 0
        for trial, trial_rows in runs.groupby("trial"):
            difference, text = _slower(trial_rows)
            meets = _verdict([difference], difference >= limits.slower_by)
            apart = not _unseparated(trial_rows, limits)
            verdicts.append(meets if apart else None)
            passing += meets is True
            missed = "" if meets is not False else " FAILS" if apart else " misses it"
            parts.append(f"trial {trial}: {text}{missed}" + ("" if apart else " (pairs not apart)"))
        split = _trials_disagree(runs, snapshot, limits)
        checks.append(_check(
            "K6", figure, f"configuration {name} at {ITERATION[snapshot]}, every trial: the cross-entropy stability "
            "has a dependence on m not comparable to the gap's (roughly consistent with trial 1)",
            f"every trial: b_stability − b_gap ≥ {_num(limits.slower_by)}",
            f"{passing} of {len(verdicts)} trials meet it; " + "; ".join(parts), _failing_first(verdicts),
            note=_unseparated(runs, limits) if _failing_first(verdicts) is None else split))
    return checks


# --- Figs 2.3, A.11-A.13: distances and norms ---------------------------------------------------------------

def _trial_fits(rows: pd.DataFrame, column: str, floor: float | None) -> tuple[list, str]:
    """Per trial: the exponent of ``column``'s maxima, and its verdict against ``floor`` (None: none)."""
    verdicts, parts = [], []
    for trial, trial_rows in rows.groupby("trial"):
        fit = exponent_summary(trial_rows, column)
        verdicts.append(None if floor is None else _verdict([fit["b"]], fit["b"] >= floor))
        parts.append(f"trial {trial}: {_fit_text(fit)}" + ("" if verdicts[-1] is not False else " FAILS"))
    passing = sum(verdict is True for verdict in verdicts)
    counted = "" if floor is None else f"{passing} of {len(verdicts)} trials pass; "
    return verdicts, counted + "; ".join(parts)


def distance_checks(rows: pd.DataFrame, spec: dict, limits: StabilityThresholds) -> list[ClaimCheck]:
    floor = limits.no_decrease
    checks = []
    for name in _present(rows):
        main = at_snapshot(_runs(rows, name), MAIN)
        if main.empty:
            continue
        first = main[main["trial"] == _first_trial(spec, name)]
        if len(first):
            fit = exponent_summary(first, "distance")
            checks.append(_check(
                "K7", "fig_2_3", f"configuration {name}: ‖A(S) − A(S′)‖₂ does not decrease with m (and even increases "
                "in some ranges)", f"trial {_first_trial(spec, name)}, {ITERATION[MAIN]}: the distance maxima's "
                f"fitted exponent ≥ {_limit(floor)} (DEFAULT reading of 'does not decrease')",
                _fit_text(fit) + _maxima_text(first, "distance"), _verdict([fit["b"]], fit["b"] >= floor)))
        for claim_id, figure, column, statement, limit in (
                ("K8", "fig_A_11", "distance", "‖A(S) − A(S′)‖₂ does not decrease with m in any trial", floor),
                ("K9", "fig_A_12", "norm", "‖A(S)‖₂ against m (the norms behind the distances' growth)", None),
                ("K10", "fig_A_13", "normalised_distance", "normalising by the mean norm largely removes the "
                 "distances' growth, without a significant decrease with m", floor)):
            verdicts, text = _trial_fits(main, column, limit)
            test = (f"every trial, {ITERATION[MAIN]}: the maxima's fitted exponent ≥ {_limit(limit)} (DEFAULT)"
                    if limit is not None else "informative: the norm maxima's exponent per trial (the thesis states "
                    "no criterion on the norms)")
            checks.append(_check(claim_id, figure, f"configuration {name}: {statement}", test, text,
                                     None if limit is None else _all(verdicts),
                                     note="not evaluated: informative, the thesis states no criterion on the norms"
                                     if limit is None else ""))
    return checks


def _maxima_text(rows: pd.DataFrame, column: str) -> str:
    maxima = per_size_maxima(rows, column)
    return "; maxima " + ", ".join(f"m={m}: {value:.3g}" for m, value in maxima.items())


# --- Figs 2.4, A.14, A.15: linear mode connectivity ----------------------------------------------------------

def _dips(curves: pd.DataFrame) -> dict:
    """Per (configuration, trial, m): the test-accuracy dips of its pairs (and the train dips)."""
    return {key: (interpolation_dips(group), interpolation_dips(group, "train"))
            for key, group in curves.groupby(["configuration", "trial", "m"])}


def _dip_text(test: pd.Series, train: pd.Series) -> str:
    return (f"test dip max {test.max():.3f}, median {test.median():.3f} over {len(test)} pairs "
            f"(train dip max {train.max():.3f})")


def connectivity_checks(curves: pd.DataFrame, spec: dict, limits: StabilityThresholds,
                        networks: pd.DataFrame | None = None) -> list[ClaimCheck]:
    """K11-K14 on the interpolation curves; ``networks`` (the pair rows) tell whether 2b's pairs left
    their shared trajectory at each kept size (without them every contrast is evaluated)."""
    dips = _dips(curves)
    apart = _apart_2b(networks, spec, limits)
    return (_connected_first(dips, spec, limits, apart) + _ordering(dips, spec, apart)
            + _further_trials(dips, spec, limits, apart))


def _apart_2b(networks: pd.DataFrame | None, spec: dict, limits: StabilityThresholds):
    """m → the note of an unevaluated contrast where 2b's first-trial pairs at m barely separated
    at the main snapshot ("" where they did, or where no pair rows say)."""
    if networks is None or "2b" not in configurations(spec):
        return lambda m: ""
    main = at_snapshot(_runs(networks, "2b"), MAIN)
    main = main[main["trial"] == _first_trial(spec, "2b")]
    return lambda m: _unseparated(main, limits, m) if m in set(main["m"]) else ""


def _sizes(dips: dict, name: str, trial: int) -> list[int]:
    return sorted(m for configuration, t, m in dips if configuration == name and t == trial)


def _max_dip(dips: dict, name: str, trial: int, m: int) -> float:
    return float(dips[(name, trial, m)][0].max())


def _contrast_check(claim_id: str, figure: str, dips: dict, trial_1a: int, trial_2b: int, m: int,
                    limits: StabilityThresholds, statement: str, apart) -> ClaimCheck:
    """1a stays connected while 2b, on the same m, does not: 1a's max dip ≤ the limit < 2b's; not
    evaluated where 2b's pairs barely separated (``apart(m)``'s note)."""
    dip_1a, dip_2b = _max_dip(dips, "1a", trial_1a, m), _max_dip(dips, "2b", trial_2b, m)
    passed = dip_1a <= limits.connected_dip < dip_2b
    return _check(
        claim_id, figure, statement,
        f"m = {m}: 1a (trial {trial_1a}) max test-accuracy dip on α ∈ [0, 1] ≤ {limits.connected_dip:g} and 2b's "
        f"(trial {trial_2b}) max dip > {limits.connected_dip:g} (the thesis's contrast: 2b loses connectivity)",
        f"1a: {_dip_text(*dips[('1a', trial_1a, m)])}; 2b: {_dip_text(*dips[('2b', trial_2b, m)])}",
        None if apart(m) else bool(passed), note=apart(m))


def _connected_first(dips: dict, spec: dict, limits: StabilityThresholds, apart) -> list[ClaimCheck]:
    if not {"1a", "2b"} <= set(configurations(spec)):
        return []
    trial_1a, trial_2b = _first_trial(spec, "1a"), _first_trial(spec, "2b")
    sizes = sorted(set(_sizes(dips, "1a", trial_1a)) & set(_sizes(dips, "2b", trial_2b)))
    return [_contrast_check("K11", "fig_2_4", dips, trial_1a, trial_2b, m, limits,
                            "configuration 1a: non-decreasing accuracy between W_S and W_S′ (linearly connected), "
                            "while 2b's accuracy decreases significantly along the path", apart) for m in sizes]


def _ordering(dips: dict, spec: dict, apart) -> list[ClaimCheck]:
    if not all(name in configurations(spec) for name in NETWORKS):
        return []
    trials = {name: _first_trial(spec, name) for name in NETWORKS}
    sizes = set.intersection(*(set(_sizes(dips, name, trials[name])) for name in NETWORKS))
    checks = []
    for m in sorted(sizes):
        medians = {name: float(dips[(name, trials[name], m)][0].median()) for name in NETWORKS}
        checks.append(_check(
            "K12", "fig_2_4", "connectivity spans the possibilities: 1a non-decreasing, 2a slightly decreasing, "
            "2b significantly decreasing accuracy along the path",
            f"first trials, m = {m}: median test-accuracy dip over the pairs 1a < 2a < 2b (strict)",
            "medians " + ", ".join(f"{name} {medians[name]:.3f}" for name in NETWORKS),
            None if apart(m) else bool(medians["1a"] < medians["2a"] < medians["2b"]), note=apart(m)))
    return checks


def _further_trials(dips: dict, spec: dict, limits: StabilityThresholds, apart) -> list[ClaimCheck]:
    checks = []
    for name in ("1a", "2a"):
        for trial in configurations(spec).get(name, {}).get("trials", [])[1:]:
            sizes = _sizes(dips, name, trial)
            if not sizes:
                continue
            parts = [f"m = {m}: {_dip_text(*dips[(name, trial, m)])}" for m in sizes]
            if name == "1a":
                trial_2b = _first_trial(spec, "2b") if "2b" in configurations(spec) else None
                checks += [_contrast_check(
                    "K13", "fig_A_14", dips, trial, trial_2b, m, limits,
                    "configuration 1a, further trials: roughly non-decreasing accuracy along the path, against 2b's "
                    "significant decrease", apart) for m in sizes if ("2b", trial_2b, m) in dips]
            else:
                beside = [f"1a m = {m}: median {dips[('1a', trial, m)][0].median():.3f}"
                          for m in sizes if ("1a", trial, m) in dips]
                checks.append(_check(
                    "K14", "fig_A_15", "configuration 2a, further trials: slightly decreasing accuracy along the path",
                    f"informative, trial {trial}: the test-accuracy dips (the thesis gives no size for 'slightly'), "
                    "beside 1a's of the same trial", "; ".join(parts + beside), None,
                    note="not evaluated: informative, the thesis gives no size for 'slightly decreasing'"))
    return checks


# --- Fig A.1: the gap over a wider range of m -------------------------------------------------------------

def _halves(maxima: pd.Series) -> tuple[pd.Series, pd.Series]:
    """The lower and upper halves of the sizes (sharing the middle size when their number is odd)."""
    n = len(maxima)
    return maxima.iloc[:(n + 1) // 2], maxima.iloc[n // 2:]


def sweep_checks(rows: pd.DataFrame, configuration: str) -> list[ClaimCheck]:
    checks = []
    for snapshot in ("early", "late"):
        runs = at_snapshot(rows, snapshot)
        if runs.empty:
            continue
        fit = exponent_summary(runs, "gap_loss")
        lower, upper = _halves(per_size_maxima(runs, "gap_loss"))
        slopes = [f"m {part.index.min()}-{part.index.max()}: log-log slope "
                  f"{_num(loglog_slope(part.index.to_numpy(), part.to_numpy()))}" for part in (lower, upper)]
        checks.append(_check(
            "K15", "fig_A_1", f"configuration {configuration} at {ITERATION[snapshot]}: the log-log plot of the gap "
            "reveals different regions of decrease with m", "informative: the gap maxima's fitted exponent over the "
            "whole sweep and the log-log slopes over the lower and upper halves of the sizes (no criterion in the "
            "thesis)", f"whole sweep {_fit_text(fit)}; " + "; ".join(slopes), None,
            note="not evaluated: informative, the thesis describes the regions without a criterion"))
    return checks


# --- where β̂ is attained (the test set holds the swapped-in z, as the thesis intends) -----------------------

def at_z_checks(rows: pd.DataFrame, figure: str) -> list[ClaimCheck]:
    checks = []
    for name, runs in rows.groupby("configuration"):
        parts = [f"{snapshot} {_at_z(group):.0%}" for snapshot, group in runs.groupby("snapshot")]
        checks.append(_check(
            "K16", figure, f"configuration {name}: β̂ is a max over the test set, which contains the swapped-in z "
            "(trap C2-4: kept, as intended)", "informative: the fraction of pairs whose β̂ is attained at z",
            f"{_at_z(runs):.0%} of {len(runs)} pair-snapshots (" + ", ".join(parts) + ")", None,
            note="not evaluated: informative, a property of the estimator (trap C2-4), not a statement of the thesis"))
    return checks


def _at_z(rows: pd.DataFrame) -> float:
    return float(rows["stability_at_z"].astype(str).str.lower().eq("true").mean())
