"""SuperNat (George thesis, Fig 6.5-left, Prop 6.4.2, eqs 6.4.8-6.4.10) on a linear model in fixed
features, and the noisy linear-regression toy of Fig 6.5-right. NumPy only, float64.

A linear model f(x) = ⟨w, Φ(x)⟩ is trained on the mean squared loss L(f) = ‖f − y‖² / (2n), so that
∇_f L = (f − y) / n. Each SuperNat step:

1. SVD of the current n × P feature matrix, Φ_t = Σ_j √λ_jt u_j v_jᵀ;
2. ν*_j = κ / |u_jᵀ ∇_f L| (6.4.9), the minimiser of ‖δw_GD‖_Ã · ‖Ã⁻¹Φ_tᵀ‖_F over the class
   Ã_ν = Σ_j √ν_j v_j v_jᵀ + Id_⊥ (6.4.8);
3. features rescaled, Φ_{t+1} = Φ_t Ã_ν⁻¹: singular values λ_j → λ_j / ν_j = λ_j |u_jᵀ ∇_f L| / κ
   (6.4.10), singular vectors unchanged;
4. a plain GD step in the linear model with the rescaled features.

κ is fixed by a convention: ``max_residual`` (the configs' choice) takes
κ = max_j |u_jᵀ∇_f L|, so the mode the residual loads most keeps its λ and every other mode
shrinks (ν ≥ 1: the rescaling only ever contracts): modes the residual has left stay frozen, which
is how the thesis describes SuperNat ("freezes learning in noise directions"). ``trace_preserving``
(the default) keeps Σ_j λ_jt constant: once the signal is fitted the trace flows back into
the noise modes, so with P < n SuperNat ends at the least-squares solution GD reaches too (measured:
equal final test errors within 2e-12 on every seed of the toy), unlike the thesis's Fig 6.5.
``literal`` is κ = 1, eq. 6.4.10 with no isotropic rescaling. With ν ≡ 1 the algorithm is plain GD.

The model is tracked in the original parametrisation: with Φ_t = Φ M_t (M_t the product of the
Ã⁻¹ so far), a step δw̃ in the rescaled model is δw = M_t δw̃ in the original one, so train and
test predictions are Φ w and Φ_test w throughout.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..capacity.bounds import a_norm, rescaled_features, spectral_rescaling

KAPPA_CONVENTIONS = ("trace_preserving", "max_residual", "literal")


def mse_gradient(predictions: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """∇_f L for L(f) = ‖f − y‖² / (2n)."""
    return (predictions - targets) / len(targets)


def supernat_weights(singular_values: np.ndarray, residual_components: np.ndarray,
                     kappa: str = "trace_preserving") -> np.ndarray:
    """ν*_j = κ / |u_jᵀ ∇_f L| (6.4.9), with κ by the stated convention.

    ``singular_values`` are the √λ_j of Φ_t, ``residual_components`` the u_jᵀ ∇_f L. A mode the
    residual no longer touches gets ν = ∞ (its λ becomes 0: it freezes); a zero residual gives ν ≡ 1.
    """
    if kappa not in KAPPA_CONVENTIONS:
        raise ValueError(f"kappa convention {kappa!r}: expected one of {KAPPA_CONVENTIONS}")
    strength = np.abs(residual_components)
    eigenvalues = singular_values ** 2
    if kappa == "literal":
        scale = 1.0
    elif kappa == "max_residual":
        scale = float(strength.max())
    else:  # Σ_j λ_j / ν_j = Σ_j λ_j  ⇔  κ = Σ_j λ_j |u_jᵀ∇L| / Σ_j λ_j
        scale = float(eigenvalues @ strength / eigenvalues.sum())
    if scale == 0.0:
        return np.ones_like(strength)
    with np.errstate(divide="ignore"):
        return scale / strength


def identity_weights(singular_values: np.ndarray, residual_components: np.ndarray) -> np.ndarray:
    """ν ≡ 1: no rescaling, the algorithm is plain gradient descent."""
    return np.ones_like(singular_values)


def supernat_objective(features: np.ndarray, gradient_f: np.ndarray, nu: np.ndarray, lr: float) -> float:
    """‖δw_GD‖_Ã · ‖Ã⁻¹Φᵀ‖_F for Ã = Ã_ν (Step 2 of Fig 6.5, B.2.37), computed with explicit P × P
    matrices: δw_GD = −η Φᵀ ∇_f L, ‖w‖_A = √(wᵀ A Aᵀ w). ν is indexed like the SVD modes of Φ."""
    _, _, right_t = np.linalg.svd(features, full_matrices=False)
    rescaling = spectral_rescaling(right_t.T, nu)
    step = -lr * features.T @ gradient_f
    return a_norm(step, rescaling) * float(np.linalg.norm(rescaled_features(features, rescaling)))


@dataclass
class ReparametrisedRun:
    """What a run records at iterations 0..T (T + 1 rows)."""

    train_loss: np.ndarray  # (T + 1,) L(f_t) = ‖f_t − y‖² / (2n)
    test_error: np.ndarray  # (T + 1,) mean squared error of f_t on the test inputs
    spectrum: np.ndarray  # (T + 1, r) the λ_jt of Φ_t, the features after t rescalings (row 0: Φ's)
    weights: np.ndarray  # (P,) final weights in the original parametrisation


WeightRule = Callable[[np.ndarray, np.ndarray], np.ndarray]


def reparametrised_gd(features: np.ndarray, targets: np.ndarray, test_features: np.ndarray,
                      test_targets: np.ndarray, lr: float, iterations: int, weight_rule: WeightRule) -> ReparametrisedRun:
    """GD on a linear model where, before each step, the features are rescaled along their right
    singular vectors by Ã_ν⁻¹ with ν = ``weight_rule``(√λ, Uᵀ∇_f L) (SuperNat's Steps 1-4; ν ≡ 1 is
    GD). Starts at w = 0 (f_0 = 0, as Thm 6.4.1 sets it).

    The SVD of Φ_t = Φ M_t is taken each step through Φ = QR (thin QR, once): Φ_t = Q (R M_t), so
    the SVD of the small r × P matrix R M_t gives Φ_t's singular values and, through Q, its left
    singular vectors (r = min(n, P))."""
    orthonormal, triangular = np.linalg.qr(features)
    transform = np.eye(features.shape[1])  # M_t: Φ_t = Φ M_t, for train and test inputs alike
    history = np.zeros((iterations + 1, features.shape[1]))
    spectrum = np.empty((iterations + 1, triangular.shape[0]))
    for t in range(iterations + 1):
        left, singular_values, right_t = np.linalg.svd(triangular @ transform, full_matrices=False)
        spectrum[t] = singular_values ** 2
        if t == iterations:
            break
        projected = orthonormal.T @ mse_gradient(features @ history[t], targets)  # u_jᵀ∇L = (leftᵀ Qᵀ∇L)_j
        nu = weight_rule(singular_values, left.T @ projected)
        transform = transform @ spectral_rescaling(right_t.T, nu, power=-0.5)
        history[t + 1] = history[t] - lr * transform @ ((triangular @ transform).T @ projected)
    return _recorded(history, spectrum, features, targets, test_features, test_targets)


def gradient_descent(features: np.ndarray, targets: np.ndarray, test_features: np.ndarray, test_targets: np.ndarray,
                     lr: float, iterations: int) -> ReparametrisedRun:
    """Plain GD on L(f) = ‖Φw − y‖² / (2n) from w = 0, recorded like ``reparametrised_gd`` (its
    spectrum is Φ's throughout)."""
    history = np.zeros((iterations + 1, features.shape[1]))
    for t in range(iterations):
        history[t + 1] = history[t] - lr * features.T @ mse_gradient(features @ history[t], targets)
    spectrum = np.tile(np.linalg.svd(features, compute_uv=False) ** 2, (iterations + 1, 1))
    return _recorded(history, spectrum, features, targets, test_features, test_targets)


def _recorded(history: np.ndarray, spectrum: np.ndarray, features: np.ndarray, targets: np.ndarray,
              test_features: np.ndarray, test_targets: np.ndarray) -> ReparametrisedRun:
    """The losses at every iterate; the test error (1000s of inputs) as a quadratic form in w,
    mean (Φw − y)² = wᵀCw − 2bᵀw + mean y² (it stays far above the rounding of that sum)."""
    train_loss = 0.5 * np.mean((history @ features.T - targets) ** 2, axis=1)
    gram, moment = test_features.T @ test_features, test_features.T @ test_targets
    quadratic = np.einsum("ti,ij,tj->t", history, gram, history)
    test_error = np.maximum(quadratic - 2 * history @ moment + test_targets @ test_targets, 0.0) / len(test_targets)
    return ReparametrisedRun(train_loss, test_error, spectrum, history[-1])


# --- the noisy linear-regression toy (Fig 6.5-right) ----------------------------------------------

def noisy_regression_task(seed: int, d: int = 10, noise_variance: float = 0.1, n_train: int = 50,
                          n_test: int = 1000) -> dict[str, np.ndarray]:
    """Φ = [φ, φ_noise] ∈ R^{d+1}, φ ~ N(0, 1), φ_noise ~ N(0, I_d / d); y = φ + P_noise ε with
    P_noise = φ_noise φ_noiseᵀ (n × n, as written: not an orthogonal projector) and
    ε ~ N(0, σ² I_n). Test inputs are fresh draws with noise-free targets y = φ. Train features,
    noise, and test features come from independent streams of ``seed``."""
    train_stream, noise_stream, test_stream = np.random.default_rng(seed).spawn(3)
    scales = np.concatenate([[1.0], np.full(d, 1.0 / np.sqrt(d))])
    features = train_stream.standard_normal((n_train, d + 1)) * scales
    noise_features = features[:, 1:]
    epsilon = noise_stream.standard_normal(n_train) * np.sqrt(noise_variance)
    targets = features[:, 0] + noise_features @ (noise_features.T @ epsilon)
    test_features = test_stream.standard_normal((n_test, d + 1)) * scales
    return {"features": features, "targets": targets, "test_features": test_features,
            "test_targets": test_features[:, 0]}


def stable_learning_rate(features: np.ndarray, factor: float = 0.5) -> float:
    """η = factor / λ_max(K_0) with K_0 = Φ Φᵀ / n, the function-space Hessian of ‖f − y‖² / (2n)."""
    return factor * len(features) / float(np.linalg.eigvalsh(features @ features.T)[-1])


def supernat_experiment(spec: dict) -> dict[str, np.ndarray]:
    """GD and SuperNat on the toy for every seed of ``spec`` (the config's ``supernat`` block): test
    and train curves at iterations 0..T and SuperNat's spectrum, stacked over seeds."""
    runs = {"gd": [], "supernat": []}
    learning_rates = []
    for seed in spec["seeds"]:
        task = noisy_regression_task(seed, spec["d"], spec["noise_variance"], spec["n_train"], spec["n_test"])
        lr = stable_learning_rate(task["features"], spec["lr_factor"])
        learning_rates.append(lr)
        arrays = task["features"], task["targets"], task["test_features"], task["test_targets"]
        runs["gd"].append(gradient_descent(*arrays, lr, spec["iterations"]))
        runs["supernat"].append(reparametrised_gd(*arrays, lr, spec["iterations"],
                                                  lambda s, r: supernat_weights(s, r, spec["kappa"])))
    record = {"seeds": np.asarray(spec["seeds"]), "iterations": np.arange(spec["iterations"] + 1),
              "learning_rate": np.asarray(learning_rates)}
    for name, seed_runs in runs.items():
        record[f"test_error_{name}"] = np.stack([run.test_error for run in seed_runs])
        record[f"train_loss_{name}"] = np.stack([run.train_loss for run in seed_runs])
    record["spectrum_supernat"] = np.stack([run.spectrum for run in runs["supernat"]])
    return record
