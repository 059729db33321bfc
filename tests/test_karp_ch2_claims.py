"""The chapter-2 stability claims on synthetic runs whose exponents are known: the per-m maxima follow
y = a·m^b exactly (the other samples are smaller), so a check passes or fails by construction; and
absent inputs skip their checks."""

import numpy as np
import pandas as pd
import pytest

from configured import claim_thresholds
from linearlens.claims.karp_thesis.ch2 import stability_claims
from linearlens.manifests.jobs import ClaimsJob

# An exact power law leaves curve_fit no residual to estimate a covariance from.
pytestmark = pytest.mark.filterwarnings("ignore:Covariance of the parameters")

SIZES = (100, 200, 400, 800)
KEPT = (100, 800)
COLUMNS = ("gap_loss", "gap_error", "stability", "distance", "normalised_distance", "norm")
SPEC = {"configurations": {"lr": {"trials": [1]}, "1a": {"trials": [1, 2]}, "2a": {"trials": [1, 2]},
                           "2b": {"trials": [1]}},
        "sweep": {"configuration": "1a", "trial": 1, "samples": 3, "sizes": [50, 300, 1000, *SIZES]}}


def pair_rows(configuration: str, trial: int, exponents: dict, snapshots=("main",), sizes=SIZES) -> pd.DataFrame:
    """Three pairs per size: the first at a·m^b (the maximum), the others below it."""
    records = []
    for snapshot in snapshots:
        for m in sizes:
            for pair, scale in enumerate((1.0, 0.5, 0.25)):
                values = {column: scale * 2.0 * m ** exponents.get(column, -0.5) for column in COLUMNS}
                records.append({"configuration": configuration, "trial": trial, "m": m, "pair": pair,
                                "snapshot": snapshot, "step": 0, "stability_at_z": pair == 0,
                                **values})
    return pd.DataFrame.from_records(records)


def curve_rows(configuration: str, trial: int, dip: float) -> pd.DataFrame:
    """Three pairs per kept size whose test accuracy dips by ``dip`` at α = 0.5 below endpoints of 0.9."""
    alphas = np.linspace(-1, 2, 76).round(12)
    bump = np.where((alphas >= 0) & (alphas <= 1), 4 * alphas * (1 - alphas), 0.0)
    return pd.concat([pd.DataFrame({"configuration": configuration, "trial": trial, "m": m, "pair": pair,
                                    "alpha": alphas, "train_accuracy": 1.0, "test_accuracy": 0.9 - dip * bump})
                      for m in KEPT for pair in range(3)], ignore_index=True)


def write(tmp_path, name: str, frames: list[pd.DataFrame]) -> list[str]:
    paths = []
    for k, frame in enumerate(frames):
        path = tmp_path / f"{name}{k}.csv"
        frame.to_csv(path, index=False)
        paths.append(str(path))
    return paths


def claims(inputs: dict) -> list:
    return stability_claims(ClaimsJob(inputs=inputs, params={"thresholds": claim_thresholds("karp_thesis", "quick", "stability"), "spec": SPEC}))


def by_id(checks: list, claim_id: str) -> list:
    return [check for check in checks if check.claim_id == claim_id]


def test_the_same_thresholds_at_both_scales():
    assert claim_thresholds("karp_thesis", "quick", "stability") == claim_thresholds("karp_thesis", "paper", "stability")


def test_absent_inputs_skip_their_checks():
    assert claims({}) == []


def test_one_size_gives_no_verdict(tmp_path):
    rows = pair_rows("1a", 1, {"gap_loss": -0.2, "stability": -0.05}, sizes=(100,))
    checks = claims({"networks": write(tmp_path, "nets", [rows])})
    assert by_id(checks, "K4")[0].passed is None and "n/a" in by_id(checks, "K4")[0].measured


@pytest.mark.parametrize("stability, passes", [(-1.1, True), (-0.5, False)])
def test_logistic_stability_tracks_the_gap(tmp_path, stability, passes):
    rows = pair_rows("lr", 1, {"gap_loss": -1.1, "stability": stability, "distance": -1.05, "gap_error": -0.82})
    checks = claims({"logistic": write(tmp_path, "lr", [rows])})
    assert {check.claim_id for check in checks} == {"K1", "K2", "K3", "K16"}
    tracks, distance, error = by_id(checks, "K1")[0], by_id(checks, "K2")[0], by_id(checks, "K3")[0]
    assert tracks.passed is passes
    assert f"({stability:.3f} vs −1.100".replace("-", "−") in tracks.measured
    assert distance.passed is True and "b = −1.05" in distance.measured
    assert error.passed is None and "b = −0.82" in error.measured
    assert "33%" in by_id(checks, "K16")[0].measured  # one pair of three at z


def network_frames(first_2a_stability: float, second_1a_stability: float, distance: float) -> list[pd.DataFrame]:
    """1a: gap −0.2; 2a: gap −0.5; 2b: gap −0.35, stability −0.17 (the thesis's margins, roughly)."""
    snapshots = ("early", "main", "late")
    common = {"distance": distance, "normalised_distance": distance, "norm": 0.05}
    return [pair_rows("1a", 1, {"gap_loss": -0.2, "stability": -0.05, **common}, snapshots),
            pair_rows("1a", 2, {"gap_loss": -0.2, "stability": second_1a_stability, **common}, snapshots),
            pair_rows("2a", 1, {"gap_loss": -0.5, "stability": first_2a_stability, **common}, snapshots),
            pair_rows("2a", 2, {"gap_loss": -0.5, "stability": 0.0, **common}, snapshots),
            pair_rows("2b", 1, {"gap_loss": -0.35, "stability": -0.17, **common}, snapshots)]


def test_networks_stability_slower_than_the_gap(tmp_path):
    checks = claims({"networks": write(tmp_path, "nets", network_frames(0.0, -0.05, 0.1))})
    main = {check.statement.split(":")[0]: check for check in by_id(checks, "K4")}
    assert [check.passed for check in main.values()] == [True, True, True]
    assert "b_stability − b_gap = +0.150 (−0.05 vs −0.20" in main["configuration 1a"].measured
    assert by_id(checks, "K5")[0].passed is True
    appendix = by_id(checks, "K6")
    assert [check.figure for check in appendix] == [f"fig_A_{k}" for k in range(2, 11)]
    assert all(check.passed for check in appendix)


def test_a_failing_trial_fails_its_figure_and_shows_its_number(tmp_path):
    checks = claims({"networks": write(tmp_path, "nets", network_frames(-0.3, -0.2, 0.1))})
    assert by_id(checks, "K5")[0].passed is False
    assert [check.passed for check in by_id(checks, "K4")] == [True, True, True]  # 2a: −0.3 − (−0.5) = +0.2
    a2 = next(check for check in by_id(checks, "K6") if check.figure == "fig_A_2")
    # 1a: +0.15, 0.0 on pairs that separated: the split is shown, and the failure stands
    assert a2.passed is False and a2.failure_reason == "disagrees" and "trials split" in a2.note
    assert "trial 1 +0.15, trial 2 +0.00" in a2.note
    assert by_id(checks, "K5")[0].failure_reason == "disagrees"
    assert "1 of 2 trials meet it" in a2.measured
    assert "0.000 (−0.20 vs −0.20" in a2.measured and "FAILS" in a2.measured


@pytest.mark.parametrize("distance, passes", [(0.1, True), (-0.5, False)])
def test_distances_do_not_decrease(tmp_path, distance, passes):
    checks = claims({"networks": write(tmp_path, "nets", network_frames(0.0, -0.05, distance))})
    for claim_id in ("K7", "K8", "K10"):
        assert [check.passed for check in by_id(checks, claim_id)] == [passes] * 3
    assert all(check.passed is None and "b = +0.05" in check.measured for check in by_id(checks, "K9"))


@pytest.mark.parametrize("dips, connected, ordered", [
    ({"1a": 0.0, "2a": 0.03, "2b": 0.3}, True, True),
    ({"1a": 0.05, "2a": 0.03, "2b": 0.3}, False, False)])
def test_connectivity(tmp_path, dips, connected, ordered):
    frames = [curve_rows(name, 1, dip) for name, dip in dips.items()]
    frames += [curve_rows("1a", 2, dips["1a"]), curve_rows("2a", 2, dips["2a"])]
    checks = claims({"curves": write(tmp_path, "curves", frames)})
    assert [check.passed for check in by_id(checks, "K11")] == [connected] * len(KEPT)
    assert [check.passed for check in by_id(checks, "K12")] == [ordered] * len(KEPT)
    assert [check.passed for check in by_id(checks, "K13")] == [connected] * len(KEPT)
    assert [check.passed for check in by_id(checks, "K14")] == [None]
    assert f"test dip max {dips['1a']:.3f}" in by_id(checks, "K11")[0].measured


def separated_2b(separation: float) -> pd.DataFrame:
    """2b's first-trial pair rows at the kept sizes, every pair at normalised distance ``separation``."""
    rows = pair_rows("2b", 1, {"gap_loss": -0.35, "stability": -0.17}, sizes=KEPT)
    return rows.assign(normalised_distance=separation)


@pytest.mark.parametrize("dips", [{"1a": 0.002, "2a": 0.002, "2b": 0.002},  # near-identical networks
                                  {"1a": 0.0, "2a": 0.0, "2b": 0.0}])  # no pair dips at all
def test_connectivity_needs_the_1a_2b_contrast(tmp_path, dips):
    """A small dip passes for any two near-identical networks: 1a is connected only against 2b's loss,
    and 2b's pairs that separated yet stay connected fail the contrast (with or without the pair rows)."""
    frames = [curve_rows(name, 1, dip) for name, dip in dips.items()] + [curve_rows("1a", 2, dips["1a"])]
    for inputs in ({}, {"networks": write(tmp_path, "nets", [separated_2b(0.5)])}):
        checks = claims({"curves": write(tmp_path, "curves", frames), **inputs})
        for check in by_id(checks, "K11") + by_id(checks, "K12") + by_id(checks, "K13"):
            assert check.passed is False and check.failure_reason == "disagrees"


def test_connectivity_is_not_evaluated_where_2b_pairs_never_separated(tmp_path):
    """2b's pairs stay within 3% of their norm of each other: 2b cannot lose connectivity, so the
    contrast is not evaluated (the note gives the measured distances), whatever the dips."""
    frames = [curve_rows(name, 1, 0.0) for name in ("1a", "2a", "2b")] + [curve_rows("1a", 2, 0.0)]
    checks = claims({"curves": write(tmp_path, "curves", frames),
                     "networks": write(tmp_path, "nets", [separated_2b(0.03)])})
    contrasts = by_id(checks, "K11") + by_id(checks, "K12") + by_id(checks, "K13")
    assert len(contrasts) == 3 * len(KEPT)
    assert all(check.passed is None and "barely leave" in check.note and "trial 1 0.030" in check.note
               for check in contrasts)


def test_exponents_are_not_evaluated_on_pairs_that_never_separated(tmp_path):
    """The pairs of every configuration stay within a tenth of their norm (median 0.05 at the largest
    m): K4-K6 are not evaluated, while K7 and K10 (the distances' own statements) still fail."""
    frames = [pair_rows(name, trial, {"gap_loss": -0.5, "stability": -0.5, "distance": -0.5,
                                      "normalised_distance": -0.5})
              for name, trials in (("1a", (1, 2)), ("2a", (1, 2)), ("2b", (1,))) for trial in trials]
    checks = claims({"networks": write(tmp_path, "nets", frames)})
    for check in by_id(checks, "K4") + by_id(checks, "K5") + by_id(checks, "K6"):
        assert check.passed is None and "barely leave" in check.note and "m = 800" in check.note
    assert all("misses it (pairs not apart)" in check.measured and "FAILS" not in check.measured for check in by_id(checks, "K6"))
    assert all(check.passed is False for check in by_id(checks, "K7") + by_id(checks, "K10"))


def test_a_separated_failing_trial_is_not_rescued_by_an_unseparated_one(tmp_path):
    """Trial 1 separated and failing (stability as fast as the gap), trial 2 barely separated: Fig A.2
    fails on trial 1."""
    failing = {"gap_loss": -0.5, "stability": -0.5, "distance": 0.0, "normalised_distance": 0.0}
    close = {"gap_loss": -0.5, "stability": 0.0, "distance": -0.5, "normalised_distance": -0.5}
    checks = claims({"networks": write(tmp_path, "nets", [pair_rows("1a", 1, failing), pair_rows("1a", 2, close)])})
    a2 = next(check for check in by_id(checks, "K6") if check.figure == "fig_A_2")
    assert a2.passed is False and by_id(checks, "K4")[0].passed is False


def test_sweep_is_informative(tmp_path):
    sweep = pair_rows("1a", 1, {"gap_loss": -0.6}, ("early", "late"), sizes=(50, 300, 1000))
    sweep = sweep.rename(columns={"pair": "sample"})
    pairs = pair_rows("1a", 1, {"gap_loss": -0.6}, ("early", "late"), sizes=(100, 200))
    checks = claims({"sweep": write(tmp_path, "sweep", [sweep]), "sweep_pairs": write(tmp_path, "pairs", [pairs])})
    assert [check.claim_id for check in checks] == ["K15", "K15"]
    assert all(check.passed is None and "whole sweep b = −0.60" in check.measured for check in checks)
    assert "m 50-200" in checks[0].measured and "m 200-1000" in checks[0].measured


def test_every_unevaluated_check_says_why(tmp_path):
    frames = [curve_rows(name, 1, 0.0) for name in ("1a", "2a", "2b")] + [curve_rows("2a", 2, 0.03)]
    checks = claims({"curves": write(tmp_path, "curves", frames),
                     "networks": write(tmp_path, "nets", network_frames(0.0, -0.05, 0.1))})
    assert all(check.note.startswith("not evaluated") for check in checks if check.passed is None)


# --- counter-examples: each check fed data built to violate its statement ---------------------------

def test_logistic_distance_decaying_slower_than_the_gap_fails_k2(tmp_path):
    rows = pair_rows("lr", 1, {"gap_loss": -1.1, "stability": -1.1, "distance": -0.3, "gap_error": -0.82})
    distance = by_id(claims({"logistic": write(tmp_path, "lr", [rows])}), "K2")[0]
    assert distance.passed is False and "b = −0.30" in distance.measured


def test_stability_decaying_like_the_gap_fails_k4(tmp_path):
    """Every trial's stability decays as fast as its gap: the networks' contrast is absent (the trials
    agree, so the failure is the runs' disagreement with the thesis, not a split)."""
    frames = [pair_rows(name, trial, {"gap_loss": -0.5, "stability": -0.5, "distance": 0.0,
                                      "normalised_distance": 0.0})
              for name, trials in (("1a", (1, 2)), ("2a", (1, 2)), ("2b", (1,))) for trial in trials]
    checks = claims({"networks": write(tmp_path, "nets", frames)})
    assert [check.passed for check in by_id(checks, "K4")] == [False] * 3
    assert all(check.failure_reason == "disagrees" for check in by_id(checks, "K4"))
    assert by_id(checks, "K5")[0].passed is False  # 2a's stability decreases (m^−0.5)


def distance_frames(first: dict, second: dict) -> list[pd.DataFrame]:
    """1a, 2a (trials 1, 2) and 2b (trial 1) whose first trials' distances follow ``first`` and
    whose second trials' follow ``second`` (exponents per column); gap and stability as the thesis's."""
    exponents = {"gap_loss": -0.5, "stability": 0.0, "norm": 0.0}
    return [pair_rows(name, trial, {**exponents, **(first if trial == 1 else second)})
            for name, trials in (("1a", (1, 2)), ("2a", (1, 2)), ("2b", (1,))) for trial in trials]


def test_a_first_trial_whose_distances_decrease_fails_k7(tmp_path):
    flat = {"distance": 0.0, "normalised_distance": 0.0}
    checks = claims({"networks": write(tmp_path, "nets", distance_frames(
        {"distance": -0.5, "normalised_distance": -0.5}, flat))})
    assert [check.passed for check in by_id(checks, "K7")] == [False] * 3
    assert all("b = −0.50" in check.measured for check in by_id(checks, "K7"))


def test_a_further_trial_whose_distances_decrease_fails_k8_only(tmp_path):
    """Trial 1 flat, trial 2 decreasing: Fig 2.3 (trial 1) holds, Fig A.11 (every trial) does not."""
    flat = {"distance": 0.0, "normalised_distance": 0.0}
    checks = claims({"networks": write(tmp_path, "nets", distance_frames(
        flat, {"distance": -0.5, "normalised_distance": -0.5}))})
    assert [check.passed for check in by_id(checks, "K7")] == [True] * 3
    k8 = {check.statement.split(":")[0]: check.passed for check in by_id(checks, "K8")}
    assert k8 == {"configuration 1a": False, "configuration 2a": False, "configuration 2b": True}


def test_normalised_distances_that_decrease_fail_k10_while_the_raw_ones_grow(tmp_path):
    """The raw distances grow with m (the norms grow), but normalising turns the growth into a decrease:
    Figs 2.3 and A.11 hold, Fig A.13's 'no significant decrease' does not."""
    growing = {"distance": 0.3, "normalised_distance": -0.5}
    checks = claims({"networks": write(tmp_path, "nets", distance_frames(growing, growing))})
    assert all(check.passed is True for check in by_id(checks, "K7") + by_id(checks, "K8"))
    assert [check.passed for check in by_id(checks, "K10")] == [False] * 3
    assert all("b = −0.50" in check.measured for check in by_id(checks, "K10"))
