"""Readers for the spurious-correlation image sets, CelebA (Liu et al. 2015) and Waterbirds
(Sagawa et al. 2020), and for images inside their archives.

Both sets are too large to hold as prepared arrays (CelebA: 202,599 photos), so a prepared
dataset is their *index*: per split, the label, the spurious attribute and the archive member
of each image. Experiments read the images they use with ``read_archive_images``.
"""

from __future__ import annotations

import tarfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from .jpeg import decode_rgb

CELEBA_SIZE = 202_599
CELEBA_IMAGE_DIR = "img_align_celeba"
CELEBA_SPLITS = {"train": 0, "valid": 1, "test": 2}  # list_eval_partition.txt codes

WATERBIRDS_DIR = "waterbird_complete95_forest2water2"
WATERBIRDS_SPLITS = {"train": 0, "valid": 1, "test": 2}  # metadata.csv "split" codes
# Training images per (bird, background) group, (0, 0) = landbird on land (Sagawa et al. 2020).
WATERBIRDS_TRAIN_GROUPS = {(0, 0): 3498, (0, 1): 184, (1, 0): 56, (1, 1): 1057}


def _split_index(names: np.ndarray, labels: np.ndarray, groups: np.ndarray,
                 split_codes: np.ndarray, splits: dict[str, int]) -> dict[str, np.ndarray]:
    arrays = {}
    for split, code in splits.items():
        keep = split_codes == code
        arrays[f"y_{split}"] = labels[keep].astype(np.int64)
        arrays[f"group_{split}"] = groups[keep].astype(np.int64)
        arrays[f"image_{split}"] = names[keep].astype(str)
    return arrays


def read_celeba_attributes(path: str | Path) -> pd.DataFrame:
    """list_attr_celeba.txt: a count line, the 40 attribute names, then one row of ±1 per image;
    returned as 0/1 with the image file names as index."""
    path = Path(path)
    with path.open() as handle:
        declared = int(handle.readline())
    # The name line has one field fewer than the rows, so pandas takes the file names as index.
    attributes = pd.read_csv(path, sep=r"\s+", skiprows=1)
    values = attributes.to_numpy()
    if declared != len(attributes) or not np.isin(values, (-1, 1)).all():
        raise ValueError(f"{path} is not a CelebA attribute file: {declared} images declared, "
                         f"{len(attributes)} rows, values {np.unique(values)[:5].tolist()}")
    return (attributes + 1) // 2


def read_celeba(attributes_path: str | Path, partition_path: str | Path,
                target: str = "Blond_Hair", spurious: str = "Male") -> dict[str, np.ndarray]:
    """The official train/valid/test split with ``target`` as the label and ``spurious`` as the
    group; ``image_*`` name members of img_align_celeba.zip."""
    attributes = read_celeba_attributes(attributes_path)
    partition = pd.read_csv(partition_path, sep=r"\s+", header=None, index_col=0).iloc[:, 0]
    for column in (target, spurious):
        if column not in attributes.columns:
            raise ValueError(f"CelebA has no attribute {column!r}; it has {list(attributes.columns)}")
    if len(attributes) != CELEBA_SIZE or not partition.index.equals(attributes.index):
        raise ValueError(f"expected the {CELEBA_SIZE} CelebA images listed alike in "
                         f"{attributes_path} and {partition_path}; found {len(attributes)} and "
                         f"{len(partition)}")
    names = np.array([f"{CELEBA_IMAGE_DIR}/{name}" for name in attributes.index])
    return _split_index(names, attributes[target].to_numpy(), attributes[spurious].to_numpy(),
                        partition.to_numpy(), CELEBA_SPLITS)


def read_waterbirds(archive_path: str | Path) -> dict[str, np.ndarray]:
    """The metadata.csv of the Waterbirds tarball: label 1 = waterbird, group 1 = water
    background; ``image_*`` name members of the tarball."""
    archive_path = Path(archive_path)
    with tarfile.open(archive_path) as archive:
        member = archive.extractfile(f"{WATERBIRDS_DIR}/metadata.csv")
        metadata = pd.read_csv(member)
    train = metadata[metadata["split"] == WATERBIRDS_SPLITS["train"]]
    groups = train.groupby(["y", "place"]).size().to_dict()
    if groups != WATERBIRDS_TRAIN_GROUPS:
        # No checksum is published for the tarball, so its published group counts are the check.
        raise ValueError(f"{archive_path} is not the Waterbirds dataset: training groups "
                         f"{groups}, expected {WATERBIRDS_TRAIN_GROUPS}")
    names = np.array([f"{WATERBIRDS_DIR}/{name}" for name in metadata["img_filename"]])
    return _split_index(names, metadata["y"].to_numpy(), metadata["place"].to_numpy(),
                        metadata["split"].to_numpy(), WATERBIRDS_SPLITS)


def read_archive_images(archive_path: str | Path, members: Iterable[str]) -> list[np.ndarray]:
    """The named images of a zip or tar archive as uint8 (3, H, W), in the order asked for.
    A tarball is read in one pass, as gzip allows no random access."""
    archive_path = Path(archive_path)
    members = list(members)
    if zipfile.is_zipfile(archive_path):
        with zipfile.ZipFile(archive_path) as archive:
            return [decode_rgb(archive.read(name)) for name in members]
    wanted, found = set(members), {}
    with tarfile.open(archive_path) as archive:
        for info in archive:
            if info.name in wanted:
                found[info.name] = decode_rgb(archive.extractfile(info).read())
    missing = wanted - set(found)
    if missing:
        raise KeyError(f"{archive_path} lacks {len(missing)} requested images, e.g. {min(missing)}")
    return [found[name] for name in members]


WATERBIRDS_ARCHIVE = "waterbird_complete95_forest2water2.tar.gz"


def load_celeba(raw_dir: Path, target: str, spurious: str) -> dict[str, np.ndarray]:
    return read_celeba(raw_dir / "list_attr_celeba.txt", raw_dir / "list_eval_partition.txt", target, spurious)


def load_waterbirds(raw_dir: Path) -> dict[str, np.ndarray]:
    return read_waterbirds(raw_dir / WATERBIRDS_ARCHIVE)
