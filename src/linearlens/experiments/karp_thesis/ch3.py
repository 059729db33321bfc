"""Chapter 3 and Appendix B, local signal adaptivity (a CNN against its tangent kernel): the runs
behind Figs 3.2-3.5 and Tables 3.1, B.1 (Fig 3.1 is photographs, listed only)."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor

from ...analysis.karp_thesis.ch3 import TOY_COLUMNS, toy_noise_std
from ...train.progress import Progress

LOG = logging.getLogger(__name__)

# --- Fig 3.3: the LSA toy model (Sec 3.3, Algorithm 3.1) ---
#
# Data (Sec 3.3, with the authors' code's conventions, spec §2.1, §2.4 and C3-2): X has k rows of d
# dimensions; y = ±1 with probability 1/2; one row, chosen uniformly, is the signal y·w* with
# w* = (1, …, 1)/√d; the k − 1 others are noise rows N(0, σ²I_d), σ = multiplier · log(k)/√k
# (trap C3-1). Model: f_{w,b}(X) = Σ_i φ_b(⟨w, X_i⟩), φ_b(u) = ReLU(u + b) − ReLU(−u + b); logistic
# loss. Training (Algorithm 3.1): minibatch SGD on fresh samples every step, η_w for w and η_b for
# b; w₀ a uniformly random direction of norm ``init_norm`` (the code's 1e-6; the theory's
# N(0, δ²/(kd)) with δ = k^−100 is numerically unusable), b₀ = ``init_bias`` (0; the code draws
# N(0, 1e-12)).
#
# Two routes draw the same distribution of every step (``route``):
# - ``direct`` draws every X (n·k·d normals) and takes the analytic gradient below.
# - ``projected`` (the default) draws only what the step depends on. Write each
#   noise row as X_i = a_i ŵ + Z_i with ŵ = w/‖w‖: a_i ~ N(0, σ²) and Z_i ~ N(0, σ²(I − ŵŵᵀ)) are
#   independent (an isotropic Gaussian's components along and across ŵ). The output, every
#   indicator and dℓ/df depend on u_i = ⟨w, X_i⟩ = ‖w‖a_i and on the signal row's u = y·(w·w*) only,
#   so the step draws the a_i (as z_i = a_i/σ); the Z_i enter grad_w only through the sum
#   Σ_n g_n Σ_i c_ni Z_ni (c from ``indicator_counts``), which, given every a and y, is exactly
#   N(0, σ² Σ_n Σ_i (g_n c_ni)² (I − ŵŵᵀ)): one d-dimensional standard normal draw, projected across
#   ŵ and scaled. The signal row's position does not matter (f sums over rows). Evaluation needs f
#   only, so it draws the a_i alone. Exact in distribution, not an approximation
#   (tests/test_karp_ch3_lsa_toy.py checks it against the direct route); a step costs a ninth of the
#   direct route's at the thesis's settings (2.7 against 27 CPU-ms).

TOY_ROUTES = ("projected", "direct")
EVAL_CHUNK = 1000  # test examples drawn and scored at a time (bounds the direct route's memory)


def signal_direction(d: int, dtype: torch.dtype = torch.float32) -> Tensor:
    """w* = (1, …, 1)/√d, the authors' code's unit signal."""
    return torch.full((d,), 1.0 / math.sqrt(d), dtype=dtype)


def phi(u: Tensor, b: Tensor | float) -> Tensor:
    """φ_b(u) = ReLU(u + b) − ReLU(−u + b): soft-thresholding when b < 0."""
    return F.relu(u + b) - F.relu(b - u)


def logistic_loss(f: Tensor, y: Tensor) -> Tensor:
    """log(1 + e^{−y f}) per example."""
    return F.softplus(-y * f)


def random_labels(n: int, generator: torch.Generator, dtype: torch.dtype = torch.float32) -> Tensor:
    return torch.randint(0, 2, (n,), generator=generator).to(dtype) * 2 - 1


@dataclass
class LsaBatch:
    """n examples drawn in full (the direct route)."""

    x: Tensor  # (n, k, d)
    y: Tensor  # (n,), ±1
    signal_rows: Tensor  # (n,), the row of each example that holds y·w*


def lsa_samples(n: int, k: int, d: int, sigma: float, generator: torch.Generator,
                dtype: torch.dtype = torch.float32) -> LsaBatch:
    """Fresh examples of the LSA distribution: k rows of N(0, σ²I_d), one uniformly chosen row of
    each replaced by y·w*."""
    y = random_labels(n, generator, dtype)
    x = torch.randn(n, k, d, generator=generator, dtype=dtype).mul_(sigma)
    rows = torch.randint(0, k, (n,), generator=generator)
    x[torch.arange(n), rows] = y[:, None] * signal_direction(d, dtype)
    return LsaBatch(x, y, rows)


def lsa_output(w: Tensor, b: Tensor | float, x: Tensor) -> Tensor:
    """f_{w,b}(X) = Σ_i φ_b(⟨w, X_i⟩) for every example of x (…, k, d)."""
    return phi(x @ w, b).sum(-1)


def indicator_counts(u: Tensor, b: Tensor | float) -> tuple[Tensor, Tensor]:
    """dφ_b/du = 1{u + b > 0} + 1{−u + b > 0} and dφ_b/db = 1{u + b > 0} − 1{−u + b > 0}. The two
    indicators add as NUMBERS: as booleans their sum is a logical OR, wrong where both hold (b > 0,
    |u| < b, where dφ/du = 2)."""
    up, down = (u + b > 0).to(u.dtype), (b - u > 0).to(u.dtype)
    return up + down, up - down


def lsa_gradients(w: Tensor, b: Tensor, batch: LsaBatch) -> tuple[Tensor, Tensor, Tensor]:
    """The analytic gradients of the batch's mean logistic loss in w and b, and that loss
    (spec §2.1): with g_n = dℓ/df = −y_n σ(−y_n f_n), grad_w = mean_n g_n Σ_i c_ni X_ni and
    grad_b = mean_n g_n Σ_i s_ni (c, s from ``indicator_counts``)."""
    u = batch.x @ w
    f = phi(u, b).sum(-1)
    g = -batch.y * torch.sigmoid(-batch.y * f)
    slope, shift = indicator_counts(u, b)
    n = len(batch.y)
    grad_w = torch.einsum("n,nk,nkd->d", g, slope, batch.x) / n
    grad_b = (g * shift.sum(-1)).mean()
    return grad_w, grad_b, logistic_loss(f, batch.y).mean()


@dataclass
class ProjectedBatch:
    """n examples as the projected route draws them (see the comment above)."""

    z: Tensor  # (n, k − 1): each noise row's coordinate along ŵ in units of σ (a_i = σ·z_i), N(0, 1)
    y: Tensor  # (n,), ±1
    across: Tensor  # (d,): a standard normal draw for the noise rows' components across ŵ


def projected_samples(n: int, k: int, d: int, generator: torch.Generator,
                      dtype: torch.dtype = torch.float32) -> ProjectedBatch:
    y = random_labels(n, generator, dtype)
    z = torch.randn(n, k - 1, generator=generator, dtype=dtype)
    return ProjectedBatch(z, y, torch.randn(d, generator=generator, dtype=dtype))


def unit_direction(w: Tensor) -> Tensor:
    """ŵ = w/‖w‖ (the first axis for w = 0, where every direction gives the same distribution)."""
    norm = w.norm()
    return w / norm if norm > 0 else F.one_hot(torch.tensor(0), len(w)).to(w.dtype)


@dataclass
class NoiseSums:
    """Per example, sums over its noise rows at u_i = scale·z_i (c, s from ``indicator_counts``)."""

    output: Tensor  # Σ_i φ_b(u_i)
    slope_z: Tensor  # Σ_i c_i z_i
    shift: Tensor  # Σ_i s_i
    slope_squared: Tensor  # Σ_i c_i²


def noise_sums(z: Tensor, scale: float, b: float) -> NoiseSums:
    """``NoiseSums`` of the rows z (…, rows). φ_b(u) = c·u + s·b for every b; for b ≤ 0 (after the
    first steps, always) φ_b is soft-thresholding at |b|, which one fused pass computes."""
    return _noise_sums_thresholded(z, scale, b) if b <= 0 and scale > 0 else _noise_sums_general(z, scale, b)


def _noise_sums_thresholded(z: Tensor, scale: float, b: float) -> NoiseSums:
    """b ≤ 0: φ_b(u) = scale·softshrink(z, |b|/scale), c = |sign(φ)| ∈ {0, 1} and s = sign(φ); a
    third of the general path's passes over the rows."""
    threshold = -b / scale
    shrunk = F.softshrink(z, threshold)
    signs = torch.sign(shrunk)
    shift = signs.sum(-1)
    return NoiseSums(scale * shrunk.sum(-1), shrunk.sum(-1) + threshold * shift, shift, signs.abs().sum(-1))


def _noise_sums_general(z: Tensor, scale: float, b: float) -> NoiseSums:
    u = scale * z
    slope, shift = indicator_counts(u, b)
    return NoiseSums((slope * u + shift * b).sum(-1), (slope * z).sum(-1), shift.sum(-1), (slope * slope).sum(-1))


def projected_output(w: Tensor, b: Tensor | float, z: Tensor, y: Tensor, sigma: float, w_star: Tensor) -> Tensor:
    """f of examples given as their noise rows' coordinates along ŵ (in units of σ) and labels."""
    return noise_sums(z, sigma * float(w.norm()), float(b)).output + phi(y * (w @ w_star), b)


def projected_gradients(w: Tensor, b: Tensor, batch: ProjectedBatch, sigma: float,
                        w_star: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """``lsa_gradients`` of a batch drawn by the projected route: the same distribution."""
    direction = unit_direction(w)
    sums = noise_sums(batch.z, sigma * float(w.norm()), float(b))
    u_signal = batch.y * (w @ w_star)
    f = sums.output + phi(u_signal, b)
    g = -batch.y * torch.sigmoid(-batch.y * f)
    slope_signal, shift_signal = indicator_counts(u_signal, b)
    n = len(batch.y)
    along = sigma * (g @ sums.slope_z)  # Σ_n g_n Σ_i c_ni a_ni
    signal = (g * slope_signal) @ batch.y  # Σ_n g_n c_n y_n, from the signal rows y·w*
    spread = sigma * torch.sqrt((g * g) @ sums.slope_squared)  # std of Σ_n g_n Σ_i c_ni Z_ni across ŵ
    across = batch.across - (batch.across @ direction) * direction
    grad_w = (along * direction + signal * w_star + spread * across) / n
    grad_b = (g * (sums.shift + shift_signal)).mean()
    return grad_w, grad_b, logistic_loss(f, batch.y).mean()


@dataclass
class LsaState:
    w: Tensor
    b: Tensor


def initial_state(spec: dict, generator: torch.Generator, dtype: torch.dtype = torch.float32) -> LsaState:
    """w₀ uniform on the sphere of radius ``init_norm``, b₀ = ``init_bias``."""
    w = torch.randn(spec["d"], generator=generator, dtype=dtype)
    return LsaState(w * (spec["init_norm"] / w.norm()), torch.tensor(float(spec["init_bias"]), dtype=dtype))


def sgd_step(state: LsaState, spec: dict, generator: torch.Generator, w_star: Tensor) -> Tensor:
    """One step of Algorithm 3.1 on ``batch_size`` fresh samples (drawn by the spec's route); the
    batch's loss before the step."""
    sigma, n = toy_noise_std(spec), spec["batch_size"]
    if spec["route"] == "direct":
        batch = lsa_samples(n, spec["k"], spec["d"], sigma, generator, state.w.dtype)
        grad_w, grad_b, loss = lsa_gradients(state.w, state.b, batch)
    else:
        batch = projected_samples(n, spec["k"], spec["d"], generator, state.w.dtype)
        grad_w, grad_b, loss = projected_gradients(state.w, state.b, batch, sigma, w_star)
    state.w = state.w - spec["lr_w"] * grad_w
    state.b = state.b - spec["lr_b"] * grad_b
    return loss


def evaluate(state: LsaState, spec: dict, generator: torch.Generator, w_star: Tensor) -> tuple[float, float]:
    """Test accuracy mean(y·f ≥ 0) (the code's: f = 0 counts as correct) and mean logistic loss on
    ``test_samples`` fresh examples."""
    sigma, correct, loss, left = toy_noise_std(spec), 0.0, 0.0, spec["test_samples"]
    while left:
        n = min(left, EVAL_CHUNK)
        if spec["route"] == "direct":
            batch = lsa_samples(n, spec["k"], spec["d"], sigma, generator, state.w.dtype)
            f, y = lsa_output(state.w, state.b, batch.x), batch.y
        else:
            y = random_labels(n, generator, state.w.dtype)
            z = torch.randn(n, spec["k"] - 1, generator=generator, dtype=state.w.dtype)
            f = projected_output(state.w, state.b, z, y, sigma, w_star)
        correct += float((y * f >= 0).sum())
        loss += float(logistic_loss(f, y).sum())
        left -= n
    return correct / spec["test_samples"], loss / spec["test_samples"]


def toy_generators(seed: int) -> tuple[torch.Generator, torch.Generator]:
    """Two streams from the seed: initialisation and training batches; test samples. The training
    trajectory does not depend on how often or on how many samples it is evaluated."""
    train, test = np.random.SeedSequence(seed).generate_state(2)
    return torch.Generator().manual_seed(int(train)), torch.Generator().manual_seed(int(test))


def toy_run(spec: dict, log: logging.Logger = LOG) -> pd.DataFrame:
    """Fig 3.3's run: ``steps`` SGD steps from the seed's w₀, evaluated at step 0, every
    ``eval_every`` steps and at the end; one row per evaluation (``TOY_COLUMNS``), float32."""
    if spec["route"] not in TOY_ROUTES:
        raise ValueError(f"toy route {spec['route']!r}: expected one of {TOY_ROUTES}")
    train, test = toy_generators(spec["seed"])
    w_star = signal_direction(spec["d"])
    state = initial_state(spec, train)
    peak, positive_steps, positive_ratio, loss = float(state.b), 0, 0.0, float("nan")
    rows, progress = [], Progress(spec["steps"], name="LSA toy SGD", logger=log)
    progress.start(0, f"k = {spec['k']}, d = {spec['d']}, σ = {toy_noise_std(spec):.4f}, {spec['route']} route")
    for step in range(spec["steps"] + 1):
        if step % spec["eval_every"] == 0 or step == spec["steps"]:
            accuracy, test_loss = evaluate(state, spec, test, w_star)
            along, b = float(state.w @ w_star), float(state.b)
            rows.append({"step": step, "w_dot_wstar": along,
                         "w_perp_norm": float((state.w - along * w_star).norm()), "w_norm": float(state.w.norm()),
                         "b": b, "ratio": abs(b) / along if along else float("nan"), "test_accuracy": accuracy,
                         "test_loss": test_loss, "train_loss": loss, "b_peak": peak,
                         "b_positive_steps": positive_steps, "positive_ratio_peak": positive_ratio})
        if step == spec["steps"]:
            break
        loss = float(sgd_step(state, spec, train, w_star))
        b = float(state.b)
        peak = max(peak, b)
        if b > 0:
            positive_steps += 1
            along = float(state.w @ w_star)
            if along > 0:
                positive_ratio = max(positive_ratio, b / along)
        progress.step(step + 1, loss)
    progress.end(spec["steps"], "done")
    return pd.DataFrame(rows, columns=list(TOY_COLUMNS))
