"""Fig B.1 (George thesis): the Jacobian's top right singular directions from the Gram, random directions,
the output change along each; the run, its figure and claim H26 end to end at a tiny size."""

import json

import numpy as np
import pytest
import torch

from configured import claim_thresholds
from linearlens.kernels.directions import (
    jacobian_transpose_products,
    output_changes,
    random_unit_directions,
    top_singular_directions,
)
from linearlens.kernels.ntk import per_example_jacobian
from linearlens.models.cnn import small_cnn
from linearlens.models.vgg import vgg
from linearlens.parameters import ParameterLayout


def tiny_cnn_and_inputs(seed: int = 0):
    torch.manual_seed(seed)
    model = small_cnn(in_channels=1, num_classes=3, width=3).double().eval()
    return model, torch.randn(6, 1, 6, 6, dtype=torch.float64)


def explicit_jacobian(model, x):
    jacobian = per_example_jacobian(model, x)  # (n, c, P)
    return jacobian.reshape(-1, jacobian.shape[2])  # rows in the Gram's (example, output) order


def test_directions_are_the_top_right_singular_vectors_of_the_jacobian(float64):
    model, x = tiny_cnn_and_inputs()
    k = 5
    directions = top_singular_directions(model, x, k)
    jacobian = explicit_jacobian(model, x)
    _, singular_values, vh = torch.linalg.svd(jacobian, full_matrices=False)
    assert torch.allclose(directions.eigenvalues, singular_values[:k] ** 2, rtol=1e-9)
    assert torch.allclose(directions.spectrum, singular_values ** 2, rtol=1e-8, atol=1e-10 * float(
        singular_values[0] ** 2))
    overlaps = (directions.right * vh[:k]).sum(1)  # ±1: the same vectors up to sign
    assert torch.allclose(overlaps.abs(), torch.ones(k), atol=1e-8)
    gram_of_directions = directions.right @ directions.right.T
    assert torch.allclose(gram_of_directions, torch.eye(k), atol=1e-10)  # orthonormal


def test_the_step_along_v_j_moves_the_outputs_by_sqrt_lambda_j(float64):
    model, x = tiny_cnn_and_inputs(1)
    directions = top_singular_directions(model, x, 4)
    jacobian = explicit_jacobian(model, x)
    first_order = torch.linalg.vector_norm(directions.right @ jacobian.T, dim=1)  # ‖Φ v_j‖
    assert torch.allclose(first_order, directions.eigenvalues.sqrt(), rtol=1e-9)
    # Φ v_j = sqrt(λ_j) u_j: the direction moves the outputs along its left singular vector.
    moved = (directions.right @ jacobian.T).reshape(directions.left.shape)
    assert torch.allclose(moved, directions.left * directions.eigenvalues.sqrt()[:, None, None], atol=1e-9)
    epsilon = 1e-6  # finite differences: the change is ε sqrt(λ_j) to first order
    changes = output_changes(model, directions.right, epsilon, x)
    assert torch.allclose(changes / epsilon, directions.eigenvalues.sqrt(), rtol=1e-4)


def test_output_change_is_the_plain_difference_of_outputs(float64):
    model, x = tiny_cnn_and_inputs(2)
    direction = random_unit_directions(1, ParameterLayout(model).size, torch.Generator().manual_seed(3),
                                       torch.float64)[0]
    before = [p.detach().clone() for p in model.parameters()]
    change = output_changes(model, [direction], 0.1, x, batch_size=4)
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), before))  # the model is untouched
    moved = small_cnn(in_channels=1, num_classes=3, width=3).double().eval()
    torch.nn.utils.vector_to_parameters(ParameterLayout(model).vector() + 0.1 * direction, moved.parameters())
    with torch.no_grad():
        expected = torch.linalg.vector_norm(moved(x) - model(x))
    assert torch.allclose(change[0], expected, rtol=1e-12)


def test_vector_jacobian_products_match_the_explicit_jacobian(float64):
    torch.manual_seed(4)
    model = vgg(11, num_classes=3, in_channels=1, base_channels=2).double().eval()
    x = torch.randn(4, 1, 8, 8)
    vectors = torch.randn(3, 4, 3)
    products = jacobian_transpose_products(model, x, vectors)
    expected = vectors.reshape(3, -1) @ explicit_jacobian(model, x)
    assert torch.allclose(products, expected, atol=1e-10)


def test_random_directions_are_unit_norm_and_seeded():
    draw = random_unit_directions(50, 1000, torch.Generator().manual_seed(0))
    assert draw.shape == (50, 1000) and draw.dtype == torch.float32
    assert torch.allclose(torch.linalg.vector_norm(draw, dim=1), torch.ones(50), atol=1e-6)
    assert torch.equal(draw, random_unit_directions(50, 1000, torch.Generator().manual_seed(0)))
    assert not torch.equal(draw, random_unit_directions(50, 1000, torch.Generator().manual_seed(1)))
    # Uniform on the sphere: no preferred axis, near-orthogonal in high dimension.
    assert float((draw @ draw.T - torch.eye(50)).abs().max()) < 0.2


def test_asking_for_more_directions_than_the_gram_has_fails(float64):
    model, x = tiny_cnn_and_inputs()
    with pytest.raises(ValueError, match="singular directions"):
        top_singular_directions(model, x, 6 * 3 + 1)


# --- the run, its summary, figure and claims ------------------------------------------------------

TINY_SPEC = {"dataset": "tiny", "model": {"name": "vgg", "depth": 11, "base_channels": 2}, "epochs": 2,
             "batch_size": 8, "optimiser": {"name": "sgd", "lr": 0.01, "momentum": 0.9, "weight_decay": 0.0},
             "n_probe": 4, "n_eval": None, "directions": 3, "epsilon": 0.1, "seeds": [0, 1]}


def tiny_dataset(path):
    generator = np.random.default_rng(0)
    arrays = {f"x_{split}": generator.random((n, 1, 8, 8)).astype(np.float32) for split, n in (("train", 24), ("test", 10))}
    arrays.update({f"y_{split}": generator.integers(0, 3, n) for split, n in (("train", 24), ("test", 10))})
    np.savez(path, **arrays)
    return path


def fake_run(path, top, random, seed=0):
    """A run file with chosen changes (the claims' verdicts on known numbers)."""
    scalars = dict(seed=seed, epsilon=0.1, steps=10, n_params=100, n_train=20, n_probe=4, n_eval=10, num_classes=3,
                   train_accuracy=0.5, train_loss=1.0, test_accuracy=0.4, test_loss=1.1)
    np.savez(path, top_changes=np.asarray(top, float), random_changes=np.asarray(random, float),
             spectrum=np.linspace(3, 0.1, 12), direction_norms=np.ones(len(top)), **scalars)
    return str(path)


def test_run_figure_and_claims_end_to_end(tmp_path):
    from linearlens.claims import ClaimCheck
    from linearlens.claims.george_thesis.ch6 import perturbation_claims
    from linearlens.experiments.george_thesis.ch6 import perturbation_run
    from linearlens.figures.george_thesis.ch6 import plot_fig_B_1
    from linearlens.manifests.jobs import ClaimsJob, FigureJob

    data = tiny_dataset(tmp_path / "tiny.npz")
    spec = {k: v for k, v in TINY_SPEC.items() if k != "seeds"}
    paths = []
    for seed in TINY_SPEC["seeds"]:
        run = perturbation_run(data, spec, seed, "cpu")
        paths.append(str(tmp_path / f"seed{seed}.npz"))
        np.savez(paths[-1], **run)
    assert run["top_changes"].shape == (3,) and run["random_changes"].shape == (3,)
    assert run["spectrum"].shape == (4 * 3,) and np.all(np.diff(run["spectrum"]) <= 0)
    assert np.allclose(run["direction_norms"], 1, atol=1e-4)  # v_j = Φᵀu_j/√λ_j has unit norm
    assert run["n_eval"] == 10 and run["steps"] == 2 * 3 and 0 <= run["test_accuracy"] <= 1
    again = perturbation_run(data, spec, 1, "cpu")  # seeded: the same run twice
    assert np.array_equal(again["random_changes"], run["random_changes"])

    png = tmp_path / "fig_B_1.png"
    plot_fig_B_1(FigureJob("fig_B_1", {"runs": paths, "provenance": []}, TINY_SPEC, str(png),
                           "VGG11 on CIFAR-10: output change along top singular directions", "tiny random images"))
    assert png.exists() and png.with_suffix(".pdf").exists()
    caption = json.loads(png.with_suffix(".json").read_text())["caption"]
    assert "seed(s) 0, 1" in caption and "Departures from the thesis" in caption and "ε = 0.1" in caption

    checks = perturbation_claims(ClaimsJob({"runs": paths, "provenance": []}, {"thresholds": claim_thresholds("george_thesis", "quick", "perturbation"),
                                                                                "spec": TINY_SPEC}))
    assert len(checks) == 2
    for check in checks:
        assert isinstance(check, ClaimCheck) and check.claim_id == "H26" and check.figure == "fig_B_1"
        assert check.passed in (True, False, None) and isinstance(check.measured, float)


def test_claims_pass_and_fail_on_known_numbers(tmp_path):
    from linearlens.analysis.george_thesis.ch6 import perturbation_summary, read_perturbation_runs
    from linearlens.claims.george_thesis.ch6 import perturbation_claims
    from linearlens.manifests.jobs import ClaimsJob

    clear = fake_run(tmp_path / "a.npz", [5.0, 2.0, 1.0], [0.1, 0.2, 0.3])  # ratio 8/3 / 0.2 = 13.3
    summary = perturbation_summary(read_perturbation_runs([clear]))
    assert summary["ratio"].item() == pytest.approx(40 / 3)
    assert summary["share_above_random"].item() == 1.0
    ratio, separation = perturbation_claims(ClaimsJob({"runs": [clear]}, {"thresholds": claim_thresholds("george_thesis", "paper", "perturbation"), "spec": {}}))
    assert ratio.passed and separation.passed and ratio.measured == pytest.approx(40 / 3)

    # One seed below the threshold and with a top direction under a random one fails both checks.
    weak = fake_run(tmp_path / "b.npz", [5.0, 2.0, 0.2], [0.1, 0.3, 0.5], seed=1)  # ratio 7.2 / 0.9 = 8
    ratio, separation = perturbation_claims(ClaimsJob({"runs": [clear, weak]}, {"thresholds": claim_thresholds("george_thesis", "quick", "perturbation"), "spec": {}}))
    assert not ratio.passed and ratio.measured == pytest.approx(8.0)
    assert not separation.passed and separation.measured == pytest.approx(2 / 3)
    frame = read_perturbation_runs([clear, weak])
    assert list(frame.loc[frame["seed"] == 1, "direction"]) == [1, 2, 3, 4, 5, 6]
    assert frame.loc[frame["kind"] == "random", "eigenvalue"].isna().all()
