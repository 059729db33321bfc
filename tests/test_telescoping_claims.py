"""The telescoping paper's double-descent and grokking checks test what the paper states: each
is fed a counter-example built to violate its statement and must fail (or, where the smoother
does not reproduce the network, must not be evaluated)."""

import pandas as pd

from linearlens.claims.telescoping import double_descent_checks, gap_opening_step, generalisation_steps, grokking_checks


def _width_sweep(test: dict[int, float], gap=1e-4, train_accuracy=1.0, epoch=50) -> pd.DataFrame:
    """Final records of a one-hidden-layer sweep on 40 points with 2 inputs (p = 4h + 1, so the
    interpolation threshold is near width 10)."""
    return pd.DataFrame([{"setting": f"width{w}", "seed": 0, "step": 100, "test_mse": value, "test_error": value,
                          "train_mse": 1.0 / w, "train_error": 0.1 / w, "train_accuracy": train_accuracy,
                          "p_train": 10.0 * w,
                          "p_test": 5.0 * w, "parameters": 4 * w + 1, "n_train": 40, "smoother_gap": gap,
                          "output_scale": 1.0, "epoch": epoch} for w, value in test.items()])


STOPPING = {"max_epochs": 100, "patience_epochs": 20, "min_improvement": 1e-4}


def _checks(family, sweep):
    return {c.claim_id: c for c in double_descent_checks({family: sweep}, {family: STOPPING})}


DOUBLE_DESCENT = {1: 0.3, 2: 0.25, 5: 0.3, 10: 0.6, 20: 0.35, 50: 0.2}


def test_double_descent_needs_a_peak_at_the_threshold_and_a_second_descent():
    assert _checks("dd_cifar_catdog", _width_sweep(DOUBLE_DESCENT))["D1"].passed
    # The Fig 3: lowest test MSE at width 1, the largest near the threshold, and the widest
    # width still far above where the curve started: a peak without a second descent.
    no_second_descent = {1: 0.06, 2: 0.09, 5: 0.12, 10: 0.21, 20: 0.19, 50: 0.188}
    check = _checks("dd_cifar_catdog", _width_sweep(no_second_descent))["D1"]
    assert check.passed is False and check.failure_reason == "disagrees"
    rising = {1: 0.1, 2: 0.2, 5: 0.3, 10: 0.4, 20: 0.5, 50: 0.6}  # largest at the widest width
    assert _checks("dd_cifar_catdog", _width_sweep(rising))["D1"].passed is False
    far_peak = {1: 0.3, 2: 0.6, 5: 0.3, 10: 0.25, 20: 0.2, 50: 0.15}  # peak 5x below the threshold
    assert _checks("dd_cifar_catdog", _width_sweep(far_peak))["D1"].passed is False


def test_a_sweep_whose_wide_nets_never_fit_fails_for_the_regime_or_is_cut_by_the_cap():
    no_second_descent = {1: 0.06, 2: 0.09, 5: 0.12, 10: 0.21, 20: 0.19, 50: 0.188}
    plateaued = _width_sweep(no_second_descent, train_accuracy=0.99)  # ended by the paper's plateau rule
    check = _checks("dd_cifar_catdog", plateaued)["D1"]
    assert check.passed is False and check.failure_reason == "regime" and "[20, 50]" in check.note
    capped = _width_sweep(no_second_descent, train_accuracy=0.99, epoch=100)  # cut by our epoch cap
    check = _checks("dd_cifar_catdog", capped)["D1"]
    assert check.passed is None and "epoch cap" in check.note and "[20, 50]" in check.note
    # A sweep the paper trains for a fixed number of epochs (no 100% stop) is not cut by its end.
    fixed = {c.claim_id: c for c in double_descent_checks(
        {"dd_mnist1d": capped}, {"dd_mnist1d": STOPPING | {"at_full_train_accuracy": False}})}
    assert fixed["D1"].passed is False and fixed["D1"].failure_reason == "regime"
    assert _checks("dd_cifar_catdog", _width_sweep(DOUBLE_DESCENT, train_accuracy=0.99, epoch=100))["D1"].passed


def test_clean_labels_need_a_test_error_that_never_worsens_with_the_width():
    falling = {1: 0.1, 2: 0.08, 5: 0.06, 10: 0.05, 20: 0.04, 50: 0.03}
    checks = _checks("dd_mnist_clean", _width_sweep(falling))
    assert checks["D5"].passed and checks["D6"].passed and checks["D6"].measured == -1.0
    assert "error" in checks["D5"].check  # Fig 9 is about the 0-1 error
    # Largest at width 1, so no "peak at the threshold", yet it worsens with the width: the old
    # test (peak position only) passed it.
    worsening = {1: 0.1, 2: 0.03, 5: 0.02, 10: 0.03, 20: 0.04, 50: 0.045}
    checks = _checks("dd_mnist_clean", _width_sweep(worsening))
    assert checks["D5"].passed is False and checks["D6"].passed is False
    within_noise = {1: 0.1, 2: 0.03, 5: 0.02, 10: 0.025, 20: 0.02, 50: 0.015}  # one test point up and down
    assert _checks("dd_mnist_clean", _width_sweep(within_noise))["D5"].passed
    # Fig 9's training error is 0 at every width that fits: D3 asks that it never rise, and fails
    # where it climbs with the width.
    fitted = _width_sweep(falling).assign(train_error=[0.02, 0.0, 0.0, 0.0, 0.0, 0.0])
    assert _checks("dd_mnist_clean", fitted)["D3"].passed
    climbing = _width_sweep(falling).assign(train_error=[0.0, 0.0, 0.01, 0.02, 0.03, 0.04])
    assert _checks("dd_mnist_clean", climbing)["D3"].passed is False
    assert _checks("dd_mnist_clean", _width_sweep(within_noise))["D5"].passed


def test_p_test_must_fall_past_the_threshold():
    falling = _width_sweep(DOUBLE_DESCENT).assign(p_test=lambda f: 2000.0 / f["parameters"])
    assert _checks("dd_cifar_catdog", falling)["D7"].passed
    rising = _width_sweep(DOUBLE_DESCENT)  # p^test = 5 × width: grows past the threshold
    assert _checks("dd_cifar_catdog", rising)["D7"].passed is False


def test_p_checks_are_not_evaluated_on_a_smoother_that_leaves_the_network():
    tracking = _checks("dd_cifar_catdog", _width_sweep(DOUBLE_DESCENT))
    assert tracking["S1"].passed and tracking["D2"].passed and tracking["D4"].passed
    off = _checks("dd_cifar_catdog", _width_sweep(DOUBLE_DESCENT, gap=0.1))
    assert off["S1"].passed is False
    for claim in ("D2", "D4", "D7"):
        assert off[claim].passed is None and "S1" in off[claim].note
    assert off["D1"].passed and off["D3"].passed  # the network's own curves do not depend on S1


# --- grokking ------------------------------------------------------------------------------------

STEPS = (0, 10, 100, 1000, 10000)


def _curve(test, p_train=None, p_test=None, train=None, gap=1e-4, column="test_error") -> pd.DataFrame:
    """A one-seed run logged at STEPS; the training set is fitted at step 100 unless ``train`` says."""
    train = train or [0.3, 0.1, 0.0, 0.0, 0.0]
    p_train, p_test = p_train or [0, 10, 20, 30, 40], p_test or [0, 10, 20, 20, 20]
    frame = pd.DataFrame({"step": STEPS, "seed": 0, "train_mse": train, "test_mse": test, "p_train": p_train,
                          "p_test": p_test, "smoother_gap": gap, "output_scale": 1.0})
    if column == "test_error":
        frame["train_error"], frame["test_error"] = train, test
    return frame


def test_generalisation_is_compared_at_a_level_every_setting_reaches():
    generalises = _curve([0.5, 0.5, 0.4, 0.1, 0.05])
    stalls = _curve([0.5, 0.3, 0.3, 0.3, 0.3])  # stops early, at a worse level
    steps, level = generalisation_steps({"a": generalises, "b": stalls})
    assert level == 0.3 and steps == {"a": 1000.0, "b": 10.0}
    assert gap_opening_step(generalises) == 1000.0  # 20 < 0.9 · 30 from step 1,000 on
    at_once = _curve([0.5] * 5, p_test=[0, 5, 10, 15, 20])
    assert gap_opening_step(at_once) == 10.0  # not step 0, where p^test = p^train = 0


LARGE = {"large_init": {"main": "alpha6", "settings": {f"alpha{a}": {"model": {"init_scale": a}} for a in (5, 6, 7)}}}


def _large(tests, gaps_from, gap=1e-4):
    """α = 5, 6, 7 runs: test error curves and the step from which p^test leaves p^train."""
    runs = {}
    for alpha, test, opening in zip((5, 6, 7), tests, gaps_from):
        p_test = [0, 10, 20, 30, 40]
        p_test = [p if step < opening else 0.5 * p for p, step in zip(p_test, STEPS)]
        runs[f"alpha{alpha}"] = _curve(test, p_train=[0, 10, 20, 30, 40], p_test=p_test, gap=gap)
    return runs


def _grokking(runs, config=LARGE):
    return {c.claim_id: c for c in grokking_checks({"large_init": runs}, config)}


def test_larger_alpha_must_generalise_later_after_the_fit():
    later = [[0.5, 0.5, 0.1, 0.1, 0.1], [0.5, 0.5, 0.5, 0.1, 0.1], [0.5, 0.5, 0.5, 0.5, 0.1]]
    checks = _grokking(_large(later, gaps_from=(100, 1000, 10000)))
    assert checks["G6"].passed and checks["G10"].passed
    # The case: every α stalls at once, the largest at the worst test error; plateau steps
    # would rank them by when they stall. At the level all of them reach they come in reverse.
    stall = [[0.5, 0.5, 0.5, 0.5, 0.1], [0.5, 0.5, 0.5, 0.2, 0.2], [0.5, 0.3, 0.3, 0.3, 0.3]]
    # The p-gap opens at the same step for every α: not later with α.
    checks = _grokking(_large(stall, gaps_from=(100, 100, 100)))
    assert checks["G6"].passed is False and checks["G10"].passed is False


def test_large_init_p_checks_are_not_evaluated_when_the_smoother_is_off():
    later = [[0.5, 0.5, 0.1, 0.1, 0.1], [0.5, 0.5, 0.5, 0.1, 0.1], [0.5, 0.5, 0.5, 0.5, 0.1]]
    checks = _grokking(_large(later, gaps_from=(100, 1000, 10000), gap=0.5))
    assert checks["S1"].passed is False and checks["G6"].passed  # the network's own error curves
    for claim in ("G4", "G10"):
        assert checks[claim].passed is None and "not evaluated" in checks[claim].note


POLY = {"polynomial": {"main": "eps_0_2", "settings": {"eps_0_2": {"model": {"epsilon": 0.2}},
                                                        "eps_0_5": {"model": {"epsilon": 0.5}}}}}
FITTED_EARLY = [0.6, 0.1, 0.001, 0.0001, 0.0]


def _poly(main_test, large_test, main_gap_from=1000, large_gap_from=100):
    def run(test, opening):
        p_test = [p if step < opening else 0.5 * p for p, step in zip([0, 10, 20, 30, 40], STEPS)]
        return _curve(test, p_test=p_test, train=FITTED_EARLY, column="test_mse")
    return {c.claim_id: c for c in grokking_checks(
        {"polynomial": {"eps_0_2": run(main_test, main_gap_from), "eps_0_5": run(large_test, large_gap_from)}}, POLY)}


def test_polynomial_grokking_needs_the_test_drop_after_the_fit():
    grokked = _poly([0.9, 0.9, 0.9, 0.5, 0.05], [0.9, 0.9, 0.5, 0.05, 0.05])
    assert grokked["G9"].passed and grokked["G3"].passed and grokked["G8"].passed and grokked["G11"].passed
    # The Fig 4: most of the test drop before the training set is fitted (step 100).
    together = _poly([0.9, 0.5, 0.35, 0.3, 0.29], [0.9, 0.9, 0.5, 0.05, 0.05])
    assert together["G9"].passed is False and together["G9"].failure_reason == "disagrees"
    assert together["G3"].passed is None and "G9" in together["G3"].note  # no late improvement to coincide with
    still_falling = _poly([0.9, 0.5, 0.35, 0.3, 0.1], [0.9, 0.9, 0.5, 0.05, 0.05])
    assert still_falling["G9"].passed is None and "before settling" in still_falling["G9"].note


def test_larger_epsilon_must_generalise_earlier_not_stall_earlier():
    # ε = 0.5 settles first, but at a worse level that ε = 0.2 reaches sooner.
    stalls = _poly([0.9, 0.9, 0.3, 0.1, 0.05], [0.9, 0.6, 0.5, 0.4, 0.4], main_gap_from=100, large_gap_from=1000)
    assert stalls["G8"].passed is False and stalls["G11"].passed is False


def test_a_rank_threshold_compares_the_exact_value_not_its_round_off():
    """Four spawn steps with one swap give Spearman ρ = −0.8 exactly; floating point made it
    −0.7999…, and the gap check (ρ ≤ −0.8) failed on round-off."""
    from linearlens.claims.telescoping import lmc_checks

    gaps = [0.30, 0.10, 0.20, 0.05]  # falls, with one swap
    children = pd.DataFrame({"branch": "random", "seed": 0, "inner": 0, "spawn_step": [0, 10, 50, 200],
                             "gap_max": gaps})
    changes = pd.DataFrame({"branch": "random", "order": 0, "layer": "fc", "spawn_step": [0, 10, 50, 200],
                            "gradient_change": [4.0, 3.0, 2.0, 1.0]})
    checks = {c.claim_id: c for c in lmc_checks(children, changes)}
    assert checks["L1"].measured == -0.8 and checks["L1"].passed
    rising = children.assign(gap_max=gaps[::-1])
    assert {c.claim_id: c for c in lmc_checks(rising, changes)}["L1"].passed is False


# --- counter-examples for the remaining grokking checks ---------------------------------------------

TOGETHER = [0.5, 0.3, 0.05, 0.05, 0.05]  # the test error settles as the training set is fitted (step 100)
LATE = [0.5, 0.5, 0.5, 0.5, 0.05]        # ... or only at step 10,000, 100× after the fit


def test_g1_fails_when_large_init_generalises_as_soon_as_it_fits():
    runs = {f"alpha{a}": _curve(LATE) for a in (5, 6, 7)}
    assert _grokking(runs)["G1"].passed
    runs["alpha6"] = _curve(TOGETHER)
    check = _grokking(runs)["G1"]
    assert check.passed is False and check.measured == 1.0


def test_g2_fails_when_standard_init_groks():
    checks = [c for c in grokking_checks({"standard_init": {"alpha1": _curve(LATE)}}, {}) if c.claim_id == "G2"]
    assert len(checks) == 1 and checks[0].passed is False and checks[0].measured == 100.0
    together = [c for c in grokking_checks({"standard_init": {"alpha1": _curve(TOGETHER)}}, {}) if c.claim_id == "G2"]
    assert together[0].passed


WITH_STANDARD = {**LARGE, "standard_init": {"settings": {"alpha1": {"model": {}},
                                                         "alpha1_sigmoid": {"model": {"sigmoid_output": True}}}}}


def _g5(large_p, plain_p, sigmoid_p):
    def run(p):
        return _curve(LATE, p_train=[0, 10, 20, 30, 100], p_test=[0, 10, 20, 20, p])
    large = {f"alpha{a}": run(large_p) for a in (5, 6, 7)}
    standard = {"alpha1": run(plain_p), "alpha1_sigmoid": run(sigmoid_p)}
    checks = grokking_checks({"large_init": large, "standard_init": standard}, WITH_STANDARD)
    return next(c for c in checks if c.claim_id == "G5")


def test_g5_fails_unless_alpha1_has_fewer_effective_parameters_and_the_sigmoid_fewest():
    assert _g5(large_p=70, plain_p=17, sigmoid_p=5).passed
    assert _g5(large_p=70, plain_p=80, sigmoid_p=5).passed is False   # α = 1 above α = 6
    assert _g5(large_p=70, plain_p=5, sigmoid_p=17).passed is False   # the sigmoid not lowest


POLY3 = {"polynomial": {"main": "eps_0_2", "settings": {
    name: {"model": {"epsilon": eps}} for name, eps in (("eps_0_05", 0.05), ("eps_0_2", 0.2), ("eps_0_5", 0.5))}}}


def _g7(p_test):
    runs = {name: _curve([0.9, 0.9, 0.9, 0.5, 0.05], p_test=p_test, train=FITTED_EARLY, column="test_mse")
            for name in POLY3["polynomial"]["settings"]}
    return next(c for c in grokking_checks({"polynomial": runs}, POLY3) if c.claim_id == "G7")


def test_g7_fails_unless_small_epsilon_p_test_first_exceeds_then_drops_below_p_train():
    assert _g7([0, 15, 30, 20, 20]).passed  # p^train 0, 10, 20, 30, 40
    assert _g7([0, 5, 10, 15, 20]).passed is False   # never above p^train
    assert _g7([0, 15, 30, 45, 60]).passed is False  # above, and still above at the end


def test_s1_fails_when_the_smoother_leaves_the_network_at_any_logged_step():
    """S1 is "at every logged step": a smoother that is off mid-run and back on at the end fails."""
    runs = {f"alpha{a}": _curve(LATE) for a in (5, 6, 7)}
    assert _grokking(runs)["S1"].passed
    runs["alpha7"] = _curve(LATE).assign(smoother_gap=[1e-4, 1e-4, 0.05, 1e-4, 1e-4])
    check = _grokking(runs)["S1"]
    assert check.passed is False and "alpha7" in check.measured


def test_lmc_checks_fail_on_the_reverse_of_the_papers_pattern():
    """L3 fails where the last layer's gradient change grows with the spawn step; L2 where the
    pretrained branch is further from linear connectivity than the random one."""
    from linearlens.claims.telescoping import lmc_checks

    steps = [0, 10, 50, 200]
    children = pd.concat([pd.DataFrame({"branch": branch, "seed": 0, "inner": 0, "spawn_step": steps,
                                        "gap_max": gaps})
                          for branch, gaps in (("random", [0.3, 0.2, 0.1, 0.05]), ("pretrained", [0.1, 0.05, 0.02, 0.0]))])
    changes = pd.concat([pd.DataFrame({"branch": branch, "order": 0, "layer": "fc", "spawn_step": steps,
                                       "gradient_change": [4.0, 3.0, 2.0, 1.0]}) for branch in ("random", "pretrained")])
    checks = [c for c in lmc_checks(children, changes)]
    assert all(c.passed for c in checks) and {c.claim_id for c in checks} == {"L1", "L2", "L3"}
    growing = changes.assign(gradient_change=[1.0, 2.0, 3.0, 4.0] * 2)
    assert all(c.passed is False for c in lmc_checks(children, growing) if c.claim_id == "L3")
    swapped = children.assign(branch=children["branch"].map({"random": "pretrained", "pretrained": "random"}))
    assert next(c for c in lmc_checks(swapped, changes) if c.claim_id == "L2").passed is False


def test_grokking_figures_mark_a_regression_run_cut_while_its_test_mse_still_falls(tmp_path):
    """Figs 4, 11: a polynomial run whose test MSE still falls over its second half (G9's measure)
    says so in its title and caption; a settled one and a 0-1 error curve carry no mark."""
    import json

    import matplotlib.pyplot as plt

    from linearlens.figures.telescoping import _grokking_column, plot_grokking

    falling = _curve([0.9, 0.9, 0.9, 0.5, 0.1], train=FITTED_EARLY, column="test_mse")
    settled = _curve([0.9, 0.5, 0.1, 0.1, 0.1], train=FITTED_EARLY, column="test_mse")
    fig, axes = plt.subplots(2, 3)
    marks = [_grokking_column(axes[0, i], axes[1, i], runs, name, True)
             for i, (runs, name) in enumerate([(falling, "ε = 0.2"), (settled, "ε = 0.5"), (_curve(LATE), "α = 6")])]
    titles = [ax.get_title() for ax in axes[0]]
    plt.close(fig)
    assert marks == [True, False, False] and "still falling at cap (−80%)" in titles[0] and titles[1:] == ["ε = 0.5", "α = 6"]
    png = tmp_path / "fig_11.png"
    plot_grokking([(falling, "ε = 0.2", True)], png, "Fig 11.", "quick scale — synthetic")
    assert "still falling" in json.loads(png.with_suffix(".json").read_text())["caption"]


def test_p_checks_fail_where_p_test_stays_above_p_train_or_p_train_falls_with_the_width():
    """D2: past the threshold p^test < p^train at every width; D4: p^train grows with the width."""
    above = _width_sweep(DOUBLE_DESCENT).assign(p_test=lambda f: 20.0 * f["parameters"])
    assert _checks("dd_cifar_catdog", above)["D2"].passed is False
    falling = _width_sweep(DOUBLE_DESCENT).assign(p_train=lambda f: 1000.0 / f["parameters"])
    assert _checks("dd_cifar_catdog", falling)["D4"].passed is False


def test_grokking_p_checks_fail_where_p_test_never_leaves_p_train():
    """G4 (large initialisation) and G3 (polynomial, with a late test drop that G9 accepts) need
    p^test below p^train at the end; a p^test that never leaves p^train fails both."""
    never = 10**6  # the p-gap opens after the run's last step
    later = [[0.5, 0.5, 0.1, 0.1, 0.1], [0.5, 0.5, 0.5, 0.1, 0.1], [0.5, 0.5, 0.5, 0.5, 0.1]]
    assert _grokking(_large(later, gaps_from=(100, 1000, 10000)))["G4"].passed
    assert _grokking(_large(later, gaps_from=(never,) * 3))["G4"].passed is False
    grokked = _poly([0.9, 0.9, 0.9, 0.5, 0.05], [0.9, 0.9, 0.5, 0.05, 0.05], main_gap_from=never)
    assert grokked["G9"].passed and grokked["G3"].passed is False
