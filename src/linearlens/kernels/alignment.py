"""Kernel tools: centring, kernel alignment and CKA, spectra, effective rank, kernel regression.

Grams are (n, n) matrices or (n, c, n, c) multi-output blocks; a block Gram is read as the
(n·c, n·c) matrix with examples outer and outputs inner.
"""

from __future__ import annotations

import torch
from torch import Tensor


def as_matrix(gram: Tensor) -> Tensor:
    """(n, c, n, c) blocks as an (n·c, n·c) matrix; an (n, n) Gram unchanged."""
    if gram.dim() == 4:
        n, c = gram.shape[:2]
        return gram.reshape(n * c, n * c)
    return gram


def centre(gram: Tensor, per_output: bool = True) -> Tensor:
    """The Gram of centred tangent features.

    per_output=True centres over the examples separately for each output, Φ(x) − E_x Φ(x)
    (George thesis code); False centres the (n·c, n·c) matrix with C = I − 11ᵀ/(n·c) (eq. 6.3.3).
    """
    if gram.dim() == 2 or not per_output:
        matrix = as_matrix(gram)
        centred = matrix - matrix.mean(0, keepdim=True)
        centred = centred - centred.mean(1, keepdim=True)
        return centred.reshape(gram.shape)
    centred = gram - gram.mean(0, keepdim=True)
    return centred - centred.mean(2, keepdim=True)


def alignment(gram_a: Tensor, gram_b: Tensor, centred: bool = True, per_output: bool = True) -> Tensor:
    """Kernel alignment ⟨A, B⟩_F / (‖A‖_F ‖B‖_F); with ``centred``, CKA (Cortes et al. 2012)."""
    if centred:
        gram_a, gram_b = centre(gram_a, per_output), centre(gram_b, per_output)
    a, b = as_matrix(gram_a), as_matrix(gram_b)
    return (a * b).sum() / (torch.linalg.matrix_norm(a) * torch.linalg.matrix_norm(b))


def target_gram(labels: Tensor, num_classes: int | None = None) -> Tensor:
    """K_Y = Y Yᵀ for integer labels, in the layout of the NTK: (n, c, n, c) from one-hot Y when
    ``num_classes`` is given, else the (n, n) Gram of the label values."""
    if num_classes is None:
        y = labels.reshape(-1, 1).to(torch.get_default_dtype())
        return y @ y.T
    one_hot = torch.nn.functional.one_hot(labels.long(), num_classes).to(torch.get_default_dtype())
    return torch.einsum("ia,jb->iajb", one_hot, one_hot)


def target_alignment(gram: Tensor, labels: Tensor, centred: bool = True, per_output: bool = True) -> Tensor:
    """Alignment of a Gram with its labels' Gram (CKA(K, K_Y) when centred)."""
    num_classes = gram.shape[1] if gram.dim() == 4 else None
    target = target_gram(labels, num_classes).to(gram)
    return alignment(gram, target, centred, per_output)


def eigenvalues(gram: Tensor) -> Tensor:
    """The spectrum of a symmetric Gram, non-increasing."""
    return torch.linalg.eigvalsh(as_matrix(gram)).flip(0)


def eigendecomposition(gram: Tensor) -> tuple[Tensor, Tensor]:
    """Eigenvalues of a symmetric Gram, non-increasing, and its unit eigenvectors as columns in
    the same order."""
    values, vectors = torch.linalg.eigh(as_matrix(gram))
    return values.flip(0), vectors.flip(1)


def effective_rank(gram_or_eigenvalues: Tensor) -> Tensor:
    """exp of the entropy of the normalised spectrum (Roy & Vetterli 2007), in [1, rank]."""
    values = gram_or_eigenvalues if gram_or_eigenvalues.dim() == 1 else eigenvalues(gram_or_eigenvalues)
    mass = values.clamp(min=0) / values.clamp(min=0).sum()
    mass = mass[mass > 0]
    return torch.exp(-(mass * mass.log()).sum())


def trace_ratios(gram_or_eigenvalues: Tensor) -> Tensor:
    """T_k = Σ_{j<k} λ_j / Σ_j λ_j for k = 1..r (the share of the k largest eigenvalues)."""
    values = gram_or_eigenvalues if gram_or_eigenvalues.dim() == 1 else eigenvalues(gram_or_eigenvalues)
    cumulative = values.cumsum(0)
    return cumulative / cumulative[-1]  # T_r = 1 exactly (a separate sum may differ from the cumsum by an ulp)


def kernel_regression(gram_train: Tensor, gram_test_train: Tensor, y_train: Tensor,
                      ridge: float = 0.0) -> Tensor:
    """Predictions K(X*, X)(K(X, X) + ridge·I)⁻¹ y of kernel (ridge) regression on scalar Grams."""
    system = gram_train + ridge * torch.eye(len(gram_train), dtype=gram_train.dtype, device=gram_train.device)
    return gram_test_train @ torch.linalg.solve(system, y_train.to(gram_train))
