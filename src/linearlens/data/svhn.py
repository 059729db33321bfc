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


def load_svhn(raw_dir: Path, include_extra: bool = False) -> dict[str, np.ndarray]:
    arrays = {}
    splits = ["train", "test"] + (["extra"] if include_extra else [])
    for split in splits:
        arrays[f"x_{split}"], arrays[f"y_{split}"] = read_svhn_mat(raw_dir / f"{split}_32x32.mat")
    return arrays
