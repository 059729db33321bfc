"""The dataset transforms the papers use: class subsets, grayscale, downsampling, label noise,
standardisation, seeded splits and subsets. Each is a pure function of arrays and a seed."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def select_classes(
    x: np.ndarray, y: np.ndarray, classes: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """Keep examples of ``classes``; relabel them 0..k-1 in the order given (3 vs 5 -> 0, 1)."""
    classes = list(classes)
    keep = np.isin(y, classes)
    relabel = {c: i for i, c in enumerate(classes)}
    return x[keep], np.array([relabel[int(c)] for c in y[keep]], dtype=np.int64)


def group_classes(y: np.ndarray, groups: Sequence[Sequence[int]]) -> np.ndarray:
    """Map each class to the index of its group (0-4 vs 5-9 -> 0, 1); every class must be listed."""
    lookup = {int(c): g for g, members in enumerate(groups) for c in members}
    unlisted = set(np.unique(y).tolist()) - set(lookup)
    if unlisted:
        raise ValueError(f"classes {sorted(unlisted)} belong to no group of {groups}")
    return np.array([lookup[int(c)] for c in y], dtype=np.int64)


# Size of one slice when a transform works through a large array: its float64 temporaries stay
# this small whatever the dataset's size, while the output is filled slice by slice.
CHUNK_BYTES = 16 * 2**20


def _chunks(x: np.ndarray) -> list[slice]:
    """Slices of x's examples (first axis) of about CHUNK_BYTES as float64 each."""
    step = max(1, CHUNK_BYTES // (8 * max(1, x[:1].size)))
    return [slice(start, min(start + step, len(x))) for start in range(0, len(x), step)]


def rescale_pixels(x: np.ndarray, pixel_max: float) -> np.ndarray:
    """x / pixel_max as float32, slice by slice: each value as float64 division then rounding to
    float32 would give, without a float64 copy of the whole array."""
    out = np.empty(x.shape, dtype=np.float32)
    for part in _chunks(x):
        out[part] = x[part] / pixel_max
    return out


def grayscale(images: np.ndarray) -> np.ndarray:
    """(N, 3, H, W) -> (N, 1, H, W) with ITU-R 601 luma weights."""
    weights = np.array([0.299, 0.587, 0.114], dtype=np.float64).reshape(1, 3, 1, 1)
    return (images.astype(np.float64) * weights).sum(axis=1, keepdims=True)


def _area_weights(source: int, target: int) -> np.ndarray:
    """(target, source) matrix: row i holds the overlap of each source pixel with target cell i,
    normalised to sum to one, so fractional ratios (28 -> 8) average by exact area."""
    edges = np.arange(target + 1) * source / target
    pixel = np.arange(source)
    overlap = np.clip(np.minimum(edges[1:, None], pixel + 1) - np.maximum(edges[:-1, None], pixel), 0, None)
    return overlap / overlap.sum(axis=1, keepdims=True)


def area_downsample(images: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """Area-average (N, C, H, W) to (N, C, h, w): each output pixel is the mean of the input
    area it covers (block means when h and w divide H and W)."""
    rows, cols = _area_weights(images.shape[2], size[0]), _area_weights(images.shape[3], size[1])
    return np.einsum("ih,nchw,jw->ncij", rows, images.astype(np.float64), cols, optimize=True)


def flip_labels(y: np.ndarray, rate: float, num_classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Flip exactly round(rate * n) labels, each to a different class chosen uniformly.

    Returns the noisy labels and the indices that were flipped.
    """
    rng = np.random.default_rng(seed)
    n_flip = int(round(rate * len(y)))
    flipped = np.sort(rng.choice(len(y), size=n_flip, replace=False))
    noisy = y.copy()
    # Adding a shift in 1..k-1 modulo k always lands on another class, uniformly.
    shifts = rng.integers(1, num_classes, size=n_flip)
    noisy[flipped] = (y[flipped] + shifts) % num_classes
    return noisy, flipped


def randomise_labels(y: np.ndarray, rate: float, num_classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random labels (Zhang et al. 2017; George thesis ch. 6): each label is, with probability
    ``rate``, redrawn uniformly from all classes, so it may come back unchanged (unlike
    ``flip_labels``). Returns the labels and the indices that were redrawn."""
    rng = np.random.default_rng(seed)
    redrawn = np.flatnonzero(rng.random(len(y)) < rate)
    labels = y.copy()
    labels[redrawn] = rng.integers(0, num_classes, size=len(redrawn))
    return labels, redrawn


def balanced_subset(y: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Indices of n examples with classes as equal in count as n allows (the first n % k
    classes get one more), drawn without replacement; sorted."""
    rng = np.random.default_rng(seed)
    classes = np.unique(y)
    per_class = np.full(len(classes), n // len(classes))
    per_class[: n % len(classes)] += 1
    chosen = []
    for cls, count in zip(classes, per_class):
        members = np.flatnonzero(y == cls)
        if count > len(members):
            raise ValueError(f"class {cls} has {len(members)} examples; {count} requested")
        chosen.append(rng.choice(members, size=count, replace=False))
    return np.sort(np.concatenate(chosen))


def balanced_order(y: np.ndarray, seed: int) -> np.ndarray:
    """An ordering of all examples whose every prefix is as class-balanced as the classes allow:
    one seeded permutation per class, taken in turn (class by class, the rarest classes running
    out first). Prefixes are nested subsets: the first n of them for every training-set size n."""
    rng = np.random.default_rng(seed)
    per_class = [rng.permutation(np.flatnonzero(y == cls)) for cls in np.unique(y)]
    rounds = max(len(members) for members in per_class)
    order = [members[r] for r in range(rounds) for members in per_class if r < len(members)]
    return np.asarray(order, dtype=np.int64)


def random_subset(n_total: int, n: int, seed: int) -> np.ndarray:
    if n > n_total:
        raise ValueError(f"subset of {n} requested from {n_total} examples")
    return np.sort(np.random.default_rng(seed).choice(n_total, size=n, replace=False))


def train_test_split_indices(n_total: int, test_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A seeded random split; the test part has round(test_fraction * n_total) examples."""
    order = np.random.default_rng(seed).permutation(n_total)
    n_test = int(round(test_fraction * n_total))
    return np.sort(order[n_test:]), np.sort(order[:n_test])


def standardise_channels(x_train: np.ndarray, x_test: np.ndarray,
                         in_place: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Every channel of (N, C, ...) images to zero mean and unit variance by the training split's
    per-channel statistics (one mean and one standard deviation per channel); float32.

    Statistics in float64, slice by slice, so no float64 copy of the images is made (Tiny ImageNet
    at paper size is 4.9 GB as float32). ``in_place``: float32 inputs are overwritten by their
    result instead of copied, for a caller that owns them.
    """
    axes = (0, *range(2, x_train.ndim))
    mean = x_train.mean(axis=axes, keepdims=True, dtype=np.float64)
    squares = sum(np.square(x_train[part] - mean).sum(axis=axes, keepdims=True) for part in _chunks(x_train))
    std = np.sqrt(squares / (x_train.size // x_train.shape[1]))
    std[std == 0] = 1.0
    return tuple(_standardised(x, mean, std, in_place) for x in (x_train, x_test))


def _standardised(x: np.ndarray, mean: np.ndarray, std: np.ndarray, in_place: bool) -> np.ndarray:
    out = x if in_place and x.dtype == np.float32 else np.empty(x.shape, dtype=np.float32)
    for part in _chunks(x):
        out[part] = (x[part] - mean) / std
    return out


def standardise(x_train: np.ndarray, x_test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every input feature (pixel) to zero mean and unit variance by the training split's
    statistics; constant features are only centred. Shapes and float32 kept."""
    from sklearn.preprocessing import StandardScaler  # imported here: scikit-learn loads slowly

    scaler = StandardScaler().fit(x_train.reshape(len(x_train), -1))
    return tuple(scaler.transform(x.reshape(len(x), -1)).reshape(x.shape).astype(np.float32)
                 for x in (x_train, x_test))


def normalise_channels(x: np.ndarray, mean, std) -> np.ndarray:
    """(x − mean_c) / std_c per channel of (N, C, ...) images, by fixed constants (torchvision's
    Normalize, e.g. the CIFAR-10 statistics an author's code uses); float32."""
    mean, std = (np.asarray(v, dtype=np.float64) for v in (mean, std))
    if mean.shape != (x.shape[1],) or std.shape != (x.shape[1],):
        raise ValueError(f"normalise: {x.shape[1]} channels, got {mean.size} means and {std.size} deviations")
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return ((x - mean.reshape(shape)) / std.reshape(shape)).astype(np.float32)
