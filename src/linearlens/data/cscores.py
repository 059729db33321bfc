"""Reader for the CIFAR-10 consistency scores (C-scores) of Jiang et al. (2021)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

CIFAR10_TRAIN_SIZE = 50_000


def read_cscores(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Per-example C-scores and labels, in the original CIFAR-10 training-set order."""
    with np.load(path) as contents:
        missing = {"scores", "labels"} - set(contents.files)
        if missing:
            raise ValueError(f"{path} lacks arrays {sorted(missing)}; has {contents.files}")
        scores = contents["scores"].astype(np.float64)
        labels = contents["labels"].astype(np.int64)
    # No checksum is published for this file, so its contents are what we can check.
    problems = []
    if scores.shape != (CIFAR10_TRAIN_SIZE,) or labels.shape != (CIFAR10_TRAIN_SIZE,):
        problems.append(f"expected {CIFAR10_TRAIN_SIZE} scores and labels, found "
                        f"{scores.shape} and {labels.shape}")
    if scores.size and not (np.all(scores >= 0) and np.all(scores <= 1)):
        problems.append("scores outside [0, 1]")
    if labels.size and not np.all((labels >= 0) & (labels <= 9)):
        problems.append("labels outside 0..9")
    if problems:
        raise ValueError(f"{path} is not the CIFAR-10 C-scores file: {'; '.join(problems)}")
    return scores, labels


def load_cscores(raw_dir: Path) -> dict[str, np.ndarray]:
    scores, labels = read_cscores(raw_dir / "cifar10-cscores-orig-order.npz")
    return {"scores": scores, "labels": labels}
