"""The optimiser step-cost benchmark on the smoke config's cases: its table, not its speed."""

import logging

import numpy as np
import pytest

from linearlens.benchmarks.optimisers import KINDS, run_optimiser_benchmark
from linearlens.config import load_scale

SETTINGS = load_scale("smoke")[
    "benchmarks"]["optimisers"]
LOG = logging.getLogger(__name__)


@pytest.fixture(scope="module")
def frame():
    return run_optimiser_benchmark(SETTINGS, "cpu", 1, LOG)


def test_one_row_per_case_method_and_kind(frame):
    assert {"case", "method", "kind", "steps", "seconds_per_step", "median_seconds_per_step", "peak_memory_mb",
            "final_loss", "parameters", "time_vs_sgd", "status", "freq", "batch_size"} <= set(frame.columns)
    expected = {(case, method, kind) for case in SETTINGS["cases"] for method in SETTINGS["methods"]
                for kind in (("amortised",) if method == "sgd" else KINDS)}
    assert list(frame["status"].unique()) == ["ok"]
    assert set(zip(frame["case"], frame["method"], frame["kind"])) == expected
    assert len(frame) == len(expected)


def test_seconds_are_positive_and_sgd_is_the_reference(frame):
    assert np.isfinite(frame["seconds_per_step"]).all() and (frame["seconds_per_step"] > 0).all()
    assert (frame["median_seconds_per_step"] >= frame["seconds_per_step"]).all()
    assert (frame.loc[frame["method"] == "sgd", "time_vs_sgd"] == 1.0).all()
    assert np.isfinite(frame["time_vs_sgd"]).all() and np.isfinite(frame["final_loss"]).all()


def test_window_steps_split_into_recomputes_and_plain_steps(frame):
    case = frame.set_index(["case", "method", "kind"])["steps"]
    periods, freq = SETTINGS["periods"], SETTINGS["cases"]["tiny_vgg"]["freq"]
    assert case["tiny_vgg", "kfac", "amortised"] == periods * freq
    assert case["tiny_vgg", "kfac", "recompute"] == periods
    assert case["tiny_vgg", "kfac", "plain"] == periods * (freq - 1)


@pytest.mark.parametrize("methods", [["sgd", "kfca"], ["kfac", "ekfac"], ["sgd", "sgd"]])
def test_bad_methods_are_refused(methods):
    with pytest.raises(ValueError, match="methods must be"):
        run_optimiser_benchmark({**SETTINGS, "methods": methods}, "cpu", 1, LOG)
