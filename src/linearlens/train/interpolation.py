"""Straight lines between trained networks (linear mode connectivity, Frankle et al. 2020): the
telescoping lens's children and Karp ch. 2's pairs A(S), A(S′)."""

from __future__ import annotations

from torch import Tensor


def interpolate(first: dict[str, Tensor], second: dict[str, Tensor], alpha: float) -> dict[str, Tensor]:
    """α·first + (1 − α)·second for every floating tensor of a state dict (weights and BatchNorm
    running statistics, as FDRC20); integer buffers (batch counts) are taken from ``first``."""
    return {name: alpha * first[name] + (1 - alpha) * second[name] if first[name].is_floating_point()
            else first[name].clone() for name in first}
