"""Reader for the SVHN cropped-digit .mat files (train, test, extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.io

from .idx import damaged_download


def read_svhn_mat(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Images as uint8 (N, 3, 32, 32) and labels 0..9 (the file stores digit 0 as label 10)."""
    try:
        contents = scipy.io.loadmat(str(path))
    except FileNotFoundError:
        raise
    # scipy's errors for a cut-off or corrupt file name neither the file nor the cause
    except (OSError, ValueError, IndexError, EOFError, scipy.io.matlab.MatReadError) as error:
        raise damaged_download(path, f"not a complete MATLAB 5 file ({type(error).__name__}: {error})") from error
    missing = {"X", "y"} - set(contents)
    if missing:
        raise damaged_download(path, f"an SVHN .mat file holds X and y; this one lacks {sorted(missing)}")
    images = np.transpose(contents["X"], (3, 2, 0, 1)).astype(np.uint8)  # (H, W, C, N) -> NCHW
    labels = contents["y"].reshape(-1).astype(np.int64) % 10
    return images, labels


def load_svhn(raw_dir: Path, include_extra: bool = False) -> dict[str, np.ndarray]:
    arrays = {}
    splits = ["train", "test"] + (["extra"] if include_extra else [])
    for split in splits:
        arrays[f"x_{split}"], arrays[f"y_{split}"] = read_svhn_mat(raw_dir / f"{split}_32x32.mat")
    return arrays
