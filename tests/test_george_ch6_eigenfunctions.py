"""George thesis ch. 6, groups disk (Figs 6.1, B.4) and spectral_bias (Fig B.2): the tangent kernel's
eigenfunctions, their Fourier content, the Disk data, and the run -> figure -> claims path."""

import json

import numpy as np
import pytest
import torch

from configured import claim_thresholds
from linearlens.analysis.george_thesis.ch6 import disk_summary, frequency_trend, label_correlations
from linearlens.claims.george_thesis.ch6 import disk_claims, spectral_bias_claims
from linearlens.data.synthetic import DISK_RADIUS, GENERATORS, disk
from linearlens.experiments.george_thesis.ch6 import disk_mlp, disk_run
from linearlens.figures.george_thesis.ch6 import plot_fig_6_1, plot_fig_B_2, plot_fig_B_4
from linearlens.kernels.eigenfunctions import (
    dominant_frequencies,
    eigenpairs,
    fourier_magnitudes,
    oriented,
    random_mlp_spectrum,
    tangent_eigenfunctions,
)
from linearlens.kernels.ntk import per_example_jacobian
from linearlens.manifests.jobs import ClaimsJob, FigureJob
from linearlens.models.mlp import mlp
from linearlens.train.runtime import seed_everything


def random_orthogonal(n: int, seed: int) -> torch.Tensor:
    q, _ = torch.linalg.qr(torch.randn(n, n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64))
    return q


def test_eigenpairs_recover_a_known_spectrum_and_orient_each_vector():
    basis = random_orthogonal(12, 0)
    spectrum = torch.tensor([9.0, 5.0, 4.0, 2.5, 1.0, 0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01], dtype=torch.float64)
    shuffled = torch.randperm(12, generator=torch.Generator().manual_seed(1))
    gram = basis[:, shuffled] @ torch.diag(spectrum[shuffled]) @ basis[:, shuffled].T
    values, vectors = eigenpairs(gram, k=5)
    torch.testing.assert_close(values, spectrum, rtol=0, atol=1e-12)
    assert vectors.shape == (12, 5)
    for j in range(5):  # the j-th eigenvector is ±basis column of the j-th largest eigenvalue
        assert torch.allclose(vectors[:, j].abs(), basis[:, j].abs(), atol=1e-10)
        assert float(vectors[:, j].sum()) > 0
    torch.testing.assert_close(gram @ vectors, vectors * values[:5], rtol=0, atol=1e-10)


def test_orientation_falls_back_to_the_peak_when_the_sum_is_zero():
    zero_sum = torch.tensor([[0.1], [-0.7], [0.6]], dtype=torch.float64)  # sums to 0: the peak decides
    assert float(oriented(zero_sum)[1, 0]) == pytest.approx(0.7)
    assert float(oriented(-zero_sum)[1, 0]) == pytest.approx(0.7)
    negative_sum = torch.tensor([[0.9], [-0.2], [-0.1]], dtype=torch.float64)
    torch.testing.assert_close(oriented(-negative_sum), negative_sum)


def test_dominant_frequency_of_pure_cosines():
    n = 50
    grid = torch.arange(n, dtype=torch.float64)
    frequencies = [0, 1, 3, 7, 12, 24]
    signals = torch.stack([torch.cos(2 * torch.pi * f * grid / n + 0.3 * (f > 0)) for f in frequencies], dim=1)
    assert dominant_frequencies(signals).tolist() == frequencies
    magnitudes = fourier_magnitudes(signals)
    assert magnitudes.shape == (n // 2 + 1, len(frequencies))
    assert float(magnitudes[7, 3]) == pytest.approx(n / 2)  # a unit cosine's two mirrored halves
    assert float(magnitudes[0, 0]) == pytest.approx(n)


def test_disk_generator_labels_balance_and_grid_layout():
    data = disk(n_train=20_000, grid=9, seed=3)
    inside = np.linalg.norm(data["x_train"], axis=1) <= np.sqrt(2 / np.pi)
    np.testing.assert_array_equal(data["y_train"], inside.astype(np.int64))
    assert abs(data["y_train"].mean() - 0.5) < 0.015  # the disk holds half of the square's area
    assert data["x_train"].min() >= -1 and data["x_train"].max() <= 1
    image = data["x_test"].reshape(9, 9, 2)  # row-major: row r has y = side[r], column c has x = side[c]
    side = np.linspace(-1, 1, 9)
    np.testing.assert_allclose(image[2, 5], [side[5], side[2]])
    labels = data["y_test"].reshape(9, 9)
    assert labels[4, 4] == 1 and labels[0, 0] == 0 and labels[4, 0] == 0
    np.testing.assert_array_equal(labels, labels.T)  # the disk is symmetric under x <-> y
    np.testing.assert_array_equal(disk(50, 4, seed=3)["x_train"], disk(50, 4, seed=3)["x_train"])
    assert GENERATORS["disk"].make is disk and DISK_RADIUS == pytest.approx(0.7978845608)


def jacobian_gram(model, x, centred: bool) -> torch.Tensor:
    """The reference route: the materialised Jacobian of the scalar output, centred over the points."""
    jacobian = per_example_jacobian(model, x)[:, 0, :]
    if centred:
        jacobian = jacobian - jacobian.mean(0)
    return jacobian @ jacobian.T


@pytest.mark.parametrize("centred", [True, False])
def test_random_mlp_spectrum_equals_the_jacobian_route(centred):
    run = random_mlp_spectrum(depth=3, width=24, n_points=20, seed=5, centred=centred)
    seed_everything(5)
    model = mlp(1, [24, 24], 1).to(torch.float64)
    x = torch.linspace(0, 1, 20, dtype=torch.float64)[:, None]
    reference = jacobian_gram(model, x, centred)
    values = torch.linalg.eigvalsh(reference).flip(0)
    np.testing.assert_allclose(run["eigenvalues"], values.numpy(), rtol=1e-9, atol=1e-10 * float(values[0]))
    top = torch.as_tensor(run["eigenvectors"][:, :5])  # well-separated leading eigenvectors
    torch.testing.assert_close(reference @ top, top * torch.as_tensor(run["eigenvalues"][:5]), rtol=1e-8,
                               atol=1e-9 * float(values[0]))
    np.testing.assert_allclose(run["ratios"], run["eigenvalues"] / run["eigenvalues"][0])
    assert run["fourier"].shape == (11, 20)
    if centred:  # centring removes the constant direction: one zero eigenvalue
        assert abs(run["eigenvalues"][-1]) < 1e-9 * run["eigenvalues"][0]


def test_tangent_eigenfunctions_of_a_float32_model_are_computed_in_float64():
    torch.manual_seed(0)
    model = mlp(2, [16, 16], 1)
    points = torch.rand(30, 2) * 2 - 1
    values, vectors = tangent_eigenfunctions(model, points, k=4)
    assert values.dtype == torch.float64 and vectors.shape == (30, 4)
    assert next(model.parameters()).dtype == torch.float32  # the model itself is untouched
    reference = jacobian_gram(model.to(torch.float64), points.to(torch.float64), centred=True)
    torch.testing.assert_close(values, torch.linalg.eigvalsh(reference).flip(0), rtol=1e-8,
                               atol=1e-10 * float(values[0]))


def test_label_correlation_and_frequency_trend_against_direct_formulas():
    rng = np.random.default_rng(0)
    vectors, labels = rng.standard_normal((40, 3)), (rng.random(40) > 0.5).astype(float)
    expected = [abs(np.corrcoef(vectors[:, j], labels)[0, 1]) for j in range(3)]
    np.testing.assert_allclose(label_correlations(vectors, labels), expected)
    trend = frequency_trend(np.array([0, 1, 1, 2, 4, 3, 5]), count=7)
    assert trend["monotone_share"] == pytest.approx(5 / 6) and 0.9 < trend["spearman"] < 1
    assert frequency_trend(np.arange(30))["spearman"] == pytest.approx(1.0)


SMOKE_DISK = {"dataset": "disk", "seeds": [0, 1], "depth": 3, "width": 16, "activation": "relu", "lr": 0.05,
              "iterations": 20, "rows": [0, 5, 20], "eigenfunctions": 4, "centred": True, "log_points": 8}
SMOKE_SPECTRAL = {"depth": 3, "width": 32, "activation": "relu", "n_points": 30, "low": 0.0, "high": 1.0, "seed": 0,
                  "centred": True}


def test_disk_run_starts_from_the_initial_kernel_and_trains(tmp_path):
    data = tmp_path / "disk.npz"
    np.savez(data, **disk(n_train=40, grid=8, seed=0))
    run = disk_run(data, SMOKE_DISK, seed=0, device="cpu")
    assert run["rows"].tolist() == [0, 5, 20] and run["eigenvectors"].shape == (3, 64, 4)
    seed_everything(0)
    initial = disk_mlp(SMOKE_DISK).to(torch.float64)
    grid = torch.as_tensor(disk(40, 8, 0)["x_test"])
    reference = torch.linalg.eigvalsh(jacobian_gram(initial, grid, centred=True)).flip(0)
    np.testing.assert_allclose(run["eigenvalues"][0], reference.numpy(), rtol=1e-5, atol=1e-8 * float(reference[0]))
    assert run["log_step"][0] == 0 and run["log_step"][-1] == 20
    assert run["log_train_loss"][-1] < run["log_train_loss"][0]
    with pytest.raises(ValueError, match="rows"):
        disk_run(data, {**SMOKE_DISK, "rows": [0, 30]}, seed=0, device="cpu")


def test_end_to_end_runs_figures_and_claims(tmp_path):
    data_path = tmp_path / "disk.npz"
    np.savez(data_path, **disk(n_train=40, grid=8, seed=0))
    runs = []
    for seed in SMOKE_DISK["seeds"]:
        runs.append(tmp_path / f"seed{seed}.npz")
        np.savez(runs[-1], **disk_run(data_path, SMOKE_DISK, seed, device="cpu"))
    spectrum = tmp_path / "spectrum.npz"
    np.savez(spectrum, seed=np.asarray(0), **random_mlp_spectrum(3, 32, 30, 0))

    jobs = [
        FigureJob("fig_6_1", {"runs": [str(p) for p in runs]}, SMOKE_DISK, str(tmp_path / "fig_6_1.png"),
                  "Eigenfunctions of the tangent kernel on the disk task.", "the disk task (test)"),
        FigureJob("fig_B_4", {"data": [str(data_path)]}, SMOKE_DISK, str(tmp_path / "fig_B_4.png"),
                  "The disk dataset.", "the disk task (test)"),
        FigureJob("fig_B_2", {"run": [str(spectrum)]}, SMOKE_SPECTRAL, str(tmp_path / "fig_B_2.png"),
                  "Spectral bias at initialisation.", "1-D grid on [0, 1]"),
    ]
    for job, plot in zip(jobs, (plot_fig_6_1, plot_fig_B_4, plot_fig_B_2)):
        plot(job)
        assert (tmp_path / f"{job.figure}.png").stat().st_size > 0
        assert "Departures" in json.loads((tmp_path / f"{job.figure}.json").read_text())["caption"] or \
            "departures" in json.loads((tmp_path / f"{job.figure}.json").read_text())["caption"]

    summary = disk_summary([str(p) for p in runs])
    assert sorted(summary["seed"].unique()) == [0, 1] and len(summary) == 6
    for scale in ("quick", "paper"):
        checks = disk_claims(ClaimsJob({"runs": [str(p) for p in runs]}, {"thresholds": claim_thresholds("george_thesis", scale, "disk"), "spec": SMOKE_DISK}))
        checks += spectral_bias_claims(ClaimsJob({"run": [str(spectrum)]},
                                                 {"thresholds": claim_thresholds("george_thesis", scale, "spectral_bias"), "spec": SMOKE_SPECTRAL}))
        assert [c.claim_id for c in checks] == ["H16", "H16", "H24", "H24", "H24"]
        for check in checks:
            assert check.passed in (True, False, None) and check.measured not in (None, "")
    ratio = summary.groupby("iteration")["ratio"].mean()
    first_check = disk_claims(ClaimsJob({"runs": [str(p) for p in runs]}, {"thresholds": claim_thresholds("george_thesis", "quick", "disk"), "spec": SMOKE_DISK}))[0]
    assert first_check.passed == bool(ratio.iloc[0] > ratio.iloc[-1])  # the verdict follows the measured numbers
