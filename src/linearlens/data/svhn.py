"""Reader for the SVHN cropped-digit .mat files (train, test, extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.io


def read_svhn_mat(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Images as uint8 (N, 3, 32, 32) and labels 0..9 (the file stores digit 0 as label 10)."""
    contents = scipy.io.loadmat(str(path))
    images = np.transpose(contents["X"], (3, 2, 0, 1)).astype(np.uint8)  # (H, W, C, N) -> NCHW
    labels = contents["y"].reshape(-1).astype(np.int64) % 10
    return images, labels
