"""George thesis ch. 6 / App. B: Rademacher bounds of linear classes, Prop B.2.5, SuperNat (Prop 6.4.2),
and the runs, figures and claims of Figs 6.5 and B.3. Float64, CPU, seconds."""

import numpy as np
import pandas as pd
import pytest

from configured import claim_thresholds
from linearlens.analysis.george_thesis.ch6 import rbf_capacity_trends
from linearlens.capacity.bounds import (
    a_norm,
    exact_rademacher,
    identity_bound,
    minimum_norm_interpolator,
    monte_carlo_rademacher,
    optimal_rescaling_weights,
    optimised_bound,
    rademacher_bound,
    rademacher_maximiser,
    rademacher_supremum,
    rescaled_bound,
    spectral_rescaling,
)
from linearlens.capacity.rbf_features import (
    anisotropic_features,
    oriented,
    rbf_capacity_experiment,
    rbf_random_features,
    zero_one_error,
)
from linearlens.claims.george_thesis.ch6 import rbf_capacity_claims, supernat_claims
from linearlens.figures.george_thesis.ch6 import plot_fig_6_5, plot_fig_B_3
from linearlens.linearize.supernat import (
    gradient_descent,
    identity_weights,
    mse_gradient,
    noisy_regression_task,
    reparametrised_gd,
    stable_learning_rate,
    supernat_experiment,
    supernat_objective,
    supernat_weights,
)
from linearlens.manifests.jobs import ClaimsJob, FigureJob


def random_features(n=12, p=7, seed=0):
    return np.random.default_rng(seed).standard_normal((n, p))


def random_invertible(p, seed=1):
    rng = np.random.default_rng(seed)
    return np.eye(p) + 0.3 * rng.standard_normal((p, p))


# --- Rademacher complexity of the ellipsoid ball (eq 6.4.3, B.2.9-B.2.11) ---------------------------

@pytest.mark.parametrize("with_rescaling", [False, True])
def test_rademacher_estimates_stay_below_the_trace_bound(with_rescaling):
    """§8 item 11: the exact expectation over all 2ⁿ signs and a Monte-Carlo estimate are ≤ (M/n)√Tr K_A,
    and the Monte-Carlo estimate agrees with the exact one."""
    features = random_features()
    rescaling = random_invertible(7) if with_rescaling else None
    bound = rademacher_bound(features, 2.5, rescaling)
    exact = exact_rademacher(features, 2.5, rescaling)
    estimate, error = monte_carlo_rademacher(features, 2.5, rescaling, draws=4000, seed=3)
    assert exact <= bound
    assert abs(estimate - exact) < 4 * error
    assert estimate - 3 * error <= bound
    assert exact > 0.5 * bound  # not vacuous: Jensen's gap is moderate for generic features


def test_trace_bound_uses_the_rescaled_kernel():
    """√Tr K_A with K_A = Φ(AAᵀ)⁻¹Φᵀ built densely; the margin divides the bound (B.2.7)."""
    features, rescaling = random_features(), random_invertible(7)
    kernel = features @ np.linalg.inv(rescaling @ rescaling.T) @ features.T
    expected = 1.5 * np.sqrt(np.trace(kernel)) / len(features)
    assert rademacher_bound(features, 1.5, rescaling) == pytest.approx(expected, rel=1e-12)
    assert rademacher_bound(features, 1.5, rescaling, margin=0.5) == pytest.approx(2 * expected, rel=1e-12)


def test_supremum_is_attained_and_not_exceeded_on_the_ellipsoid():
    """The closed-form sup (B.2.10) is reached by the maximiser (on the sphere ‖w‖_A = M) and no random w
    of the ball does better."""
    features, rescaling = random_features(), random_invertible(7)
    rng = np.random.default_rng(4)
    signs = rng.choice([-1.0, 1.0], size=len(features))
    best = rademacher_supremum(features, signs, 2.0, rescaling)[0]
    maximiser = rademacher_maximiser(features, signs, 2.0, rescaling)
    assert a_norm(maximiser, rescaling) == pytest.approx(2.0, rel=1e-12)
    assert signs @ features @ maximiser / len(features) == pytest.approx(best, rel=1e-12)
    directions = rng.standard_normal((5000, 7))
    on_sphere = np.stack([2.0 * w / a_norm(w, rescaling) for w in directions])
    assert np.max(on_sphere @ features.T @ signs) / len(features) <= best * (1 + 1e-12)


# --- minimum-norm interpolator and Prop B.2.5 ----------------------------------------------------

def test_minimum_norm_interpolator_matches_the_pseudo_inverse():
    features = random_features(n=6, p=15, seed=5)
    targets = np.sign(np.random.default_rng(6).standard_normal(6))
    fit = minimum_norm_interpolator(features, targets)
    np.testing.assert_allclose(features @ fit.weights, targets, atol=1e-12)
    np.testing.assert_allclose(fit.weights, np.linalg.pinv(features) @ targets, atol=1e-12)
    np.testing.assert_allclose(fit.weights, features.T @ np.linalg.solve(features @ features.T, targets), atol=1e-12)


def test_prop_b25_optimum_equals_the_sum_of_label_components_and_beats_identity():
    """§8 item 11: with ν* = κλ_j/|u_jᵀy| the product ‖w*‖_{A_ν}·√Tr K_{A_ν} / n, computed with explicit
    P × P matrices, equals (1/n) Σ_j |u_jᵀy| for any κ; it is ≤ the A = Id value (ν ≡ 1) and ≤ every
    random ν of the class."""
    features = random_features(n=6, p=15, seed=5)
    targets = np.sign(np.random.default_rng(6).standard_normal(6))
    fit = minimum_norm_interpolator(features, targets)
    optimum = optimised_bound(fit, 6)
    assert optimum == pytest.approx(np.abs(fit.left.T @ targets).sum() / 6, rel=1e-12)
    for kappa in (1.0, 0.01, 40.0):
        assert rescaled_bound(features, fit, optimal_rescaling_weights(fit, kappa)) == pytest.approx(optimum, rel=1e-9)
    plain = rescaled_bound(features, fit, np.ones(fit.rank))
    assert plain == pytest.approx(identity_bound(fit, 6), rel=1e-12)
    assert plain == pytest.approx(np.linalg.norm(fit.weights) * np.linalg.norm(features) / 6, rel=1e-12)
    assert optimum < plain
    rng = np.random.default_rng(7)
    others = [rescaled_bound(features, fit, np.exp(rng.normal(0, 1.5, fit.rank))) for _ in range(300)]
    assert min(others) >= optimum * (1 - 1e-9)


def test_optimised_bound_takes_the_best_basis_of_a_repeated_singular_value():
    """Whitened features (orthonormal rows: every singular value 1) leave the SVD basis free; the best
    basis gives ‖y‖₂/n, the formula in an arbitrary basis gives more."""
    rows = np.linalg.qr(np.random.default_rng(8).standard_normal((20, 8)))[0].T  # 8 × 20, orthonormal rows
    targets = np.sign(np.random.default_rng(9).standard_normal(8))
    fit = minimum_norm_interpolator(rows, targets)
    assert optimised_bound(fit, 8, degenerate_rtol=1e-10) == pytest.approx(np.linalg.norm(targets) / 8, rel=1e-12)
    assert optimised_bound(fit, 8) >= np.linalg.norm(targets) / 8
    assert identity_bound(fit, 8) == pytest.approx(1.0, rel=1e-12)


# --- SuperNat (Prop 6.4.2) -------------------------------------------------------------------------

def test_supernat_weights_minimise_the_step_objective():
    """§8 item 12: ν* = κ/|u_jᵀ∇_f L| minimises ‖δw_GD‖_Ã·‖Ã⁻¹Φᵀ‖_F (explicit matrices) against random
    ν; its value is η Σ_j λ_j|u_jᵀ∇_f L| (Cauchy-Schwarz) whatever κ."""
    features = random_features(n=30, p=6, seed=10)
    gradient_f = np.random.default_rng(11).standard_normal(30) / 30
    left, singular_values, _ = np.linalg.svd(features, full_matrices=False)
    components = left.T @ gradient_f
    optimum = supernat_objective(features, gradient_f, supernat_weights(singular_values, components), lr=0.3)
    assert optimum == pytest.approx(0.3 * np.sum(singular_values ** 2 * np.abs(components)), rel=1e-9)
    literal = supernat_objective(features, gradient_f, supernat_weights(singular_values, components, "literal"), 0.3)
    assert literal == pytest.approx(optimum, rel=1e-9)
    rng = np.random.default_rng(12)
    others = [supernat_objective(features, gradient_f, np.exp(rng.normal(0, 1.5, 6)), 0.3) for _ in range(300)]
    assert min(others) >= optimum * (1 - 1e-9)
    assert supernat_objective(features, gradient_f, np.ones(6), 0.3) > optimum


def task_arrays(seed=0, **sizes):
    task = noisy_regression_task(seed, **sizes)
    return task["features"], task["targets"], task["test_features"], task["test_targets"]


def test_supernat_with_unit_weights_is_gradient_descent():
    arrays = task_arrays()
    lr = stable_learning_rate(arrays[0])
    rescaled = reparametrised_gd(*arrays, lr, 60, identity_weights)
    plain = gradient_descent(*arrays, lr, 60)
    np.testing.assert_allclose(rescaled.weights, plain.weights, rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(rescaled.test_error, plain.test_error, rtol=1e-11)
    np.testing.assert_allclose(rescaled.spectrum, plain.spectrum, rtol=1e-11)


def test_a_supernat_rescaling_keeps_the_singular_vectors():
    """One Step 3 by hand: Φ Ã_ν*⁻¹ has Φ's singular vectors (up to sign) and singular values λ_j/ν_j."""
    features, targets, _, _ = task_arrays(seed=1)
    left, singular_values, right_t = np.linalg.svd(features, full_matrices=False)
    gradient_f = mse_gradient(np.zeros(len(targets)), targets)
    nu = supernat_weights(singular_values, left.T @ gradient_f)
    rescaled = features @ spectral_rescaling(right_t.T, nu, power=-0.5)
    new_left, new_values, new_right_t = np.linalg.svd(rescaled, full_matrices=False)
    order = np.argsort(-(singular_values ** 2 / nu))
    np.testing.assert_allclose(new_values ** 2, (singular_values ** 2 / nu)[order], rtol=1e-10)
    np.testing.assert_allclose(np.abs(new_left.T @ left[:, order]), np.eye(len(nu)), atol=1e-8)
    np.testing.assert_allclose(np.abs(new_right_t @ right_t[order].T), np.eye(len(nu)), atol=1e-8)


def test_supernat_is_gd_with_per_mode_rates_rescaled_by_the_residual():
    """The SVD-every-step route against the closed form the fixed singular vectors allow: in Φ's basis,
    λ_{j,t+1} = λ_jt |u_jᵀ∇L| / κ and f_{t+1} = f_t − η U diag(λ_{t+1}) Uᵀ ∇L; trace preserved."""
    features, targets, test_features, test_targets = task_arrays(seed=2)
    lr = stable_learning_rate(features)
    run = reparametrised_gd(features, targets, test_features, test_targets, lr, 40,
                            lambda s, r: supernat_weights(s, r, "trace_preserving"))
    left, singular_values, _ = np.linalg.svd(features, full_matrices=False)
    eigenvalues, predictions, losses = singular_values ** 2, np.zeros(len(targets)), []
    for _ in range(40):
        losses.append(0.5 * np.mean((predictions - targets) ** 2))
        components = left.T @ mse_gradient(predictions, targets)
        eigenvalues = eigenvalues * np.abs(components) / (eigenvalues @ np.abs(components) / eigenvalues.sum())
        predictions = predictions - lr * left @ (eigenvalues * components)
    np.testing.assert_allclose(run.train_loss[:40], losses, rtol=1e-8)
    np.testing.assert_allclose(run.spectrum[40], np.sort(eigenvalues)[::-1], rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(run.spectrum.sum(axis=1), run.spectrum[0].sum(), rtol=1e-10)


def test_max_residual_convention_only_contracts():
    arrays = task_arrays(seed=3)
    run = reparametrised_gd(*arrays, stable_learning_rate(arrays[0]), 30,
                            lambda s, r: supernat_weights(s, r, "max_residual"))
    assert np.all(np.diff(run.spectrum.sum(axis=1)) <= 1e-12)
    assert np.all(np.diff(run.spectrum[:, 0]) <= 1e-9)


def test_noisy_regression_task_as_written():
    """y − φ = φ_noise(φ_noiseᵀε) lies in the span of the noise features; test targets are noise free;
    η is 0.5 over the top eigenvalue of ΦΦᵀ/n."""
    task = noisy_regression_task(4, d=10, noise_variance=0.1, n_train=50, n_test=300)
    features, noise = task["features"], task["targets"] - task["features"][:, 0]
    coefficients = np.linalg.lstsq(features[:, 1:], noise, rcond=None)[0]
    np.testing.assert_allclose(features[:, 1:] @ coefficients, noise, atol=1e-12)
    assert np.linalg.norm(noise) > 0.1
    np.testing.assert_array_equal(task["test_targets"], task["test_features"][:, 0])
    lr = stable_learning_rate(features)
    assert lr * np.linalg.eigvalsh(features @ features.T / 50)[-1] == pytest.approx(0.5, rel=1e-12)
    with pytest.raises(ValueError, match="kappa convention"):
        supernat_weights(np.ones(3), np.ones(3), "isotropic")


# --- random RBF features (Fig B.3) ---------------------------------------------------------------

def test_anisotropy_knob_interpolates_between_whitened_and_original_features():
    inputs, features = rbf_random_features(40, 40, 3.0, 1.0, 0)
    left, singular_values, _ = np.linalg.svd(features, full_matrices=False)
    eigenvalues = singular_values ** 2
    original = anisotropic_features(left, eigenvalues, 1.0)
    np.testing.assert_allclose(original @ original.T, features @ features.T, atol=1e-12)
    whitened = anisotropic_features(left, eigenvalues, 0.0)
    np.testing.assert_allclose(whitened @ whitened.T, np.eye(40), atol=1e-12)  # P ≥ N: identity kernel
    half = anisotropic_features(left, eigenvalues, 0.5)
    np.testing.assert_allclose(half @ half.T, 0.5 * np.eye(40) + 0.5 * features @ features.T, atol=1e-12)
    assert oriented(left[:, 1], inputs) @ inputs > 0


def test_zero_one_error_counts_ties_as_half():
    labels = np.array([1.0, -1.0, 1.0, -1.0])
    assert zero_one_error(np.array([0.3, -2.0, -0.1, 1e-15]), labels, 1e-9) == pytest.approx((0 + 0 + 1 + 0.5) / 4)


# --- end to end: tiny runs -> figures -> claims ----------------------------------------------------

SUPERNAT_SPEC = {"d": 10, "noise_variance": 0.1, "n_train": 50, "n_test": 200, "lr_factor": 0.5, "iterations": 40,
                 "kappa": "trace_preserving", "seeds": [0, 1]}
RBF_SPEC = {"n_points": 60, "n_features": 60, "half_width": 3.0, "gamma": 1.0, "feature_seed": 0, "n_train": 12,
            "n_subsamples": 4, "subsample_seed": 0, "c_grid_size": 5, "scatter_c": [0.0, 0.5, 1.0], "label_mode": 1,
            "projection_modes": [1, 5], "margin": 1.0, "rtol": 1e-12, "tie_tolerance": 1e-9}


def check_claims(checks, claim_id):
    assert checks and {check.claim_id for check in checks} == {claim_id}
    for check in checks:
        assert check.passed in (True, False, None)
        assert check.measured not in (None, "")


def test_supernat_run_figure_and_claims(tmp_path):
    record = supernat_experiment(SUPERNAT_SPEC)
    assert record["test_error_gd"].shape == record["test_error_supernat"].shape == (2, 41)
    assert np.all(record["test_error_supernat"][:, 0] == record["test_error_gd"][:, 0])  # both start at f = 0
    runs = tmp_path / "curves.npz"
    np.savez_compressed(runs, **record)
    png = tmp_path / "fig_6_5.png"
    plot_fig_6_5(FigureJob("fig_6_5", {"runs": [str(runs)]}, SUPERNAT_SPEC, str(png), "SuperNat.",
                           "synthetic noisy linear regression"))
    assert png.exists() and png.with_suffix(".pdf").exists()
    check_claims(supernat_claims(ClaimsJob({"runs": [str(runs)]}, {"thresholds": claim_thresholds("george_thesis", "quick", "supernat"), "spec": SUPERNAT_SPEC})),
                 "H22")


def test_rbf_capacity_run_figure_and_claims(tmp_path):
    record = rbf_capacity_experiment(RBF_SPEC)
    assert record["test_error"].shape == record["bound_identity"].shape == (4, 5)
    assert np.all(record["bound_optimised"] <= record["bound_identity"] * (1 + 1e-12))
    np.testing.assert_allclose(record["bound_identity"][:, 0], 1.0, rtol=1e-10)  # whitened: ‖w*‖² = Tr K = n
    np.testing.assert_allclose(record["test_error"][:, 0], 0.5)  # identity kernel: f = 0 off the sample
    assert record["projections"].shape == (3, 4, 2)
    np.testing.assert_allclose(record["projections"].mean(axis=1), 0.0, atol=1e-10)
    runs = tmp_path / "bounds.npz"
    np.savez_compressed(runs, **record)
    png = tmp_path / "fig_B_3.png"
    plot_fig_B_3(FigureJob("fig_B_3", {"runs": [str(runs)]}, RBF_SPEC, str(png), "Which norm measures capacity.",
                           "synthetic 1-D grid, random RBF features"))
    assert png.exists()
    check_claims(rbf_capacity_claims(ClaimsJob({"runs": [str(runs)]}, {"thresholds": claim_thresholds("george_thesis", "paper", "rbf_capacity"), "spec": RBF_SPEC})),
                 "H25")


def test_supernat_claims_read_equal_finals_as_not_below(tmp_path):
    """Two runs at the same minimiser (differences at rounding level) fail H22; a clearly lower SuperNat passes."""
    gd = np.array([[1.0, 0.4, 0.3], [1.0, 0.5, 0.2]])
    record = {"seeds": np.array([0, 1]), "iterations": np.arange(3), "test_error_gd": gd,
              "train_loss_gd": gd, "train_loss_supernat": gd}
    verdicts = {}
    for name, supernat in {"equal": gd * (1 - 1e-13), "lower": gd * 0.5}.items():
        path = tmp_path / f"{name}.npz"
        np.savez(path, **record, test_error_supernat=supernat)
        checks = supernat_claims(ClaimsJob({"runs": [str(path)]}, {"thresholds": claim_thresholds("george_thesis", "quick", "supernat"), "spec": SUPERNAT_SPEC}))
        verdicts[name] = [check.passed for check in checks]
    assert verdicts == {"equal": [False, False], "lower": [True, True]}


def test_rbf_trends_rank_each_bound_against_the_test_error():
    c = pd.Index(np.linspace(0, 1, 5), name="c")
    curves = pd.DataFrame({"test_error_mean": [0.5, 0.4, 0.3, 0.2, 0.25],
                           "bound_identity_mean": [1.0, 0.5, 0.6, 0.8, 100.0],
                           "bound_optimised_mean": [0.9, 0.8, 0.7, 0.6, 0.65]}, index=c)
    trends = rbf_capacity_trends(curves)
    assert trends["bound_optimised_spearman"] == pytest.approx(1.0)
    assert trends["bound_identity_spearman"] == pytest.approx(-0.2)  # ranks (4,1,2,3,5) vs (5,4,3,1,2)
    assert trends["bound_identity_growth"] == pytest.approx(200.0)
    assert trends["bound_optimised_growth"] == pytest.approx(0.65 / 0.6)
