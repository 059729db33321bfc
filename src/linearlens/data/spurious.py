"""Readers for the spurious-correlation image sets, CelebA (Liu et al. 2015) and Waterbirds
(Sagawa et al. 2020), and for images inside their archives.

Both sets are too large to hold as prepared arrays (CelebA: 202,599 photos), so a prepared
dataset is their *index*: per split, the label, the spurious attribute and the archive member
of each image. Experiments read the images they use with ``read_archive_images``, cropped and
resized as torchvision's transforms do (``photo_pipeline``).

Also here: the published group counts the readers check (H14), which examples count as "with
spurious", balanced (label, group) evaluation sets, and the quick scale's stand-ins, spurious
features added to the scikit-learn digits (``spurious_digits``).
"""

from __future__ import annotations

import tarfile
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from .jpeg import decode_rgb

CELEBA_SIZE = 202_599
CELEBA_IMAGE_DIR = "img_align_celeba"
CELEBA_SPLITS = {"train": 0, "valid": 1, "test": 2}  # list_eval_partition.txt codes

WATERBIRDS_DIR = "waterbird_complete95_forest2water2"
WATERBIRDS_SPLITS = {"train": 0, "valid": 1, "test": 2}  # metadata.csv "split" codes
# Training images per (bird, background) group, (0, 0) = landbird on land (Sagawa et al. 2020).
WATERBIRDS_TRAIN_GROUPS = {(0, 0): 3498, (0, 1): 184, (1, 0): 56, (1, 1): 1057}
# Images per (blond, male) cell of the official CelebA splits: the author's code comments (train
# 94,509 women / 22,880 blond, 68,261 men / 1,387 blond; test 12,247 women / 2,480 blond, 7,715
# men / 180 blond), the thesis's "24% of women blond, 2% of men" and "180 blond men in the test set".
CELEBA_BLOND_MALE_COUNTS = {
    "train": {(0, 0): 71_629, (1, 0): 22_880, (0, 1): 66_874, (1, 1): 1_387},
    "test": {(0, 0): 9_767, (1, 0): 2_480, (0, 1): 7_535, (1, 1): 180},
}


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
                target: str = "Blond_Hair", spurious: str = "Male", size: int | None = None) -> dict[str, np.ndarray]:
    """The official train/valid/test split with ``target`` as the label and ``spurious`` as the
    group; ``image_*`` name members of img_align_celeba.zip. ``size``: the images the files must
    list (default: the published count; a fixture's manifest gives its own)."""
    size = CELEBA_SIZE if size is None else size
    attributes = read_celeba_attributes(attributes_path)
    partition = pd.read_csv(partition_path, sep=r"\s+", header=None, index_col=0).iloc[:, 0]
    for column in (target, spurious):
        if column not in attributes.columns:
            raise ValueError(f"CelebA has no attribute {column!r}; it has {list(attributes.columns)}")
    if len(attributes) != size or not partition.index.equals(attributes.index):
        raise ValueError(f"expected the {size} CelebA images listed alike in "
                         f"{attributes_path} and {partition_path}; found {len(attributes)} and "
                         f"{len(partition)}")
    names = np.array([f"{CELEBA_IMAGE_DIR}/{name}" for name in attributes.index])
    return _split_index(names, attributes[target].to_numpy(), attributes[spurious].to_numpy(),
                        partition.to_numpy(), CELEBA_SPLITS)


def read_waterbirds(archive_path: str | Path, train_groups: dict | None = None) -> dict[str, np.ndarray]:
    """The metadata.csv of the Waterbirds tarball: label 1 = waterbird, group 1 = water
    background; ``image_*`` name members of the tarball. Its training-group counts must be
    ``train_groups`` (default: the published ones; a fixture's manifest gives its own)."""
    expected = WATERBIRDS_TRAIN_GROUPS if train_groups is None else train_groups
    archive_path = Path(archive_path)
    with tarfile.open(archive_path) as archive:
        member = archive.extractfile(f"{WATERBIRDS_DIR}/metadata.csv")
        metadata = pd.read_csv(member)
    train = metadata[metadata["split"] == WATERBIRDS_SPLITS["train"]]
    groups = train.groupby(["y", "place"]).size().to_dict()
    if groups != expected:
        # No checksum is published for the tarball, so its published group counts are the check.
        raise ValueError(f"{archive_path} is not the Waterbirds dataset: training groups "
                         f"{groups}, expected {expected}")
    names = np.array([f"{WATERBIRDS_DIR}/{name}" for name in metadata["img_filename"]])
    return _split_index(names, metadata["y"].to_numpy(), metadata["place"].to_numpy(),
                        metadata["split"].to_numpy(), WATERBIRDS_SPLITS)


def read_archive_images(archive_path: str | Path, members: Iterable[str],
                        transform: Callable[[np.ndarray], np.ndarray] | None = None) -> list[np.ndarray]:
    """The named images of a zip or tar archive as uint8 (3, H, W), in the order asked for, each
    passed through ``transform`` as it is decoded (so only transformed images are held). A
    tarball is read in one pass, as gzip allows no random access."""
    archive_path = Path(archive_path)
    members = list(members)
    transform = transform or (lambda image: image)
    if zipfile.is_zipfile(archive_path):
        with zipfile.ZipFile(archive_path) as archive:
            return [transform(decode_rgb(archive.read(name))) for name in members]
    wanted, found = set(members), {}
    with tarfile.open(archive_path) as archive:
        for info in archive:
            if info.name in wanted:
                found[info.name] = transform(decode_rgb(archive.extractfile(info).read()))
    missing = wanted - set(found)
    if missing:
        raise KeyError(f"{archive_path} lacks {len(missing)} requested images, e.g. {min(missing)}")
    return [found[name] for name in members]


WATERBIRDS_ARCHIVE = "waterbird_complete95_forest2water2.tar.gz"


def load_celeba(raw_dir: Path, target: str, spurious: str, size: int | None = None,
                split_counts: dict[str, list] | None = None) -> dict[str, np.ndarray]:
    """``read_celeba``; for blond vs male (the thesis's task) the index must have the published
    group counts (H14), which stand in for a check of the attribute and partition files' contents.
    A fixture's manifest passes its own ``size`` and ``split_counts`` ({split: [[label, group,
    count], ...]}) instead of the published ones."""
    arrays = read_celeba(raw_dir / "list_attr_celeba.txt", raw_dir / "list_eval_partition.txt", target, spurious, size)
    if split_counts is not None:
        check_group_counts(arrays, {split: cells_from_rows(rows) for split, rows in split_counts.items()},
                           f"CelebA ({target} vs {spurious}, the fixture's counts)")
    elif (target, spurious) == ("Blond_Hair", "Male"):
        check_group_counts(arrays, CELEBA_BLOND_MALE_COUNTS, "CelebA (blond vs male)")
    return arrays


def load_waterbirds(raw_dir: Path, train_groups: list | None = None) -> dict[str, np.ndarray]:
    """``read_waterbirds``; ``train_groups`` ([[label, place, count], ...]) from a fixture's manifest."""
    expected = None if train_groups is None else cells_from_rows(train_groups)
    return read_waterbirds(raw_dir / WATERBIRDS_ARCHIVE, expected)


def cells_from_rows(rows: list) -> dict[tuple[int, int], int]:
    """[[label, group, count], ...] (JSON's form of a count table) as {(label, group): count}."""
    return {(int(label), int(group)): int(count) for label, group, count in rows}


# The archive of each image-index source that holds its images.
IMAGE_ARCHIVES = {"celeba": "img_align_celeba.zip", "waterbirds": WATERBIRDS_ARCHIVE}


def group_counts(y: np.ndarray, group: np.ndarray) -> dict[tuple[int, int], int]:
    """Examples per (label, group) cell, every cell of the two binary variables listed."""
    return {(label, g): int(np.sum((y == label) & (group == g))) for label in (0, 1) for g in (0, 1)}


def check_group_counts(arrays: dict[str, np.ndarray], expected: dict[str, dict], name: str) -> None:
    """Each split's (label, group) counts must be the published ones (those listed)."""
    for split, cells in expected.items():
        found = group_counts(arrays[f"y_{split}"], arrays[f"group_{split}"])
        wrong = {cell: (found[cell], count) for cell, count in cells.items() if found[cell] != count}
        if wrong:
            raise ValueError(f"{name}: the {split} split's (label, group) counts differ from the published ones "
                             f"(found, expected): {wrong}; the files are not the published dataset")


# --- which examples carry the spurious feature, and balanced evaluation sets ---------------------

WITH_SPURIOUS_RULES = ("agreement", "attribute")


def with_spurious(y: np.ndarray, group: np.ndarray, rule: str, spurious_value: int | None = None) -> np.ndarray:
    """Which examples count as "with spurious": ``agreement`` where the label and the spurious
    attribute agree (Waterbirds: the bird's type and the background's), ``attribute`` where the
    attribute takes ``spurious_value`` (the thesis's CelebA subgroups: women, Male = 0)."""
    if rule == "agreement":
        return y == group
    if rule == "attribute":
        if spurious_value is None:
            raise ValueError("the 'attribute' rule needs the attribute's spurious value")
        return group == spurious_value
    raise ValueError(f"with-spurious rule must be one of {WITH_SPURIOUS_RULES}, got {rule!r}")


def balanced_cells(y: np.ndarray, group: np.ndarray, per_cell: int) -> tuple[np.ndarray, dict]:
    """The first ``per_cell`` examples (in the split's order) of each (label, group) cell, fewer
    where a cell is smaller (Waterbirds' training split has 56 waterbirds on land: the thesis's 180 per group
    cannot be drawn);
    the indices, cell after cell, and the counts taken."""
    chosen, counts = [], {}
    for label in (0, 1):
        for g in (0, 1):
            cell = np.flatnonzero((y == label) & (group == g))[:per_cell]
            chosen.append(cell)
            counts[(label, g)] = len(cell)
    return np.concatenate(chosen), counts


# --- torchvision's crops and resizes of photographs, on PIL images -------------------------------

def center_crop(image: Image.Image, size: int) -> Image.Image:
    """The central size x size square (offsets rounded as torchvision's CenterCrop)."""
    width, height = image.size
    if size > min(width, height):
        raise ValueError(f"cannot crop {size}x{size} from a {width}x{height} image")
    top, left = int(round((height - size) / 2.0)), int(round((width - size) / 2.0))
    return image.crop((left, top, left + size, top + size))


def resize(image: Image.Image, size: int | list[int]) -> Image.Image:
    """Bilinear (antialiased) resize as torchvision's Resize on PIL images: an int sets the shorter
    side (the longer scaled and truncated), a pair [height, width] the exact size."""
    width, height = image.size
    if isinstance(size, int):
        if width <= height:
            new = (size, int(size * height / width))
        else:
            new = (int(size * width / height), size)
    else:
        new = (int(size[1]), int(size[0]))
    return image.resize(new, Image.BILINEAR)


IMAGE_STEPS = {"center_crop": center_crop, "resize": resize}


def photo_pipeline(steps: list[dict]) -> Callable[[np.ndarray], np.ndarray]:
    """uint8 (3, H, W) -> uint8 (3, H', W') through steps such as ``[{"center_crop": 178},
    {"resize": 224}]`` (CelebA in the author's code) or ``[{"resize": [256, 256]}, {"center_crop":
    224}]`` (Waterbirds)."""
    for step in steps:
        if len(step) != 1 or next(iter(step)) not in IMAGE_STEPS:
            raise ValueError(f"an image step is one of {sorted(IMAGE_STEPS)} with its size, got {step}")

    def transform(array: np.ndarray) -> np.ndarray:
        image = Image.fromarray(np.ascontiguousarray(array.transpose(1, 2, 0)))
        for step in steps:
            (name, size), = step.items()
            image = IMAGE_STEPS[name](image, size)
        return np.asarray(image, dtype=np.uint8).transpose(2, 0, 1)

    return transform


# --- the quick scale's stand-ins: spurious features added to the scikit-learn digits -------------

SPURIOUS_FEATURES = ("corner_patch", "stripes")


def add_spurious_feature(images: np.ndarray, group: np.ndarray, feature: str, level: float) -> np.ndarray:
    """Images (N, 1, H, W) in [0, 1] with the feature of each example's group. ``corner_patch``: a
    2x2 patch of brightness ``level`` in the top-left corner where group = 1, nothing where 0 (an
    easy, local feature). ``stripes``: a background of horizontal stripes (group 1, "water") or
    vertical ones (group 0, "land") at ``level``, under the strokes (a background-type feature)."""
    images = images.copy()
    if feature == "corner_patch":
        images[group == 1, :, :2, :2] = level
        return images
    if feature == "stripes":
        height, width = images.shape[-2:]
        rows = (np.arange(height)[:, None] % 2 == 0) & np.ones((1, width), bool)
        columns = (np.arange(width)[None, :] % 2 == 0) & np.ones((height, 1), bool)
        background = np.where(group[:, None, None, None] == 1, rows, columns) * level
        return np.maximum(images, background.astype(images.dtype))
    raise ValueError(f"spurious feature must be one of {SPURIOUS_FEATURES}, got {feature!r}")


def _cell_sizes(available: dict[int, int], weights: list[list[float]]) -> dict[tuple[int, int], int]:
    """The largest training cells in the proportions ``weights[label][group]`` that each class's
    available examples allow."""
    scale = min(available[label] / sum(weights[label]) for label in (0, 1))
    return {(label, g): int(np.floor(scale * weights[label][g] + 1e-9)) for label in (0, 1) for g in (0, 1)}


def spurious_digits(feature: str = "corner_patch", train_cells: list | None = None, test_fraction: float = 0.25,
                    test_per_cell: int | None = None, label_from: int = 5, level: float = 1.0,
                    seed: int = 0) -> dict[str, np.ndarray]:
    """A spurious-correlation task from the scikit-learn digits (the quick stand-in for
    George's Fig 5.3): label y = [digit >= label_from], a spurious feature (``add_spurious_feature``) on
    the examples of group 1. The training split has (label, group) cells in the proportions
    ``train_cells[label][group]`` (default [[9, 1], [1, 9]]: the feature on 90% of y = 1 and 10% of
    y = 0), as large as the digits allow; the test split is balanced: equal cells (``test_per_cell``
    each, at most half the smaller class of the test digits). Both splits are shuffled, so the
    first examples of a cell are a random choice. Pixels are in [0, 1] (N, 1, 8, 8)."""
    from sklearn.datasets import load_digits

    weights = train_cells or [[9, 1], [1, 9]]
    digits = load_digits()
    images = (digits.images[:, None] / 16.0).astype(np.float32)
    labels = (digits.target >= label_from).astype(np.int64)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(labels))
    n_test = int(round(test_fraction * len(labels)))
    pools = {"test": order[:n_test], "train": order[n_test:]}

    def of_class(pool, label):
        return pool[labels[pool] == label]

    per_cell = min(len(of_class(pools["test"], label)) // 2 for label in (0, 1))
    per_cell = per_cell if test_per_cell is None else min(per_cell, test_per_cell)
    test_sizes = {(label, g): per_cell for label in (0, 1) for g in (0, 1)}
    train_sizes = _cell_sizes({label: len(of_class(pools["train"], label)) for label in (0, 1)}, weights)
    arrays = {}
    for split, sizes in (("train", train_sizes), ("test", test_sizes)):
        index, group = [], []
        for label in (0, 1):
            members = of_class(pools[split], label)
            taken = members[:sizes[(label, 0)] + sizes[(label, 1)]]
            index.append(taken)
            group.append(np.r_[np.ones(sizes[(label, 1)], np.int64), np.zeros(sizes[(label, 0)], np.int64)])
        shuffle = rng.permutation(sum(len(i) for i in index))
        index, group = np.concatenate(index)[shuffle], np.concatenate(group)[shuffle]
        arrays[f"x_{split}"] = add_spurious_feature(images[index], group, feature, level)
        arrays[f"y_{split}"], arrays[f"group_{split}"] = labels[index], group
        arrays[f"digit_{split}"] = digits.target[index].astype(np.int64)
    return arrays
