"""Eigenfunctions of the tangent kernel sampled on evaluation points (George thesis §6.2, App. B.1).

The eigenfunctions u_j(x) = λ_j^{-1/2} ⟨v_j, Φ_w(x)⟩ of the tangent kernel (eq. 6.2.3) are sampled
on N points: the sample vector of the J-th kernel principal component is the J-th eigenvector of
the N × N tangent Gram (eqs. B.1.23, B.1.30), with λ_J its eigenvalue. Grams come from the
layer-wise route of ``kernels.ntk`` (no N × P Jacobian in memory), in float64.

Sign convention: an eigenvector is defined up to its sign, so each is oriented to have a positive
sum (a positive inner product with the constant function); one whose sum is numerically zero
(|Σ u| ≤ 1e-6 ‖u‖₁) has its largest-magnitude entry positive instead. The same eigenfunction then
looks the same at every iteration of a run, and in every run.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from torch import Tensor, nn

from ..models.mlp import mlp
from ..train.runtime import seed_everything
from .alignment import centre, eigendecomposition
from .ntk import empirical_ntk

ZERO_SUM = 1e-6  # |Σ u| below this share of ‖u‖₁: the sum cannot fix the sign


def oriented(vectors: Tensor) -> Tensor:
    """Each column with the sign convention of this module (positive sum, else positive peak)."""
    sums = vectors.sum(0)
    peaks = vectors.gather(0, vectors.abs().argmax(0, keepdim=True))[0]
    undecided = sums.abs() <= ZERO_SUM * vectors.abs().sum(0)
    reference = torch.where(undecided, peaks, sums)
    return vectors * torch.where(reference < 0, -1.0, 1.0).to(vectors)


def eigenpairs(gram: Tensor, k: int | None = None) -> tuple[Tensor, Tensor]:
    """All eigenvalues of a symmetric Gram, non-increasing, and the top ``k`` eigenvectors (all
    when None) as unit-norm, oriented columns (N, k)."""
    values, vectors = eigendecomposition(gram)
    return values, oriented(vectors[:, :k] if k is not None else vectors)


def eigenvalue_ratios(values: Tensor) -> Tensor:
    """λ_j / λ_1 for j = 1..N (entry j − 1 holds λ_j/λ_1: the thesis's λ20/λ1 is entry 19)."""
    return values / values[0]


@torch.no_grad()
def tangent_eigenfunctions(model: nn.Module, points: Tensor, k: int | None = None, *, centred: bool = True,
                           output: int = 0) -> tuple[Tensor, Tensor]:
    """Spectrum and top-``k`` eigenvectors of the scalar tangent Gram K_aa(points, points) of
    output ``a`` (eq. 6.2.3, sampled), computed in float64 on a copy of the model. ``centred``: the
    Gram of the centred tangent features Φ(x) − E_x Φ(x) over the points, C K C (the thesis's
    reported results, §6.3); else K itself, whose top eigenvector is then close to the mean mode."""
    exact = copy.deepcopy(model).to(torch.float64)
    gram = empirical_ntk(exact, points.to(torch.float64), output=output)
    return eigenpairs(centre(gram) if centred else gram, k)


def fourier_magnitudes(vectors: Tensor) -> Tensor:
    """|DFT| of each column (a signal on N equally spaced points) at frequencies 0..⌊N/2⌋ (cycles
    over the N points): (⌊N/2⌋ + 1, k). Real signals' negative frequencies mirror these."""
    return torch.fft.rfft(vectors, dim=0).abs()


def dominant_frequencies(vectors: Tensor) -> Tensor:
    """The frequency of each column's largest |DFT| coefficient (the lowest one on a tie)."""
    return fourier_magnitudes(vectors).argmax(0)


def random_mlp_spectrum(depth: int, width: int, n_points: int, seed: int, *, low: float = 0.0,
                        high: float = 1.0, activation: str = "relu", centred: bool = True) -> dict[str, np.ndarray]:
    """Spectral bias at initialisation (Fig B.2): the scalar tangent Gram of a random MLP (``depth``
    Linear layers, ``width`` hidden units, PyTorch's default init drawn from ``seed``) on
    ``n_points`` equally spaced points of [low, high]; its spectrum, eigenvectors, their |DFT| and
    dominant frequencies."""
    seed_everything(seed)
    model = mlp(1, [width] * (depth - 1), 1, activation)
    x = torch.linspace(low, high, n_points, dtype=torch.float64)[:, None]
    values, vectors = tangent_eigenfunctions(model, x, centred=centred)
    return {"x": x[:, 0].numpy(), "eigenvalues": values.numpy(), "ratios": eigenvalue_ratios(values).numpy(),
            "eigenvectors": vectors.numpy(), "fourier": fourier_magnitudes(vectors).numpy(),
            "dominant_frequency": dominant_frequencies(vectors).numpy(),
            "parameters": np.asarray(sum(p.numel() for p in model.parameters()))}
