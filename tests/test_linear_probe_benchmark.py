"""The Fig 6 probe cost benchmark on the quick config's experiment: its table, not its speed."""


import numpy as np
import pytest

from linearlens.benchmarks.linear_probe import METHODS, figure_cost, fit_seconds
from linearlens.config import load_scale

CONFIG = load_scale("quick")[
    "iterative_linearisation"]


@pytest.mark.parametrize("method", METHODS)
def test_a_timed_fit_runs_its_iterations(method):
    timed = fit_seconds(method, 200, 30, 4, 10, "cpu")
    assert 10 < timed["iterations"] <= 20 and timed["fixed_seconds"] >= 0
    assert np.isfinite(timed["seconds_per_iteration"])  # its sign is timing noise on a problem this small


def test_figure_cost_counts_the_configs_fits_and_sizes_its_layers():
    experiment, probes = CONFIG["experiments"]["augmented"], CONFIG["probes"]
    cost = figure_cost(experiment, probes, (1, 40), 10, 4000, "torch", "cpu", fraction=0.1, timed_iterations=5)
    # 8,000 steps, a checkpoint every 800 from step 0: 11 per run, 2 runs, 1 seed
    assert cost["fits"].tolist() == [22, 22] and cost["layer"].tolist() == [1, 2]
    assert cost["features"].tolist() == [320, 160]  # pooled conv1 16 × 20, conv2 16 × 10 (the quick probes)
    assert cost["timed_examples"].tolist() == [200, 200]  # a tenth of the probes' 2,000
    per_fit = cost["fixed_seconds"] + 300 * cost["seconds_per_iteration"]  # max_iter 300
    assert (cost["hours"] == cost["fits"] * per_fit / 3600).all()
    uneven = figure_cost({**experiment, "steps": 8100}, probes, (1, 40), 10, 4000, "torch", "cpu", fraction=0.1,
                         timed_iterations=5)
    assert uneven["fits"].tolist() == [24, 24]  # the last step is a checkpoint too
