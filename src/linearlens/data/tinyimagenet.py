"""Reader for the Tiny ImageNet zip (cs231n): 200 classes of 64x64 JPEGs, 500 training and 50
validation images per class. The validation set, whose labels are public, serves as the test set."""

from __future__ import annotations

import zipfile
from pathlib import Path, PurePosixPath

import numpy as np

from .jpeg import decode_rgb

ROOT = "tiny-imagenet-200"
IMAGE_SHAPE = (3, 64, 64)


def read_tinyimagenet_zip(path: str | Path) -> dict[str, np.ndarray]:
    """Images as uint8 (N, 3, 64, 64); labels index the sorted WordNet ids of ``wnids.txt``."""
    with zipfile.ZipFile(path) as archive:
        wnids = sorted(archive.read(f"{ROOT}/wnids.txt").decode().split())
        label_of = {wnid: i for i, wnid in enumerate(wnids)}
        train = sorted(
            name for name in archive.namelist()
            if name.startswith(f"{ROOT}/train/") and name.endswith(".JPEG")
        )
        # train/<wnid>/images/<file>.JPEG
        train_labels = [label_of[PurePosixPath(name).parts[2]] for name in train]
        annotations = archive.read(f"{ROOT}/val/val_annotations.txt").decode().splitlines()
        val = sorted(line.split("\t")[:2] for line in annotations if line.strip())
        return {
            "x_train": _decoded(archive, train),
            "y_train": np.array(train_labels, dtype=np.int64),
            "x_test": _decoded(archive, [f"{ROOT}/val/images/{file}" for file, _ in val]),
            "y_test": np.array([label_of[wnid] for _, wnid in val], dtype=np.int64),
        }


def _decoded(archive: zipfile.ZipFile, members: list[str]) -> np.ndarray:
    """The members' images decoded straight into one uint8 array (no list of them to stack)."""
    images = np.empty((len(members), *IMAGE_SHAPE), dtype=np.uint8)
    for index, member in enumerate(members):
        image = decode_rgb(archive.read(member))
        if image.shape != IMAGE_SHAPE:
            raise ValueError(f"{archive.filename}: {member} is {'x'.join(map(str, image.shape))}, "
                             f"not {'x'.join(map(str, IMAGE_SHAPE))} as every Tiny ImageNet image")
        images[index] = image
    return images


def load_tinyimagenet(raw_dir: Path) -> dict[str, np.ndarray]:
    return read_tinyimagenet_zip(raw_dir / "tiny-imagenet-200.zip")
