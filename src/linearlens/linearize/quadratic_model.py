"""The quadratic model of George's thesis §5.4 (and App. C.1): a linear function whose parameter is
a sum of squares, trained by gradient flow, against its linearisation at initialisation. NumPy only,
float64.

Set-up (5.4.1, 5.4.2). Inputs X ∈ R^{n×d}, labels y ∈ R^n, X = Σ_λ √μ_λ u_λ v_λᵀ; the model is

    f_θ(x) = θᵀx,   θ = ½ Σ_λ w_λ² v_λ,   ℓ = ½ ‖Xθ − y‖²,   ẇ = −∇_w ℓ   (5.4.3)

The signs of (u_λ, v_λ) are chosen so that y_λ = u_λᵀy ≥ 0 (footnote 3); then θ*_λ = y_λ/√μ_λ ≥ 0,
ỹ_λ = √μ_λ y_λ = μ_λ θ*_λ, and each mode follows θ̇_λ = −2μ_λ θ_λ (θ_λ − θ*_λ) (C.1.4). The
initialisation w⁰ = √σ·1 gives θ⁰_λ = σ/2 for every λ. Modes of μ_λ = 0 (null space of X) keep
θ_λ = θ⁰_λ = θ*_λ and do not change any training prediction.

Linearised regime: the model f̄_w = f_{w⁰} + (w − w⁰)ᵀ∇_w f_{w⁰} has θ̄ = θ⁰ + Σ_λ w⁰_λ (w_λ − w⁰_λ) v_λ
(the thesis writes Σ_λ w_λ w⁰_λ v_λ, which is θ̄ + θ⁰: its solution 5.4.6 starts from θ⁰ as here),
and its modes follow θ̇_λ = −(w⁰_λ)² μ_λ (θ_λ − θ*_λ) = −2 μ_λ θ⁰_λ (θ_λ − θ*_λ):

    θ_λ(t) = θ*_λ + e^{−2 μ_λ θ⁰_λ t} (θ⁰_λ − θ*_λ)

The thesis prints e^{−μ_λ θ⁰_λ t} (5.4.6) and carries the missing 2 into 5.4.7; with
θ⁰ = σ/2 the rate is σ μ_λ, the "rate σμ_i" of its Example 1.

Degenerate singular values (Examples 2 and 3 have n − 1 or n − 2 equal ones) leave the basis of
their eigenspace free, and the non-linear dynamics depend on it: θ = ½ Σ w_λ² v_λ is a different
model in each basis. ``DEGENERATE_BASES`` names the choices (see ``quadratic_modes``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEGENERATE_BASES = ("random", "label_aligned", "lapack")


@dataclass(frozen=True)
class QuadraticModes:
    """The SVD set-up of §5.4.1 in the full bases (d modes; μ_λ = 0 beyond the rank)."""

    mu: np.ndarray  # (d,) μ_λ, non-increasing, 0 beyond the rank r_X
    left: np.ndarray  # (n, r) u_λ for the r modes with μ_λ > 0
    right: np.ndarray  # (d, d) v_λ (columns), an orthonormal basis of R^d
    label_components: np.ndarray  # (r,) y_λ = u_λᵀy ≥ 0
    theta0: np.ndarray  # (d,) θ⁰_λ = σ/2 (w⁰ = √σ·1)
    labels: np.ndarray  # (n,) y

    @property
    def rank(self) -> int:
        return self.left.shape[1]

    @property
    def theta_star(self) -> np.ndarray:
        """θ*_λ = y_λ/√μ_λ on the range of Xᵀ, θ⁰_λ on the null space of X (footnote 4)."""
        star = self.theta0.copy()
        star[: self.rank] = self.label_components / np.sqrt(self.mu[: self.rank])
        return star

    @property
    def y_tilde(self) -> np.ndarray:
        """ỹ_λ = √μ_λ y_λ, the components of Xᵀy in the basis v_λ (0 on the null space)."""
        tilde = np.zeros_like(self.mu)
        tilde[: self.rank] = np.sqrt(self.mu[: self.rank]) * self.label_components
        return tilde

    def theta(self, modes: np.ndarray) -> np.ndarray:
        """θ = Σ_λ θ_λ v_λ from mode coordinates (..., d)."""
        return modes @ self.right.T

    def predictions(self, modes: np.ndarray) -> np.ndarray:
        """f(x_i) = x_iᵀθ = Σ_λ √μ_λ u_{iλ} θ_λ for mode coordinates (T, d): (T, n)."""
        r = self.rank
        return (modes[..., :r] * np.sqrt(self.mu[:r])) @ self.left.T


def quadratic_modes(x: np.ndarray, y: np.ndarray, sigma: float, degenerate_basis: str = "random", seed: int = 0,
                    rtol: float = 1e-9) -> QuadraticModes:
    """The modes of (X, y) with the sign convention y_λ ≥ 0 and θ⁰ from w⁰ = √σ·1.

    Singular values equal within ``rtol``·√μ_1 form a degenerate eigenspace; its basis is
    ``random``: a seeded uniformly random rotation of it (an arbitrary basis, as any SVD routine
    returns, but the same on every machine); ``label_aligned``: the label's projection on the
    eigenspace is one basis vector and the others are orthogonal to y (so y loads one mode per
    eigenspace: the unique choice with the fewest label modes); ``lapack``: the basis
    ``numpy.linalg.svd`` returns (the author's code; it depends on the LAPACK build)."""
    if degenerate_basis not in DEGENERATE_BASES:
        raise ValueError(f"degenerate_basis {degenerate_basis!r}: expected one of {DEGENERATE_BASES}")
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n, d = x.shape
    left, singular, right_t = np.linalg.svd(x, full_matrices=True)
    rank = int(np.sum(singular > rtol * singular[0])) if singular.size else 0
    left, right = left[:, :rank], right_t.T.copy()
    rng = np.random.default_rng(seed)
    for group in degenerate_groups(singular[:rank], rtol):
        rotation = _eigenspace_rotation(left[:, group], y, degenerate_basis, rng)
        left[:, group] = left[:, group] @ rotation
        right[:, group] = right[:, group] @ rotation
    signs = np.where(left.T @ y < 0, -1.0, 1.0)  # footnote 3: reflect (u, v) to make y_λ ≥ 0
    left *= signs
    right[:, :rank] *= signs
    mu = np.zeros(d)
    mu[:rank] = singular[:rank] ** 2
    return QuadraticModes(mu=mu, left=left, right=right, label_components=left.T @ y,
                          theta0=np.full(d, sigma / 2), labels=y)


def degenerate_groups(singular: np.ndarray, rtol: float) -> list[np.ndarray]:
    """Runs of equal singular values (within ``rtol`` of the largest), of two or more modes."""
    if singular.size < 2:
        return []
    breaks = np.flatnonzero(np.abs(np.diff(singular)) > rtol * singular[0]) + 1
    return [group for group in np.split(np.arange(singular.size), breaks) if group.size > 1]


def _eigenspace_rotation(basis: np.ndarray, y: np.ndarray, choice: str, rng: np.random.Generator) -> np.ndarray:
    """An orthogonal k × k matrix R: the eigenspace's new basis is ``basis`` @ R."""
    k = basis.shape[1]
    if choice == "lapack":
        return np.eye(k)
    if choice == "random":
        q, r = np.linalg.qr(rng.standard_normal((k, k)))
        return q * np.sign(np.diag(r))  # Haar-distributed
    components = basis.T @ y
    norm = np.linalg.norm(components)
    if norm == 0.0:
        return np.eye(k)
    # the Householder reflection that maps e_1 to the label's direction c (and c to e_1)
    reflector = components / norm - np.eye(k)[0]
    if np.linalg.norm(reflector) == 0.0:
        return np.eye(k)
    reflector /= np.linalg.norm(reflector)
    return np.eye(k) - 2 * np.outer(reflector, reflector)


# --- the two regimes in closed form -----------------------------------------------------------

def nonlinear_modes(theta0: np.ndarray, theta_star: np.ndarray, mu: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Prop. 5.4.1: θ_λ(t) for every time (rows) and mode (columns), θ⁰_λ > 0.

    Case θ*_λ ≠ 0: θ⁰θ*/(θ⁰ − e^{−2ỹt}(θ⁰ − θ*)), ỹ = μθ*; case θ*_λ = 0: θ⁰/(1 + 2μθ⁰t). Both are
    the one expression θ⁰ / (e^{−2μθ*t} + θ⁰ g), g = (1 − e^{−2μθ*t})/θ* (g = 2μt at θ* = 0),
    evaluated with expm1 so that a θ* of rounding size (the label-free modes of a degenerate
    eigenspace) follows the θ* = 0 case instead of cancelling to θ⁰."""
    t = np.asarray(times, dtype=np.float64)[:, None]
    rate = 2 * mu * t  # 2μt
    exponent = -rate * theta_star
    zero = theta_star == 0
    g = np.where(zero, rate, -np.expm1(exponent) / np.where(zero, 1.0, theta_star))
    return theta0 / (np.exp(exponent) + theta0 * g)


def linearised_modes(theta0: np.ndarray, theta_star: np.ndarray, mu: np.ndarray, times: np.ndarray) -> np.ndarray:
    """The lazy regime: θ_λ(t) = θ*_λ + e^{−2μ_λθ⁰_λ t}(θ⁰_λ − θ*_λ) (5.4.6 with its factor 2)."""
    t = np.asarray(times, dtype=np.float64)[:, None]
    return theta_star + np.exp(-2 * mu * theta0 * t) * (theta0 - theta_star)


REGIMES = {"linear": linearised_modes, "nonlinear": nonlinear_modes}


def mode_trajectories(modes: QuadraticModes, regime: str, times: np.ndarray) -> np.ndarray:
    """θ_λ(t) of one regime (``linear`` or ``nonlinear``): (T, d)."""
    return REGIMES[regime](modes.theta0, modes.theta_star, modes.mu, times)


def squared_errors(modes: QuadraticModes, regime: str, times: np.ndarray) -> np.ndarray:
    """Per-example squared error (f(x_i) − y_i)² over time: (T, n)."""
    return (modes.predictions(mode_trajectories(modes, regime, times)) - modes.labels) ** 2


# --- ε-convergence times (5.4.7) and sequentialisation (5.4.8) ----------------------------------

def convergence_times(theta0: np.ndarray, theta_star: np.ndarray, mu: np.ndarray,
                      epsilon: float) -> dict[str, np.ndarray]:
    """Times at which each mode with θ⁰ < θ* − ε gets ε-close, |θ_λ − θ*_λ| = ε, from the closed
    forms (NaN for the other modes):

        non-linear  t_λ = log[(θ* − θ⁰)(θ* − ε)/(ε θ⁰)] / (2ỹ_λ)   ≈ log[θ*²/(ε θ⁰)] / (2ỹ_λ)
        linear      t_λ = log[(θ* − θ⁰)/ε] / (2 μ_λ θ⁰_λ)            ≈ log[θ*/ε] / (2 μ_λ θ⁰_λ)

    (``*_approx``: the small-ε, small-θ⁰ forms). The thesis's 5.4.7 reads log[θ*/(εθ⁰)]/ỹ and
    log[θ*/ε]/(μθ⁰): the linear one lacks the factor 2 of its 5.4.6, the non-linear one differs
    from the exact time by log factors; their orderings of the modes are the same as these."""
    star, start = theta_star, theta0
    valid = (mu > 0) & (start < star - epsilon)
    with np.errstate(divide="ignore", invalid="ignore"):
        y_tilde = mu * star
        nonlinear = np.log((star - start) * (star - epsilon) / (epsilon * start)) / (2 * y_tilde)
        linear = np.log((star - start) / epsilon) / (2 * mu * start)
        nonlinear_approx = np.log(star**2 / (epsilon * start)) / (2 * y_tilde)
        linear_approx = np.log(star / epsilon) / (2 * mu * start)
    return {name: np.where(valid, value, np.nan) for name, value in
            {"nonlinear": nonlinear, "linear": linear, "nonlinear_approx": nonlinear_approx,
             "linear_approx": linear_approx}.items()}


def sequentialisation(theta_star: np.ndarray, mu: np.ndarray, theta0: np.ndarray, epsilon: float) -> np.ndarray:
    """Eq. 5.4.8 measured: S[λ, λ'] = θ_λ'(t_λ)/θ*_λ', each mode λ' of the non-linear flow at the
    time t_λ its mode λ gets ε-close (exact ``convergence_times``). For θ⁰ = σθ̃⁰ with σ → 0,
    S → 1 where ỹ_λ' > ỹ_λ and S → 0 where ỹ_λ' < ỹ_λ: modes are learned one after another.
    All modes must have θ* > 0 and θ⁰ < θ* − ε."""
    times = convergence_times(theta0, theta_star, mu, epsilon)["nonlinear"]
    if np.isnan(times).any():
        raise ValueError("sequentialisation needs θ* > 0 and θ⁰ < θ* − ε for every mode")
    return nonlinear_modes(theta0, theta_star, mu, times) / theta_star


# --- the three datasets of §5.4.4 ----------------------------------------------------------------

@dataclass(frozen=True)
class AnalyticDataset:
    """Inputs, labels and the groups the figure compares (one group per example for Example 1)."""

    x: np.ndarray  # (n, d)
    y: np.ndarray  # (n,)
    group: np.ndarray  # (n,) int: the group index of each example
    group_names: tuple[str, ...]
    kappa: np.ndarray  # (n,) the flip variable (all +1 for Example 1)


def example_1(mu: list[float]) -> AnalyticDataset:
    """Eq. 5.4.9: x_i = √μ_i e_i, y_i = μ_{n−i+1}/√μ_i (μ non-increasing, > 0): ỹ_i = μ_{n−i+1}."""
    mu = np.asarray(mu, dtype=np.float64)
    if np.any(mu <= 0) or np.any(np.diff(mu) > 0):
        raise ValueError(f"Example 1 needs μ_1 ≥ … ≥ μ_n > 0, got {mu.tolist()}")
    n = mu.size
    return AnalyticDataset(x=np.diag(np.sqrt(mu)), y=mu[::-1] / np.sqrt(mu), group=np.arange(n),
                           group_names=tuple(f"example {i + 1}" for i in range(n)), kappa=np.ones(n))


def flipped_labels(n: int, q: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels y_i = ±1 (fair coin) and κ with q entries −1 at random places (1 ≤ q < ⌈n/2⌉), from
    one seeded stream: the thesis leaves both open."""
    if not 1 <= q < -(-n // 2):
        raise ValueError(f"need 1 ≤ q < ⌈n/2⌉, got n = {n}, q = {q}")
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], size=n)
    kappa = np.ones(n)
    kappa[rng.permutation(n)[:q]] = -1.0
    return y, kappa


def example_2(n: int, q: int, eta: float, d: int, seed: int) -> AnalyticDataset:
    """Eq. 5.4.10, label noise: x_i = κ_i y_i e_1 + η e_{i+1} (d > n); κ_i = −1 marks the q noisy
    examples, whose label y_i disagrees with the shared feature e_1."""
    if d <= n:
        raise ValueError(f"Example 2 needs d > n, got d = {d}, n = {n}")
    y, kappa = flipped_labels(n, q, seed)
    x = np.zeros((n, d))
    x[:, 0] = kappa * y
    x[np.arange(n), np.arange(n) + 1] = eta
    return AnalyticDataset(x=x, y=y, group=(kappa < 0).astype(int), group_names=("clean", "noisy"), kappa=kappa)


def example_3(n: int, q: int, eta: float, d: int, spurious_scale: float, seed: int) -> AnalyticDataset:
    """Eq. 5.4.12, spurious correlation: x_i = κ_i y_i e_1 + λ y_i e_2 + η e_{i+2} (d > n + 1), λ =
    ``spurious_scale``. e_2 is the core feature (it separates every example); e_1 is the spurious
    one, agreeing with the label on the n − q majority (κ = +1) and not on the q minority (κ = −1).
    (The thesis calls e_2 spurious; its construction makes e_1 so.)"""
    if d <= n + 1:
        raise ValueError(f"Example 3 needs d > n + 1, got d = {d}, n = {n}")
    y, kappa = flipped_labels(n, q, seed)
    x = np.zeros((n, d))
    x[:, 0] = kappa * y
    x[:, 1] = spurious_scale * y
    x[np.arange(n), np.arange(n) + 2] = eta
    return AnalyticDataset(x=x, y=y, group=(kappa < 0).astype(int),
                           group_names=("with spurious (majority)", "w/o spurious (minority)"), kappa=kappa)
