"""Karp thesis chapter 5 and appendix C: the torch-free analysis of growth and stacking runs
(smoothing, correlations, Recall@k, regret, the LAG tables), the figures and tables, and the claims,
over synthetic run files in the documented format."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from configured import claim_thresholds
from linearlens.analysis.karp_thesis.ch5 import (
    THESIS_TABLE_5_1,
    correlation_with_final,
    correlations,
    final_losses,
    loss_at,
    phase_transition_step,
    read_run,
    recall_at_k,
    recorded_step,
    regret,
    relative_regret,
    settled_from,
    smoothed,
    spearman_heatmap,
    stacking_table,
    strategy_table,
    window_losses,
)
from linearlens.claims.karp_thesis.ch5 import GrowingThresholds, growing_claims, lag_regret_check, stack_last_check
from linearlens.figures.karp_thesis import ch5 as figures
from linearlens.manifests.jobs import ClaimsJob, FigureJob

LAYERS, GROWN = 6, 2  # L, k: a 6 → 8 space: starts 0..4, blocks 1 and 2, two inits: 20 operators
OPERATORS = [(start, block, init) for start in range(LAYERS - GROWN + 1) for block in (1, 2)
             for init in ("random", "duplicate")]


def growth_settings(name: str = "bert", **changes) -> dict:
    document_setting, objective = {"bert": ("BERT-BASE 12 → 16", "masked"), "ul2": ("UL2 12 → 16", "causal")}[name]
    settings = {"name": name, "document_setting": document_setting, "objective": objective, "layers": LAYERS,
                "grown_layers": GROWN, "train_steps": 300, "window_end": 60, "window_every": 1, "lag": 100,
                "lag_k": 20, "smoothing": 5, "data": "synthetic losses", "seed": 0, "proxy": True,
                "model": {"width": 8, "heads": 2, "hidden": 16, "context": 8}}
    return {**settings, **changes}


def window_steps(settings: dict) -> np.ndarray:
    window = np.arange(0, settings["window_end"] + 1, settings["window_every"])
    return np.concatenate([window, [settings["lag"], settings["train_steps"]]])


def write_growth_run(path, settings: dict, loss: np.ndarray, steps: np.ndarray | None = None) -> str:
    steps = window_steps(settings) if steps is None else steps
    np.savez(path, operator=np.array([f"start{s}-b{b}-{init}" for s, b, init in OPERATORS]),
             start=np.array([s for s, _, _ in OPERATORS]), block_size=np.array([b for _, b, _ in OPERATORS]),
             init=np.array([init for _, _, init in OPERATORS]), steps=steps, loss=loss,
             pre_growth_loss=np.array(1.9), settings=np.array(json.dumps(settings)))
    return str(path)


def final_values(seed: int = 0) -> np.ndarray:
    """Distinct final losses, the lowest not at either stack-on-top operator (starts 4, block 2)."""
    final = 2.0 + 0.005 * np.random.default_rng(seed).permutation(len(OPERATORS))
    stack_last = OPERATORS.index((4, 2, "duplicate"))
    if np.argmin(final) == stack_last or np.argmax(final) == stack_last:
        final[[stack_last, 0]] = final[[0, stack_last]]
    return final


def patterned_loss(settings: dict, holds: bool, seed: int = 0, transition: float = 20.0) -> np.ndarray:
    """The thesis's pattern (holds): early ranking the reverse of the final one, turning into the
    final ranking over ``transition`` steps; otherwise the reversed ranking lasts until the end."""
    steps = window_steps(settings).astype(float)
    final = final_values(seed)
    centred = final - final.mean()
    weight = np.clip(steps / transition, 0, 1) if holds else np.zeros_like(steps)
    noise = 1e-4 * np.random.default_rng(seed + 100).normal(size=(len(final), len(steps)))
    loss = (final.mean() + centred[:, None] * (weight - 1.5 * (1 - weight)) + 0.5 * np.exp(-steps / 10)
            + noise * (1 - weight))
    loss[:, -1] = final
    return loss


def patterned_run(tmp_path, holds: bool = True, seed: int = 0, name: str = "bert", **changes) -> str:
    settings = growth_settings(name, seed=seed, **changes)
    return write_growth_run(tmp_path / f"{name}_{holds}_seed{seed}.npz", settings, patterned_loss(settings, holds, seed))


def write_stacking_run(path, adaptive_final: float, last_final: float, seed: int = 0) -> str:
    settings = {"stage_layers": [2, 4, 6, 8], "stage_steps": 200, "probe_steps": 10, "data": "synthetic losses",
                "seed": seed, "proxy": True, "document_setting": "BERT-LARGE stacked",
                "model": {"width": 8, "heads": 2, "hidden": 16, "context": 8}}
    chosen = np.array([["", "start0-b1-duplicate", "start2-b2-duplicate", "start0-b2-duplicate"],
                       ["", "start0-b2-duplicate", "start2-b2-duplicate", "start4-b2-duplicate"]])
    np.savez(path, strategy=np.array(["adaptive", "last"]), stage_layers=np.array([2, 4, 6, 8]), chosen=chosen,
             candidates=np.array([1, 3, 9, 15]),
             stage_end_loss=np.array([[3.0, 2.6, 2.3, adaptive_final], [3.0, 2.7, 2.4, last_final]]),
             settings=np.array(json.dumps(settings)))
    return str(path)


# --- smoothing, correlations, Recall@k, regret ---------------------------------------------------

def test_smoothing_window_11_is_centred_with_truncated_edges():
    loss = np.arange(15.0)
    found = smoothed(loss, 11)
    assert found[0] == pytest.approx(np.mean(np.arange(0, 6)))  # steps 0..5 exist of -5..5
    assert found[3] == pytest.approx(np.mean(np.arange(0, 9)))  # 0..8
    assert found[5:10] == pytest.approx(loss[5:10])  # interior: a line stays a line
    assert found[14] == pytest.approx(np.mean(np.arange(9, 15)))  # 9..14
    spiky = np.zeros(15)
    spiky[7] = 11.0
    # step 2 averages steps 0..7 (8 points), step 7 steps 2..12 (11), step 12 steps 7..14 (8)
    assert smoothed(spiky, 11)[[1, 2, 7, 12, 13]] == pytest.approx([0.0, 11 / 8, 1.0, 11 / 8, 0.0])
    assert smoothed(np.vstack([loss, 2 * loss]), 11)[1] == pytest.approx(2 * found)  # along the last axis
    assert smoothed(loss, 1) == pytest.approx(loss)
    with pytest.raises(ValueError):
        smoothed(loss, 4)


def test_spearman_heatmap_is_symmetric_with_unit_diagonal_and_matches_scipy():
    window = np.random.default_rng(0).normal(size=(20, 7))
    window[:, 3] = np.round(window[:, 3])  # ties
    heatmap = spearman_heatmap(window)
    assert heatmap.shape == (7, 7)
    assert np.diag(heatmap) == pytest.approx(np.ones(7))
    assert heatmap == pytest.approx(heatmap.T)
    assert heatmap == pytest.approx(stats.spearmanr(window).statistic)
    final = window[:, 2] + 0.1 * np.random.default_rng(1).normal(size=20)
    expected = [stats.spearmanr(window[:, i], final).statistic for i in range(7)]
    assert correlation_with_final(window, final) == pytest.approx(expected)


def test_correlations_pearson_and_spearman():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    found = correlations(x, x ** 3)
    assert found["spearman"] == pytest.approx(1.0) and 0.9 < found["pearson"] < 1.0
    assert correlations(x, -x)["spearman"] == pytest.approx(-1.0)


def test_regret_and_relative_regret_by_eqs_5_1_and_5_2():
    final = np.array([1.0, 1.2, 1.5])
    window = np.array([[3.0, 2.0, 0.5],  # step 0 picks operator 2 (the worst), step 1 operator 1, step 2 operator 0
                       [2.5, 1.0, 0.9],
                       [2.0, 1.5, 0.8]])
    assert regret(window, final) == pytest.approx([0.5, 0.2, 0.0])
    assert relative_regret(window, final) == pytest.approx([1.0, 0.4, 0.0])
    assert relative_regret(window, np.ones(3)) == pytest.approx(np.zeros(3))


def test_relative_regret_zero_exactly_where_the_step_argmin_is_the_final_argmin():
    rng = np.random.default_rng(3)
    window, final = rng.normal(size=(12, 40)), rng.normal(size=12)
    found = relative_regret(window, final)
    picks_best = np.argmin(window, axis=0) == np.argmin(final)
    assert picks_best.any() and (~picks_best).any()
    assert np.all((found == 0) == picks_best)
    assert found[np.argmin(window, axis=0) == np.argmax(final)] == pytest.approx(1.0)


def test_recall_at_k_is_monotone_in_k_and_recall_1_is_the_argmin():
    rng = np.random.default_rng(4)
    window, final = rng.normal(size=(10, 200)), rng.normal(size=10)
    recall = recall_at_k(window, final, ks=(1, 2, 3))
    assert recall.shape == (3, 200)
    assert np.all(recall[0] <= recall[1]) and np.all(recall[1] <= recall[2])
    assert np.any(recall[0] < recall[2])  # not trivially equal
    assert np.all(recall[0] == (np.argmin(window, axis=0) == np.argmin(final)))


def test_recall_breaks_ties_by_operator_order():
    final = np.array([1.0, 0.5, 2.0])  # G* = operator 1
    window = np.array([[1.0], [1.0], [0.0]])  # operators 0 and 1 tie behind 2
    assert recall_at_k(window, final, ks=(1, 2, 3))[:, 0].tolist() == [0, 0, 1]


def test_settled_from_and_phase_transition():
    steps = np.arange(0, 35, 5)
    assert settled_from(steps, [True, False, True, True, False, True, True]) == 25
    assert settled_from(steps, [True] * 7) == 0
    assert settled_from(steps, [True] * 6 + [False]) is None
    correlation = np.array([-0.5, 0.2, 0.9, np.nan, 0.8, 0.75, 0.9])
    assert phase_transition_step(steps, correlation, 0.7) == 20


# --- reading runs, the LAG tables -----------------------------------------------------------------

def test_window_losses_and_the_final_and_lag_steps(tmp_path):
    path = patterned_run(tmp_path)
    run = read_run(path)
    steps, window = window_losses(run)
    assert steps.tolist() == list(range(61)) and window.shape == (20, 61)
    assert window[:, 0] == pytest.approx(run["loss"][:, :3].mean(axis=1))  # smoothing 5, truncated at step 0
    assert window_losses(run, smooth=False)[1] == pytest.approx(run["loss"][:, :61])
    assert final_losses(run) == pytest.approx(final_values(0))
    assert recorded_step(run, 61) == 100 and loss_at(run, 61) == pytest.approx(run["loss"][:, 61])
    with pytest.raises(ValueError):
        recorded_step(run, 301)


def test_window_smoothing_is_full_at_the_window_end_and_stays_on_the_grid(tmp_path):
    """The run records the grid past window_end (as experiments.recorded_steps does): the last window
    point averages a full centred window; a lag step off the every-3 grid is not a window point."""
    settings = growth_settings("ul2", window_end=9, window_every=3, smoothing=3, lag=4, train_steps=20)
    steps = np.array([0, 3, 4, 6, 9, 12, 20])
    loss = np.arange(20 * len(steps), dtype=float).reshape(20, len(steps)) ** 1.5
    run = read_run(write_growth_run(tmp_path / "run.npz", settings, loss, steps))
    window_steps_, window = window_losses(run)
    assert window_steps_.tolist() == [0, 3, 6, 9]
    on_grid = loss[:, [0, 1, 3, 4, 5]]  # steps 0, 3, 6, 9, 12
    assert window[:, -1] == pytest.approx(on_grid[:, 2:5].mean(axis=1))  # steps 6, 9, 12
    assert window[:, 0] == pytest.approx(on_grid[:, :2].mean(axis=1))  # no step before 0
    assert window_losses(run, smooth=False)[1] == pytest.approx(on_grid[:, :4])


def test_strategy_table_picks_lag_k_by_raw_loss_and_stacks_the_last_block(tmp_path):
    settings = growth_settings("ul2", window_end=40, window_every=5, lag=50, lag_k=22, smoothing=3)
    steps = window_steps(settings)
    loss = np.full((len(OPERATORS), len(steps)), 3.0)
    column = {int(step): i for i, step in enumerate(steps)}
    final = final_values(1)
    loss[:, -1] = final
    lag_0, lag_k, neighbour = OPERATORS.index((1, 1, "random")), OPERATORS.index((2, 2, "duplicate")), 0
    loss[lag_0, column[0]] = 2.5
    loss[lag_k, column[25]] = 2.0  # recorded step 25 is the first ≥ 22
    loss[neighbour, [column[20], column[25], column[30]]] = [1.0, 2.1, 1.0]  # lowest once smoothed, not raw
    run = read_run(write_growth_run(tmp_path / "run.npz", settings, loss, steps))
    table = strategy_table(run)
    assert table["strategy"].tolist() == ["Oracle", "LAG@22", "Best at initialization (LAG@0)",
                                          "Stack last block on top", "Stack random block on top"]
    operators = dict(zip(table.index, table["operator"]))
    assert operators == {"oracle": run["operator"][np.argmin(final)], "lag_k": "start2-b2-duplicate", "lag_0": "start1-b1-random",
                         "stack_last": "start4-b2-duplicate", "stack_random": "start4-b2-random"}
    spread = final.max() - final.min()
    row = table.loc["lag_k"]
    assert row["final validation loss"] == pytest.approx(final[lag_k])
    assert row["regret"] == pytest.approx(final[lag_k] - final.min())
    assert row["relative regret"] == pytest.approx((final[lag_k] - final.min()) / spread)
    assert table.loc["oracle", ["regret", "relative regret"]].tolist() == [0.0, 0.0]


def test_stacking_table(tmp_path):
    table = stacking_table(read_run(write_stacking_run(tmp_path / "stack.npz", 1.9, 2.0)))
    assert table["strategy"].tolist() == ["Adaptive stacking", "Last stacking"]
    assert table["final validation loss"].tolist() == [1.9, 2.0]
    assert table.loc["last", "operators per stage"].startswith("fresh → start0-b2-duplicate")


# --- claims -----------------------------------------------------------------------------------

def _verdicts(checks) -> dict:
    return {check.claim_id: check.passed for check in checks}


def test_claims_pass_where_the_pattern_holds(tmp_path):
    inputs = {"bert": [patterned_run(tmp_path, True, seed) for seed in (0, 1)],
              "ul2": [patterned_run(tmp_path, True, 0, "ul2", window_every=5, smoothing=1, lag_k=22)],
              "stacking": [write_stacking_run(tmp_path / "stack.npz", 1.9, 2.0),
                           write_stacking_run(tmp_path / "stack1.npz", 1.91, 2.0, seed=1)]}
    checks = growing_claims(ClaimsJob(inputs, {"thresholds": claim_thresholds("karp_thesis", "quick", "growing")}))
    assert _verdicts(checks) == {"G1": True, "G2": True, "G3": True, "G4": True, "G5": True, "R1": None,
                                 "U1": True, "U2": True, "S1": True}
    g2 = next(check for check in checks if check.claim_id == "G2")
    assert "0.986" in g2.statement and "seed 0" in g2.measured and "seed 1" in g2.measured
    r1 = next(check for check in checks if check.claim_id == "R1")
    assert "seed 0: step" in r1.measured


def test_claims_fail_where_the_pattern_does_not_hold(tmp_path):
    inputs = {"bert": [patterned_run(tmp_path, False)],
              "ul2": [patterned_run(tmp_path, False, 0, "ul2", window_every=5, smoothing=1)],
              "stacking": [write_stacking_run(tmp_path / "stack.npz", 2.1, 2.0),
                           write_stacking_run(tmp_path / "stack1.npz", 2.0, 2.0, seed=1)]}
    verdicts = _verdicts(growing_claims(ClaimsJob(inputs, {"thresholds": claim_thresholds("karp_thesis", "paper", "growing")})))
    assert verdicts == {"G1": True, "G2": False, "G3": False, "G4": False, "G5": False, "R1": None,
                        "U1": False, "U2": False, "S1": False}


def test_claims_rest_on_the_mean_over_seeds(tmp_path):
    inputs = {"bert": [patterned_run(tmp_path, True, 0), patterned_run(tmp_path, False, 1)]}
    checks = {check.claim_id: check for check in growing_claims(ClaimsJob(inputs, {"thresholds": claim_thresholds("karp_thesis", "quick", "growing")}))}
    assert checks["G2"].passed is False  # Spearman +1 and −1 at the lag: mean 0
    assert "seed 0 1.000" in checks["G2"].measured and "seed 1 −1.000" in checks["G2"].measured


def _bert_checks(tmp_path, loss: np.ndarray, settings: dict | None = None, steps=None) -> dict:
    path = write_growth_run(tmp_path / "run.npz", settings or growth_settings("bert"), loss, steps)
    return {check.claim_id: check for check in growing_claims(ClaimsJob({"bert": [path]}, {"thresholds": claim_thresholds("karp_thesis", "quick", "growing")}))}


def test_growth_correlation_is_the_figures_pearson(tmp_path):
    """Fig 5.2's title shows Pearson: ranks reversed at growth (Spearman < 0) but the two worst final
    operators far above the rest (Pearson > 0.3) is a correlated loss at growth, and fails G1."""
    loss = patterned_loss(growth_settings("bert"), True)
    final = loss[:, -1]
    loss[:, 0] = 3.0 - 0.01 * final
    loss[np.argsort(final)[-2:], 0] += 1.0
    check = _bert_checks(tmp_path, loss)["G1"]
    assert check.passed is False and "Spearman −" in check.measured


def test_lag_correlation_must_last_after_the_lag(tmp_path):
    """Correlated at the lag but reversed at a later step: no lasting correlation, G2 fails."""
    steps = np.append(np.arange(61), 300)  # the window's steps and the final one; the lag (30) among them
    loss = np.delete(patterned_loss(growth_settings("bert"), True), 61, axis=1)  # without step 100
    loss[:, 50] = 2 * loss[:, -1].mean() - loss[:, -1]
    check = _bert_checks(tmp_path, loss, growth_settings("bert", lag=30), steps)["G2"]
    assert check.passed is False and "−1.000 at step 50" in check.measured


def test_ranking_claims_within_the_noise_are_not_evaluated(tmp_path):
    """Final losses 1e-5 apart while the operators wander 1e-2 about each other: the ranking is noise."""
    loss = patterned_loss(growth_settings("bert"), True)
    loss[:, :-1] += 0.01 * np.random.default_rng(3).normal(size=loss[:, :-1].shape)
    loss[:, -1] = loss[:, -1].mean() + 1e-5 * np.arange(len(OPERATORS))
    checks = _bert_checks(tmp_path, loss)
    for claim_id in ("G1", "G2", "G3", "G4", "G5"):
        assert checks[claim_id].passed is None and "not evaluated at this scale" in checks[claim_id].note


def test_stacking_gap_needs_seeds_to_beat_noise(tmp_path):
    one = growing_claims(ClaimsJob({"stacking": [write_stacking_run(tmp_path / "s.npz", 1.99, 2.0)]}, {"thresholds": claim_thresholds("karp_thesis", "quick", "growing")}))[0]
    assert one.passed is None and "one seed" in one.note
    runs = [write_stacking_run(tmp_path / "a.npz", 1.9, 2.0), write_stacking_run(tmp_path / "b.npz", 2.05, 2.0, seed=1)]
    assert growing_claims(ClaimsJob({"stacking": runs}, {"thresholds": claim_thresholds("karp_thesis", "quick", "growing")}))[0].passed is False


def _regret_summaries(lag_k: float, lag_0: float, stack_last: float) -> list[dict]:
    return [{"seed": 0, "lag_k": 20, "lag_k_step": 20,
             "relative_regret": {"lag_k": lag_k, "lag_0": lag_0, "stack_last": stack_last}}]


@pytest.mark.parametrize("lag_k, lag_0, passed", [(0.0, 0.0, True), (0.1, 0.0, False), (0.5, 1.0, True),
                                                  (0.51, 1.0, False)])
def test_lag_regret_check_bound_includes_lag_0_at_zero(lag_k, lag_0, passed):
    check = lag_regret_check("G4", "table_5_1", _regret_summaries(lag_k, lag_0, 1.0), "setting",
                             GrowingThresholds(**claim_thresholds("karp_thesis", "quick", "growing")), THESIS_TABLE_5_1)
    assert check.passed is passed
    assert ("LAG@0 already picks the oracle" in check.measured) == (lag_0 == 0)


@pytest.mark.parametrize("lag_k, stack_last, passed", [(0.0, 0.0, True), (0.2, 0.2, False), (0.1, 0.2, True)])
def test_stack_last_check_is_strict_except_both_at_zero(lag_k, stack_last, passed):
    assert stack_last_check(_regret_summaries(lag_k, 1.0, stack_last), "setting").passed is passed


def test_claims_leave_out_absent_runs(tmp_path):
    job = ClaimsJob({"stacking": [write_stacking_run(tmp_path / "stack.npz", 1.9, 2.0)]}, {"thresholds": claim_thresholds("karp_thesis", "quick", "growing")})
    assert [check.claim_id for check in growing_claims(job)] == ["S1"]
    assert growing_claims(ClaimsJob({}, {"thresholds": claim_thresholds("karp_thesis", "quick", "growing")})) == []


# --- figures and tables -------------------------------------------------------------------------

def _job(tmp_path, target: str, runs: list[str]) -> FigureJob:
    return FigureJob(target, {"runs": runs}, {}, str(tmp_path / f"{target}.png"), "Lead.", "synthetic — stand-in")


@pytest.mark.parametrize("plot", ["plot_fig_5_2", "plot_fig_5_3", "plot_fig_5_4"])
def test_figures_write_png_and_caption(tmp_path, plot):
    runs = [patterned_run(tmp_path, True, seed) for seed in (0, 1)]
    getattr(figures, plot)(_job(tmp_path, plot, runs))
    assert (tmp_path / f"{plot}.png").stat().st_size > 0
    sidecar = json.loads((tmp_path / f"{plot}.json").read_text())
    assert sidecar["caption"].startswith("Lead.") and "Other seeds: seed 1" in sidecar["caption"]
    assert "proxy" in sidecar["caption"] and sidecar["data_source"].startswith("synthetic — stand-in, seed 0; network: pre-LN transformer of width 8")


def test_fig_5_2_titles_carry_the_measured_correlations(tmp_path, monkeypatch):
    titles = []
    monkeypatch.setattr(figures, "save_figure",
                        lambda fig, *args: titles.extend(ax.get_title() for ax in fig.axes))
    figures.plot_fig_5_2(_job(tmp_path, "fig_5_2", [patterned_run(tmp_path)]))
    assert "Spearman −1.000" in titles[0].replace("-", "−") and "Spearman 1.000" in titles[1]


def test_lag_tables_put_the_thesis_beside_every_seed(tmp_path):
    runs = [patterned_run(tmp_path, True, seed) for seed in (0, 1)]
    figures.table_5_1(_job(tmp_path, "table_5_1", runs))
    table = pd.read_csv(tmp_path / "table_5_1.csv")
    assert table["seed"].tolist() == [0] * 5 + [1] * 5
    lag = table[table["strategy"] == "LAG@20"]
    assert lag["relative regret"].tolist() == [0.0, 0.0] and lag["thesis strategy"].tolist() == ["LAG@200"] * 2
    assert table.loc[table["strategy"] == "Stack last block on top", "operator"].unique().tolist() == \
        ["start4-b2-duplicate"]
    assert table.loc[2, "thesis relative regret"] == 0.7986
    figures.table_5_2(_job(tmp_path, "table_5_2", runs[:1]))
    assert pd.read_csv(tmp_path / "table_5_2.csv").loc[1, "thesis relative regret"] == 0.0895
    assert "proxy" in json.loads((tmp_path / "table_5_2.json").read_text())["caption"]


def test_table_c_2(tmp_path):
    runs = [write_stacking_run(tmp_path / f"stack{seed}.npz", 1.9, 2.0, seed) for seed in (0, 1)]
    figures.table_C_2(_job(tmp_path, "table_C_2", runs))
    table = pd.read_csv(tmp_path / "table_C_2.csv")
    assert table["thesis final validation loss"].tolist() == [1.5301, 1.5432] * 2
    assert table["final validation loss"].tolist() == [1.9, 2.0] * 2
    assert "280 probe steps" in json.loads((tmp_path / "table_C_2.json").read_text())["caption"]
