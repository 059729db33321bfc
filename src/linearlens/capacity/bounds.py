"""Rademacher bounds of linear classes in fixed features (George thesis §6.4.1, App. B.2). NumPy, float64.

The class F^A_M = {x ↦ ⟨w, Φ(x)⟩ : ‖w‖_A ≤ M}, ‖w‖_A = √(wᵀAAᵀw), on a sample with n × P feature
matrix Φ has empirical Rademacher complexity

    R̂_S = (M/n) E_σ √(σᵀ K_A σ) ≤ (M/n) √(Tr K_A),   K_A = Φ (AAᵀ)⁻¹ Φᵀ   (B.2.10, B.2.11; 6.4.3, B.2.9)

(the supremum over the ellipsoid ball is closed-form). Rescalings of the class (6.4.8) act on the
singular values of Φ = Σ_j √λ_j u_j v_jᵀ only: A_ν = Σ_j √ν_j v_j v_jᵀ + Id_⊥. For the minimum-ℓ2
interpolator w* = Φᵀ K⁻¹ y (B.2.30) with M_A = ‖w*‖_A, the bound is smallest at ν*_j = κ λ_j / |u_jᵀy|
(Prop B.2.5), where it equals (1/n) Σ_j |u_jᵀy|; A = Id gives (1/n) ‖w*‖₂ ‖Φ‖_F, never smaller
(Cauchy-Schwarz).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np


def spectral_rescaling(right_vectors: np.ndarray, nu: np.ndarray, power: float = 0.5) -> np.ndarray:
    """A_ν^{2·power} = Σ_j ν_j^power v_j v_jᵀ + Id_⊥ (6.4.8): power 0.5 gives A_ν, −0.5 its inverse.

    ``right_vectors`` is (P, r) with orthonormal columns v_j; ν = ∞ with a negative power gives 0."""
    with np.errstate(divide="ignore"):
        factors = np.power(nu, power)
    return np.eye(right_vectors.shape[0]) + (right_vectors * (factors - 1.0)) @ right_vectors.T


def a_norm(weights: np.ndarray, rescaling: np.ndarray | None = None) -> float:
    """‖w‖_A = √(wᵀ A Aᵀ w) = ‖Aᵀw‖₂ (A = None: the ℓ2 norm)."""
    return float(np.linalg.norm(weights if rescaling is None else rescaling.T @ weights))


def rescaled_features(features: np.ndarray, rescaling: np.ndarray | None = None) -> np.ndarray:
    """The rows of Φ A⁻ᵀ, i.e. the features A⁻¹Φ(x_i): their Gram is K_A = Φ (AAᵀ)⁻¹ Φᵀ."""
    return features if rescaling is None else np.linalg.solve(rescaling, features.T).T


def rademacher_bound(features: np.ndarray, radius: float, rescaling: np.ndarray | None = None,
                     margin: float = 1.0) -> float:
    """(M_A / (γ n)) √(Tr K_A) (6.4.3, B.2.9); with a margin γ, the bound of the ramp-loss class
    (B.2.7, Talagrand's contraction)."""
    trace = float(np.sum(rescaled_features(features, rescaling) ** 2))
    return radius * np.sqrt(trace) / (margin * len(features))


def rademacher_supremum(features: np.ndarray, signs: np.ndarray, radius: float,
                        rescaling: np.ndarray | None = None) -> np.ndarray:
    """sup over ‖w‖_A ≤ M of (1/n) Σ_i σ_i ⟨w, Φ(x_i)⟩ = (M/n) ‖Σ_i σ_i A⁻¹Φ(x_i)‖₂ (B.2.10), for
    each row of ``signs`` (draws × n)."""
    scaled = rescaled_features(features, rescaling)
    return radius * np.linalg.norm(np.atleast_2d(signs) @ scaled, axis=1) / len(features)


def rademacher_maximiser(features: np.ndarray, signs: np.ndarray, radius: float,
                         rescaling: np.ndarray | None = None) -> np.ndarray:
    """The w on the sphere ‖w‖_A = M attaining the supremum for one sign vector:
    w = M (AAᵀ)⁻¹ Φᵀσ / ‖A⁻¹Φᵀσ‖₂."""
    direction = rescaled_features(features, rescaling).T @ signs  # A⁻¹Φᵀσ
    tilde = radius * direction / np.linalg.norm(direction)  # w̃ = Aᵀw
    return tilde if rescaling is None else np.linalg.solve(rescaling.T, tilde)


def monte_carlo_rademacher(features: np.ndarray, radius: float, rescaling: np.ndarray | None = None,
                           draws: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Monte-Carlo estimate of R̂_S(F^A_M) (6.4.1) and its standard error, from ``draws`` uniform sign
    vectors and the closed-form supremum."""
    signs = np.random.default_rng(seed).choice([-1.0, 1.0], size=(draws, len(features)))
    values = rademacher_supremum(features, signs, radius, rescaling)
    return float(values.mean()), float(values.std(ddof=1) / np.sqrt(draws))


def exact_rademacher(features: np.ndarray, radius: float, rescaling: np.ndarray | None = None) -> float:
    """R̂_S(F^A_M) by enumerating all 2ⁿ sign vectors (small n only)."""
    n = len(features)
    if n > 16:
        raise ValueError(f"exact enumeration of 2^{n} sign vectors: use monte_carlo_rademacher")
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=n)))
    return float(rademacher_supremum(features, signs, radius, rescaling).mean())


@dataclass(frozen=True)
class MinimumNormFit:
    """The minimum-ℓ2 solution of Φw = y through the SVD of Φ (modes above the cutoff only)."""

    weights: np.ndarray  # (P,) w* = Σ_j (u_jᵀy / √λ_j) v_j (B.2.30)
    left: np.ndarray  # (n, k) u_j of the kept modes
    singular_values: np.ndarray  # (k,) √λ_j of the kept modes, non-increasing
    right: np.ndarray  # (P, k) v_j of the kept modes
    label_components: np.ndarray  # (k,) u_jᵀy

    @property
    def rank(self) -> int:
        return len(self.singular_values)


def minimum_norm_interpolator(features: np.ndarray, targets: np.ndarray, rtol: float = 1e-12) -> MinimumNormFit:
    """w* = Φᵀ K⁻¹ y = Σ_j (u_jᵀy/√λ_j) v_j (B.2.30). Singular values below rtol·max count as zero:
    where Φ has fewer than n numerically non-zero singular values this is the minimum-norm
    least-squares solution (the pseudo-inverse), which no longer interpolates exactly."""
    left, singular_values, right_t = np.linalg.svd(features, full_matrices=False)
    kept = singular_values > rtol * singular_values[0]
    left, singular_values, right = left[:, kept], singular_values[kept], right_t[kept].T
    components = left.T @ targets
    return MinimumNormFit(right @ (components / singular_values), left, singular_values, right, components)


def identity_bound(fit: MinimumNormFit, n: int, margin: float = 1.0) -> float:
    """The A = Id bound for the interpolator: (‖w*‖₂ / (γn)) ‖Φ‖_F (with the kept modes' trace)."""
    return float(np.linalg.norm(fit.weights) * np.linalg.norm(fit.singular_values) / (margin * n))


def optimal_rescaling_weights(fit: MinimumNormFit, kappa: float = 1.0) -> np.ndarray:
    """ν*_j = κ λ_j / |u_jᵀy| (B.2.31), the minimiser of ‖w*‖_{A_ν} · √(Tr K_{A_ν}) over the class."""
    with np.errstate(divide="ignore"):
        return kappa * fit.singular_values ** 2 / np.abs(fit.label_components)


def optimised_bound(fit: MinimumNormFit, n: int, margin: float = 1.0, degenerate_rtol: float = 0.0) -> float:
    """The Prop B.2.5 bound at ν*: (1/(γn)) Σ_j |u_jᵀy|.

    Where singular values repeat (closer than degenerate_rtol·max), the SVD basis of that eigenspace
    is free, so the class holds every basis of it and the best one puts a single vector along y's
    projection: the eigenspace contributes ‖U_Eᵀy‖₂ instead of Σ_{j∈E} |u_jᵀy|. With distinct
    singular values (or degenerate_rtol = 0) this is the formula as written."""
    values, components = fit.singular_values, fit.label_components
    breaks = np.flatnonzero(values[:-1] - values[1:] > degenerate_rtol * values[0]) + 1
    total = sum(np.linalg.norm(group) for group in np.split(components, breaks))
    return float(total / (margin * n))


def rescaled_bound(features: np.ndarray, fit: MinimumNormFit, nu: np.ndarray, margin: float = 1.0) -> float:
    """(‖w*‖_{A_ν} / (γn)) √(Tr K_{A_ν}) with A_ν built as a P × P matrix on the fit's right singular
    vectors (the direct route, with no spectral formula)."""
    rescaling = spectral_rescaling(fit.right, nu)
    return rademacher_bound(features, a_norm(fit.weights, rescaling), rescaling, margin)
