"""George thesis ch. 2, Fig 2.1 (Example 4): four normal distributions equally far apart in (μ, σ²) but not
as distributions; the closed forms against numerical integration, the run, its figure and its claims."""

import json
import math
from statistics import NormalDist

import numpy as np
import pytest

from configured import claim_thresholds
from linearlens.analysis.george_thesis.ch2 import pair_table
from linearlens.claims.george_thesis.ch2 import gaussians_claims
from linearlens.experiments.george_thesis.ch2 import (
    GAUSSIANS,
    central_interval,
    density,
    gaussians_run,
    interval_overlap,
    kl_divergence,
    normal,
)
from linearlens.figures.george_thesis.ch2 import plot_fig_2_1
from linearlens.manifests.jobs import ClaimsJob, FigureJob

SPEC = {"x_range": [-4.0, 4.0], "points": 1000, "interval_mass": 0.95}
GRID = np.linspace(-30, 30, 600_001)


def integrate(values: np.ndarray) -> float:
    return float(np.sum((values[1:] + values[:-1]) / 2) * (GRID[1] - GRID[0]))


def test_the_four_distributions_are_the_theses_with_f_d_reconstructed():
    """Eq. 2.4.2: AB and CD both of length 1 in (μ, σ²); D has C's variance and the opposite mean."""
    assert GAUSSIANS["A"] == (0.0, 1.0) and GAUSSIANS["B"] == (0.0, 2.0)
    assert GAUSSIANS["C"] == pytest.approx((-0.5, 1 - math.sqrt(0.75)), abs=1e-15)
    assert GAUSSIANS["D"] == (-GAUSSIANS["C"][0], GAUSSIANS["C"][1])
    for first, second in ("AB", "CD"):
        assert math.dist(GAUSSIANS[first], GAUSSIANS[second]) == pytest.approx(1, abs=1e-15)


@pytest.mark.parametrize("first, second", [("A", "B"), ("B", "A"), ("C", "D"), ("A", "C")])
def test_kl_divergence_equals_numerical_integration(first, second):
    def log_density(mean, variance):  # in logs: the narrow pdfs underflow far out
        return -(GRID - mean) ** 2 / (2 * variance) - 0.5 * np.log(2 * np.pi * variance)
    log_p, log_q = log_density(*GAUSSIANS[first]), log_density(*GAUSSIANS[second])
    numerical = integrate(np.exp(log_p) * (log_p - log_q))
    assert kl_divergence(normal(first), normal(second)) == pytest.approx(numerical, rel=1e-7)


def test_density_is_eq_2_4_1_and_the_interval_holds_its_mass():
    for name, (mean, variance) in GAUSSIANS.items():
        assert density(np.array([0.3]), mean, variance)[0] == pytest.approx(normal(name).pdf(0.3), rel=1e-14)
        assert integrate(density(GRID, mean, variance)) == pytest.approx(1, abs=1e-10)
        low, high = central_interval(normal(name), 0.95)
        assert (low + high) / 2 == pytest.approx(mean, abs=1e-12)
        assert (high - low) / 2 == pytest.approx(1.959963984540054 * math.sqrt(variance), rel=1e-9)
        assert NormalDist(mean, math.sqrt(variance)).cdf(high) - NormalDist(mean, math.sqrt(variance)).cdf(low) \
            == pytest.approx(0.95, abs=1e-12)


def test_interval_overlap_is_intersection_over_union():
    assert interval_overlap((0, 1), (2, 3)) == 0
    assert interval_overlap((0, 2), (0, 2)) == 1
    assert interval_overlap((0, 2), (1, 3)) == pytest.approx(1 / 3)
    assert interval_overlap((-1, 1), (-2, 2)) == pytest.approx(0.5)


def test_run_records_the_pairs_measures():
    record = gaussians_run(SPEC)
    assert record["pdfs"].shape == (4, 1000) and record["intervals"].shape == (4, 2)
    table = pair_table(record)
    assert table["parameter_distance"].tolist() == pytest.approx([1, 1], abs=1e-15)
    assert table.loc["AB", "kl_forward"] == pytest.approx(0.5 * (0.5 - 1 + math.log(2)), rel=1e-12)
    assert table.loc["CD", "kl_forward"] == pytest.approx(1 / (2 * (1 - math.sqrt(0.75))), rel=1e-12)
    assert table.loc["CD", "kl_forward"] == pytest.approx(table.loc["CD", "kl_backward"], rel=1e-12)
    # one sample from C or D (equal priors) is classified by its sign: accuracy Φ(½/σ)
    assert table.loc["CD", "bayes_accuracy"] == pytest.approx(NormalDist().cdf(0.5 / math.sqrt(GAUSSIANS["C"][1])),
                                                              rel=1e-9)


def save_run(tmp_path, record):
    path = tmp_path / "gaussians.npz"
    np.savez(path, **record)
    return str(path)


def test_claims_pass_on_the_closed_forms_and_fail_when_the_pairs_look_alike(tmp_path):
    params = {"thresholds": claim_thresholds("george_thesis", "quick", "gaussian"), "spec": SPEC}
    checks = gaussians_claims(ClaimsJob({"run": [save_run(tmp_path, gaussians_run(SPEC))]}, params))
    assert [check.passed for check in checks] == [True] * 4
    record = gaussians_run(SPEC)
    record["CD/interval_overlap"] = np.float64(0.6)  # as much overlap as A and B
    record["CD/kl_forward"] = record["CD/kl_backward"] = np.float64(0.2)
    checks = gaussians_claims(ClaimsJob({"run": [save_run(tmp_path, record)]}, params))
    assert [check.passed for check in checks] == [True, False, True, False]


def test_figure_writes_its_files_with_caption_and_data_source(tmp_path):
    png = tmp_path / "fig_2_1.png"
    job = FigureJob("fig_2_1", {"run": [save_run(tmp_path, gaussians_run(SPEC))]}, SPEC, str(png),
                    "Fig 2.1: four normal distributions.", "closed form")
    plot_fig_2_1(job)
    sidecar = json.loads(png.with_suffix(".json").read_text())
    assert png.stat().st_size > 0 and png.with_suffix(".pdf").stat().st_size > 0
    assert sidecar["caption"].startswith("Fig 2.1:") and "KL(C‖D)" in sidecar["caption"]
    assert sidecar["data_source"] == "closed form"
