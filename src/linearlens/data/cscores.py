"""Reader for the CIFAR-10 consistency scores (C-scores) of Jiang et al. (2021)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def read_cscores(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Per-example C-scores and labels, in the original CIFAR-10 training-set order."""
    with np.load(path) as contents:
        missing = {"scores", "labels"} - set(contents.files)
        if missing:
            raise ValueError(f"{path} lacks arrays {sorted(missing)}; has {contents.files}")
        return contents["scores"].astype(np.float64), contents["labels"].astype(np.int64)
