"""Reader for the CIFAR-10 "python version" archive (pickled batches inside a tar.gz)."""

from __future__ import annotations

import pickle
import tarfile
from pathlib import Path

import numpy as np

from .idx import damaged_download

TRAIN_BATCHES = [f"data_batch_{i}" for i in range(1, 6)]
TEST_BATCHES = ["test_batch"]
CLASS_NAMES = (
    "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck",
)


def _read_batches(path: Path, archive: tarfile.TarFile, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    members = {Path(m.name).name: m for m in archive.getmembers() if m.isfile()}
    images, labels = [], []
    for name in names:
        if name not in members:
            raise damaged_download(path, f"the CIFAR-10 archive has no member {name}")
        batch = pickle.load(archive.extractfile(members[name]), encoding="bytes")
        images.append(np.asarray(batch[b"data"], dtype=np.uint8).reshape(-1, 3, 32, 32))
        labels.append(np.asarray(batch[b"labels"], dtype=np.int64))
    return np.concatenate(images), np.concatenate(labels)


def read_cifar10_archive(path: str | Path) -> dict[str, np.ndarray]:
    """Images as uint8 (N, 3, 32, 32) and labels 0..9, train and test."""
    path = Path(path)
    with tarfile.open(path, "r:gz") as archive:
        x_train, y_train = _read_batches(path, archive, TRAIN_BATCHES)
        x_test, y_test = _read_batches(path, archive, TEST_BATCHES)
    return {"x_train": x_train, "y_train": y_train, "x_test": x_test, "y_test": y_test}


def load_cifar10(raw_dir: Path) -> dict[str, np.ndarray]:
    return read_cifar10_archive(raw_dir / "cifar-10-python.tar.gz")
