"""George ch. 5 claims fed counter-examples: runs built to violate each statement must fail it, and
runs that end before the regime a claim is about must leave it not evaluated, with the reason."""

import numpy as np
import pandas as pd

from configured import claim_thresholds
from linearlens.analysis.george_thesis.ch5 import LINEARITY_METRICS, best_test_loss
from linearlens.claims.george_thesis.ch5 import (
    DifficultyThresholds,
    SpuriousThresholds,
    best_test_loss_check,
    decile_sign_check,
    memorisation_check,
    nonlinear_rotation_check,
    rate_linearity_checks,
    second_phase_checks,
    trajectory_checks,
)

ENDINGS = {1.0: "finished after 800 steps", 100.0: "hit its 4,000-step cap (200 epochs), its stopping rule unmet"}


def _noisy_run(clean, test, noisy_accuracy=None) -> pd.DataFrame:
    clean = np.asarray(clean, dtype=float)
    accuracy = np.zeros_like(clean) if noisy_accuracy is None else np.asarray(noisy_accuracy, dtype=float)
    return pd.DataFrame({"clean_loss": clean, "test_loss": np.asarray(test, dtype=float), "noisy_accuracy": accuracy})


# --- H11: the sweet spot (best test loss) ------------------------------------------------------------

def test_a_higher_nonlinear_sweet_spot_fails():
    """Both runs go past their lowest test loss; the non-linear one's is the higher: the claim fails."""
    one = _noisy_run([2.3, 1.5, 1.0, 0.5, 0.2], [2.3, 1.2, 0.80, 0.90, 1.10])
    lazy = _noisy_run([2.3, 1.8, 1.2, 0.8, 0.6], [2.3, 1.1, 0.60, 0.70, 0.90])
    check = best_test_loss_check("fig_5_2", "mlp, seed 0", one, lazy, 100.0, ENDINGS)
    assert check.passed is False and check.failure_reason == "disagrees"
    lower = best_test_loss_check("fig_5_2", "mlp, seed 0", lazy, one, 100.0, ENDINGS)
    assert lower.passed is True


def test_a_run_capped_at_its_lowest_test_loss_is_not_evaluated():
    """The α = 100 run hits its cap still improving (the quick runs: clean loss 0.26, test loss at its
    minimum at the last record). Comparing the two minima compares runs at unequal progress; the old
    check (min vs min) passed here."""
    one = _noisy_run([2.3, 1.0, 0.5, 0.2, 0.1], [2.3, 0.6, 0.32, 0.36, 0.37])
    lazy = _noisy_run([2.3, 1.5, 0.8, 0.4, 0.26], [2.3, 1.3, 0.7, 0.45, 0.39])
    assert best_test_loss(one) < best_test_loss(lazy)  # what the old check compared: it held
    check = best_test_loss_check("fig_5_2", "mlp, seed 0", one, lazy, 100.0, ENDINGS)
    assert check.passed is None
    assert check.note.startswith("not evaluated at this scale") and "α = 100" in check.note and "cap" in check.note
    assert "α = 1 run" not in check.note  # the α = 1 run went past its sweet spot


# --- H11: memorisation onset ---------------------------------------------------------------------------

def test_memorisation_onset_earlier_for_the_nonlinear_run_fails_and_undecided_says_why():
    one = _noisy_run([2.3, 1.5, 1.0, 0.5], [2.3] * 4, [0.1, 0.0, 0.3, 0.6])  # memorises at clean loss 1.0
    lazy = _noisy_run([2.3, 1.5, 1.0, 0.5], [2.3] * 4, [0.1, 0.0, 0.0, 0.2])  # at clean loss 0.5
    assert memorisation_check("fig_5_2", "mlp, seed 0", one, lazy, 100.0, 0.1, ENDINGS).passed is False
    short = _noisy_run([2.3, 1.5, 1.2], [2.3] * 3, [0.1, 0.0, 0.0])  # stops at 1.2, before the other's onset
    check = memorisation_check("fig_5_2", "mlp, seed 0", lazy, short, 100.0, 0.1, ENDINGS)
    assert check.passed is None and "α = 100 run hit its" in check.note


# --- H9: linearity at equal progress ---------------------------------------------------------------------

def _metric_run(progress, value, experiment="noisy") -> pd.DataFrame:
    column = "clean_loss" if experiment == "noisy" else "train_loss"
    frame = pd.DataFrame({column: np.asarray(progress, dtype=float)})
    for metric in LINEARITY_METRICS:
        frame[metric] = np.asarray(value, dtype=float)
    return frame


def test_the_nonlinear_run_more_linear_at_equal_progress_fails():
    """At the deepest progress both reached (0.8) the α = 1 run is the more linear one; only its final
    value (at 0.1, far past anything the α = 100 run reached) is lower: the old final-vs-final check held."""
    one = _metric_run([2.3, 1.5, 0.8, 0.1], [1.0, 1.0, 0.99, 0.5])
    lazy = _metric_run([2.3, 1.5, 0.8], [1.0, 0.97, 0.95])
    assert (one[list(LINEARITY_METRICS)].iloc[-1] < lazy[list(LINEARITY_METRICS)].iloc[-1]).all()
    check = nonlinear_rotation_check("fig_5_2", "mlp, seed 0", "noisy", one, lazy, 100.0)
    assert check.passed is False and "0.800" in check.measured


# --- Fig C.5: signs of the matched differences --------------------------------------------------------

def _decile_run(mean, bottom, top) -> pd.DataFrame:
    return pd.DataFrame({"train_loss": mean, "train_bin0_loss": bottom, "train_bin1_loss": top})


def test_differences_that_change_sign_fail_though_their_mean_has_the_right_sign():
    """Bottom decile: α = 1 behind (+) early, ahead (−) later, positive on average; top decile always
    ahead. The statement ("at equal training loss ... conversely") fails; the old mean-sign check held."""
    mean = np.linspace(2.3, 0.3, 21)
    lazy = _decile_run(mean, mean * 1.2, mean * 0.8)
    bottom = mean * 1.2 + np.where(mean > 1.0, 0.3, -0.05)
    one = _decile_run(mean, bottom, mean * 0.7)
    check = decile_sign_check("mlp, seed 0", one, lazy, 100.0, 1.0)
    assert check.passed is False
    assert np.mean(bottom - lazy.train_bin0_loss) > 0  # what the old check read
    held = decile_sign_check("mlp, seed 0", _decile_run(mean, mean * 1.3, mean * 0.7), lazy, 100.0, 1.0)
    assert held.passed is True


# --- H13: the second phase on runs that hit their epoch cap ----------------------------------------------

def _spurious(final_one: float, final_lazy: float, lazy_ended: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows, summaries = [], []
    for alpha, final, ended in ((1.0, final_one, "stopped"), (100.0, final_lazy, lazy_ended)):
        for step, accuracy in ((0, 0.5), (100, final)):
            rows.append({"family": "waterbirds", "seed": 0, "alpha": alpha, "step": step,
                         "balanced_test_accuracy": accuracy})
        summaries.append({"family": "waterbirds", "seed": 0, "alpha": alpha, "ended": ended, "steps": 100,
                          "epochs": 60.0})
    return pd.DataFrame(rows), pd.DataFrame(summaries)


def test_runs_that_do_not_converge_fail_and_a_capped_run_is_not_evaluated():
    limits = SpuriousThresholds(**claim_thresholds("george_thesis", "quick", "spurious"))
    frame, summaries = _spurious(0.90, 0.70, "stopped")
    converge, edge = second_phase_checks(frame, summaries, "waterbirds", 0, 100.0, limits, "fig_5_3", "wb")
    assert converge.passed is False and converge.failure_reason == "disagrees"
    assert edge.passed is True
    frame, summaries = _spurious(0.90, 0.70, "finished")
    converge, edge = second_phase_checks(frame, summaries, "waterbirds", 0, 100.0, limits, "fig_5_3", "wb")
    assert converge.passed is None and "60-epoch cap" in converge.note  # the second phase was cut short
    assert edge.passed is None and edge.note.startswith("not evaluated")  # α = 1 ahead only as α = 100 was cut short
    frame, summaries = _spurious(0.80, 0.82, "stopped")
    converge, edge = second_phase_checks(frame, summaries, "waterbirds", 0, 100.0, limits, "fig_5_3", "wb")
    assert converge.passed is True
    assert edge.passed is False and edge.failure_reason == "stand_in"  # the linear run ends ahead


# --- H12 (Fig C.1): the learning rate is not α ----------------------------------------------------------

def _linear_run(level: float) -> pd.DataFrame:
    """A noisy-label run whose three linearity metrics fall from 1 to ``level`` as the clean loss falls."""
    clean = np.array([2.3, 1.8, 1.3, 0.8])
    return pd.DataFrame({"clean_loss": clean, **{m: np.linspace(1.0, level, 4) for m in LINEARITY_METRICS}})


def test_a_smaller_rate_less_linear_than_the_base_or_as_linear_as_alpha_100_fails():
    """Counter-examples to Fig C.1: a smaller rate whose run rotates more than the base rate's, and one
    that stays as linear as the α = 100 run (the thesis: lr 1e-6 still drops to about 0.9)."""
    base, lazy = _linear_run(0.8), _linear_run(0.99)
    more, less = rate_linearity_checks(0.0005, 0.05, 100.0, _linear_run(0.7), base, lazy)
    assert more.passed is False and less.passed is True
    more, less = rate_linearity_checks(0.0005, 0.05, 100.0, _linear_run(0.99), base, lazy)
    assert more.passed is True and less.passed is False
    assert [c.passed for c in rate_linearity_checks(0.0005, 0.05, 100.0, _linear_run(0.9), base, lazy)] == [True, True]


def test_rates_off_the_base_trajectory_or_alpha_on_it_fail():
    """Counter-examples: a rate whose accuracies leave the base rate's trajectory; α = 100 departing from
    it less than a rate does. The check shows the thesis has no number, and why this one."""
    for scale in ("quick", "paper"):
        limits = DifficultyThresholds(**claim_thresholds("george_thesis", scale, "difficulty"))
        apart, departs = trajectory_checks({"lr 0.015": 0.02, "lr 0.0005": 0.3}, 0.2, 100.0, 0.5, limits)
        assert apart.passed is False and departs.passed is False
        assert apart.document_threshold and "no number" in apart.note
        close, departs = trajectory_checks({"lr 0.015": 0.02}, 0.2, 100.0, 0.5, limits)
        assert close.passed is True and departs.passed is True
