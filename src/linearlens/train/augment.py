"""Data augmentation on batches of images (N, C, H, W) or signals (N, C, L), drawn from an
explicit generator so that a run's augmentation is reproducible and resumable."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor


def random_crop(x: Tensor, padding: int, generator: torch.Generator) -> Tensor:
    """Zero-pad every spatial side by ``padding``, then crop back to the original size at a
    random offset per example (a random shift of up to ``padding`` along each axis). Offsets are
    drawn axis by axis, one per example."""
    spatial = x.shape[2:]
    padded = F.pad(x, (padding, padding) * len(spatial))
    ones = [1] * len(spatial)
    index = [torch.arange(len(x), device=x.device).view(-1, 1, *ones),
             torch.arange(x.shape[1], device=x.device).view(1, -1, *ones)]
    for axis, size in enumerate(spatial):
        offsets = torch.randint(0, 2 * padding + 1, (len(x),), generator=generator).to(x.device)
        shape = [len(x), 1, *ones]
        shape[2 + axis] = size
        index.append((offsets[:, None] + torch.arange(size, device=x.device)).view(shape))
    return padded[tuple(index)]


def random_flip(x: Tensor, generator: torch.Generator) -> Tensor:
    """Mirror each example along its last axis with probability 1/2."""
    flip = (torch.rand(len(x), generator=generator) < 0.5).to(x.device)
    return torch.where(flip.view(-1, *[1] * (x.dim() - 1)), x.flip(-1), x)


def augment(x: Tensor, crop_padding: int, flip: bool, generator: torch.Generator) -> Tensor:
    """Random crops after zero padding (none when ``crop_padding`` is 0), then random flips."""
    if crop_padding:
        x = random_crop(x, crop_padding, generator)
    if flip:
        x = random_flip(x, generator)
    return x
