"""Decoding of compressed images (JPEG, PNG) as the loaders' uint8 (3, H, W) arrays."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image


def decode_rgb(payload: bytes) -> np.ndarray:
    """An image file's bytes as uint8 (3, H, W); grayscale images are repeated to three channels."""
    with Image.open(io.BytesIO(payload)) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8).transpose(2, 0, 1)
