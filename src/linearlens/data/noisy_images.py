"""Images pasted onto larger noisy backgrounds (Karp thesis, Sec 3.6 and App. B.3-B.4): the
label-determining object is one small part of the input, the rest is noise.

An image of side a is placed on a background of side B at a top-left corner chosen per image:

- ``random_loc``: uniform over {0..B−a}², fresh for every image (train and test);
- ``random_corner``: each coordinate independently 0 or a (one of four corners when B = 2a);
- ``fixed_corner``: (a, a), the bottom-right corner when B = 2a.

Backgrounds, scaled by the noise level s (image pixels untouched, no clipping):

- ``gaussian``: i.i.d. N(0, s²) pixels, in [0, 1]-pixel units;
- ``bank``: a random image of a background bank (ImageNet "Plants" in the thesis) × s, drawn with
  replacement per example; a bank smaller than the background tiles it with independent draws;
- ``tiles``: a grid of random images of distractor classes × s (CIFAR-VEHICLES: four animal tiles
  of side a on a 2a background, the vehicle overwriting one corner quadrant).

Images of side a smaller than the source's are bilinear resizes without antialiasing (the
authors' ``tf.image.resize``; a factor-2 shrink is then the mean of each 2 x 2 block).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

PLACEMENTS = ("random_loc", "random_corner", "fixed_corner")
BACKGROUNDS = ("gaussian", "bank", "tiles")


def resized(images: np.ndarray, size: int) -> np.ndarray:
    """(N, C, H, W) images bilinearly resized to size x size (half-pixel centres, no antialias)."""
    if images.shape[-1] == size and images.shape[-2] == size:
        return images.astype(np.float32, copy=False)
    out = F.interpolate(torch.from_numpy(np.ascontiguousarray(images, dtype=np.float32)), size=(size, size),
                        mode="bilinear", align_corners=False, antialias=False)
    return out.numpy()


def placement_offsets(n: int, image_size: int, background_size: int, placement: str,
                      rng: np.random.Generator) -> np.ndarray:
    """(n, 2) top-left corners (row, column) of the images on their backgrounds."""
    room = background_size - image_size
    if room < 0:
        raise ValueError(f"an image of side {image_size} does not fit a background of side {background_size}")
    if placement == "random_loc":
        return rng.integers(0, room + 1, size=(n, 2))
    if placement == "random_corner":
        if image_size > room:
            raise ValueError(f"random_corner places at 0 or {image_size}: the background must be at least "
                             f"{2 * image_size} wide, got {background_size}")
        return image_size * rng.integers(0, 2, size=(n, 2))
    if placement == "fixed_corner":
        if image_size > room:
            raise ValueError(f"fixed_corner places at ({image_size}, {image_size}): the background must be at "
                             f"least {2 * image_size} wide, got {background_size}")
        return np.full((n, 2), image_size)
    raise ValueError(f"placement must be one of {PLACEMENTS}, got {placement!r}")


def pasted(backgrounds: np.ndarray, images: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each image written over its background at its offset (a copy of the backgrounds)."""
    out = backgrounds.copy()
    side = images.shape[-1]
    for index, (row, column) in enumerate(offsets):
        out[index, :, row:row + side, column:column + side] = images[index]
    return out


def gaussian_backgrounds(n: int, channels: int, size: int, level: float, rng: np.random.Generator) -> np.ndarray:
    return level * rng.standard_normal((n, channels, size, size), dtype=np.float32)


def tiled(pool: np.ndarray, n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """n backgrounds of side ``size`` covered by a grid of random images of ``pool`` (drawn with
    replacement, independently per cell), cut to size where the grid overshoots it."""
    tile = pool.shape[-1]
    cells = -(-size // tile)
    out = np.empty((n, pool.shape[1], cells * tile, cells * tile), dtype=np.float32)
    for row in range(cells):
        for column in range(cells):
            out[:, :, row * tile:(row + 1) * tile, column * tile:(column + 1) * tile] = \
                pool[rng.integers(0, len(pool), size=n)]
    return out[:, :, :size, :size]


def noisy_split(images: np.ndarray, background: dict, level: float, placement: str, background_size: int,
                rng: np.random.Generator, pool: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One split's images (already at their final side) placed on backgrounds of ``background``'s
    kind at noise level ``level``, and where each was placed; ``pool`` is the bank or the
    distractor tiles."""
    n, channels = len(images), images.shape[1]
    kind = background["kind"]
    if kind == "gaussian":
        backgrounds = gaussian_backgrounds(n, channels, background_size, level, rng)
    elif kind in ("bank", "tiles"):
        if pool is None:
            raise ValueError(f"a {kind} background needs its pool of images")
        backgrounds = level * tiled(pool, n, background_size, rng)
    else:
        raise ValueError(f"background kind must be one of {BACKGROUNDS}, got {kind!r}")
    offsets = placement_offsets(n, images.shape[-1], background_size, placement, rng)
    return pasted(backgrounds.astype(np.float32), images.astype(np.float32), offsets), offsets


def grouped_labels(labels: np.ndarray, classes: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """(which examples are kept, their new labels): label i for the source classes in group i."""
    new = np.full(labels.shape, -1, dtype=np.int64)
    for index, group in enumerate(classes):
        new[np.isin(labels, group)] = index
    keep = new >= 0
    return keep, new[keep]


def load_background_bank(raw_dir) -> dict[str, np.ndarray]:
    """The authors' background bank (``imagenet_plants.npz``: one array, (N, 32, 32, 3) channels
    last) as unlabelled images (y = 0), (N, 3, 32, 32) with pixels in [0, 1] (bytes, or any values
    past 1, are read as 0..255)."""
    from pathlib import Path

    path = Path(raw_dir) / "imagenet_plants.npz"
    with np.load(path) as archive:
        if "arr_0" not in archive.files:
            raise ValueError(f"{path}: expected the array arr_0 (the authors' bank), found {archive.files}")
        bank = archive["arr_0"]
    if bank.ndim != 4 or bank.shape[-1] != 3:
        raise ValueError(f"{path}: expected (N, H, W, 3) images, got shape {bank.shape}")
    pixels = bank.transpose(0, 3, 1, 2).astype(np.float64)
    if np.issubdtype(bank.dtype, np.integer) or pixels.max() > 1.0:
        pixels /= 255.0
    return {"x": pixels, "y": np.zeros(len(bank), dtype=np.int64)}
