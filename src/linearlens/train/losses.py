"""Squared losses with their scale made explicit, because the telescoping smoother must use the
exact gradient scale of training: ℓ = (κ/2)(f − y)² averaged over the batch, with κ = 1 for the
paper's ½(y − f)² ("half_squared") and κ = 2 for torch's MSELoss ("squared")."""

from __future__ import annotations

from torch import Tensor

LOSS_SCALES = {"half_squared": 1.0, "squared": 2.0}


def squared_loss(predictions: Tensor, targets: Tensor, kind: str) -> Tensor:
    if kind not in LOSS_SCALES:
        raise ValueError(f"loss must be one of {sorted(LOSS_SCALES)}, got {kind!r}")
    return 0.5 * LOSS_SCALES[kind] * ((predictions.reshape(-1) - targets.reshape(-1)) ** 2).mean()


def squared_loss_of(kind: str):
    """``squared_loss`` of one scale as a (predictions, targets) loss, as learners take it."""
    if kind not in LOSS_SCALES:
        raise ValueError(f"loss must be one of {sorted(LOSS_SCALES)}, got {kind!r}")
    return lambda predictions, targets: squared_loss(predictions, targets, kind)
