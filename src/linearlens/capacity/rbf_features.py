"""Which norm measures capacity: random RBF features (George thesis App. B.2.5, Fig B.3). NumPy and
scikit-learn, float64.

P random Fourier features of an RBF kernel (scikit-learn's RBFSampler) on N equally spaced points of
[−a, a]; SVD Φ = Σ_j √l_j ψ_j φ_jᵀ; labels y = sign(ψ_k); the singular values rescaled to
l_j^c = 1 + c(l_j − 1) (c = 0 whitened, c = 1 the original features; ψ_j, φ_j unchanged, so the labels
do not depend on c). For each c and each training subsample S of n points: the minimum-ℓ2
interpolator w*_S, its 0-1 test error outside S, and the A = Id and optimised-A (Prop B.2.5) bounds.

The work is done in the φ basis: Φ_c = Ψ diag(√l^c) Φᵀ, and every w* lies in span(φ), so with
coordinates a = Φᵀw the features are the rows of Ψ diag(√l^c) (N × r, r = min(N, P)), ‖w‖₂ = ‖a‖₂
and the projection of w on φ_j is a_j: the same numbers as in the P-dimensional parametrisation.
"""

from __future__ import annotations

import numpy as np
from sklearn.kernel_approximation import RBFSampler

from .bounds import identity_bound, minimum_norm_interpolator, optimised_bound


def rbf_random_features(n_points: int, n_features: int, half_width: float, gamma: float,
                        seed: int) -> tuple[np.ndarray, np.ndarray]:
    """N equally spaced inputs on [−a, a] and their N × P random Fourier features (RBFSampler,
    n_components = P, random_state = seed)."""
    inputs = np.linspace(-half_width, half_width, n_points)
    sampler = RBFSampler(gamma=gamma, n_components=n_features, random_state=seed)
    return inputs, sampler.fit_transform(inputs[:, None]).astype(np.float64)


def oriented(vector: np.ndarray, inputs: np.ndarray) -> np.ndarray:
    """A singular vector with its sign fixed: ⟨ψ, x⟩ ≥ 0 (an odd mode is positive for x > 0)."""
    return vector if vector @ inputs >= 0 else -vector


def anisotropic_features(left: np.ndarray, eigenvalues: np.ndarray, c: float) -> np.ndarray:
    """Rows Ψ diag(√l^c) with l_j^c = 1 + c(l_j − 1): the features Φ_c in the φ basis."""
    return left * np.sqrt(1.0 + c * (eigenvalues - 1.0))


def zero_one_error(predictions: np.ndarray, labels: np.ndarray, tie_tolerance: float) -> float:
    """0-1 error of sign(f); a prediction within ``tie_tolerance`` of 0 is a tie and counts ½ (the
    expected error of a coin flip)."""
    ties = np.abs(predictions) <= tie_tolerance
    wrong = np.sign(predictions) != labels
    return float(np.mean(np.where(ties, 0.5, wrong)))


def training_subsamples(n_points: int, n_train: int, count: int, seed: int) -> np.ndarray:
    """``count`` training sets S of n distinct points, drawn uniformly (count × n indices)."""
    rng = np.random.default_rng(seed)
    return np.stack([np.sort(rng.choice(n_points, n_train, replace=False)) for _ in range(count)])


def fit_subsamples(features: np.ndarray, labels: np.ndarray, subsamples: np.ndarray, spec: dict) -> dict:
    """For each subsample S: the interpolator's coordinates, test error outside S, both bounds,
    the numerical rank of Φ_S and the largest training residual |f(x_i) − y_i|."""
    n_train = subsamples.shape[1]
    margin, rtol = spec["margin"], spec["rtol"]
    record = {key: [] for key in ("coordinates", "test_error", "bound_identity", "bound_optimised", "rank",
                                  "train_residual")}
    for subsample in subsamples:
        fit = minimum_norm_interpolator(features[subsample], labels[subsample], rtol)
        outside = np.ones(len(labels), dtype=bool)
        outside[subsample] = False
        record["coordinates"].append(fit.weights)
        record["test_error"].append(zero_one_error((features @ fit.weights)[outside], labels[outside],
                                                   spec["tie_tolerance"]))
        record["bound_identity"].append(identity_bound(fit, n_train, margin))
        record["bound_optimised"].append(optimised_bound(fit, n_train, margin, rtol))
        record["rank"].append(fit.rank)
        record["train_residual"].append(np.max(np.abs(features[subsample] @ fit.weights - labels[subsample])))
    return {key: np.asarray(values) for key, values in record.items()}


def rbf_capacity_experiment(spec: dict) -> dict[str, np.ndarray]:
    """Fig B.3 from the config's ``rbf_capacity`` block: per c of the grid (right panel) the test error
    and both bounds of every subsample; per c of ``scatter_c`` (left panel) the centred interpolators
    w*_S − E_S w*_S projected on (φ_i, φ_j) of ``projection_modes``."""
    inputs, features = rbf_random_features(spec["n_points"], spec["n_features"], spec["half_width"],
                                           spec["gamma"], spec["feature_seed"])
    left, singular_values, _ = np.linalg.svd(features, full_matrices=False)
    eigenvalues = singular_values ** 2
    labels = np.sign(oriented(left[:, spec["label_mode"]], inputs))
    subsamples = training_subsamples(spec["n_points"], spec["n_train"], spec["n_subsamples"], spec["subsample_seed"])
    c_grid = np.linspace(0.0, 1.0, spec["c_grid_size"])
    per_c = [fit_subsamples(anisotropic_features(left, eigenvalues, c), labels, subsamples, spec) for c in c_grid]
    record = {"inputs": inputs, "labels": labels, "eigenvalues": eigenvalues, "subsamples": subsamples,
              "c_grid": c_grid, "scatter_c": np.asarray(spec["scatter_c"], dtype=float),
              "projection_modes": np.asarray(spec["projection_modes"])}
    for key in ("test_error", "bound_identity", "bound_optimised", "rank", "train_residual"):
        record[key] = np.stack([fits[key] for fits in per_c], axis=1)  # (subsamples, c)
    projections = []
    for c in record["scatter_c"]:
        coordinates = fit_subsamples(anisotropic_features(left, eigenvalues, c), labels, subsamples,
                                     spec)["coordinates"][:, record["projection_modes"]]
        projections.append(coordinates - coordinates.mean(axis=0))
    record["projections"] = np.stack(projections)  # (scatter c, subsamples, 2)
    return record
