"""Reader for the IDX format of MNIST, Fashion-MNIST and KMNIST (optionally gzipped)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

# The third byte of the magic number names the element type (LeCun's IDX description).
IDX_DTYPES = {
    0x08: np.uint8,
    0x09: np.int8,
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def read_idx(path: str | Path) -> np.ndarray:
    """Read an IDX file into an array of its declared shape and type."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
        raw = handle.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(f"{path} is not an IDX file (bad magic number)")
    type_code, ndim = raw[2], raw[3]
    if type_code not in IDX_DTYPES:
        raise ValueError(f"{path}: unknown IDX element type 0x{type_code:02x}")
    if len(raw) < 4 + 4 * ndim:
        raise ValueError(f"{path}: truncated IDX file (header of {ndim} dimensions cut short)")
    shape = tuple(int(d) for d in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    dtype = np.dtype(IDX_DTYPES[type_code])
    expected_bytes = 4 + 4 * ndim + int(np.prod(shape)) * dtype.itemsize
    if len(raw) != expected_bytes:
        raise ValueError(f"{path}: truncated IDX file ({len(raw)} of {expected_bytes} bytes)")
    data = np.frombuffer(raw, dtype=dtype, offset=4 + 4 * ndim).reshape(shape)
    return data.astype(dtype.newbyteorder("="))


IDX_FILES = (
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
)


def load_idx_dataset(raw_dir: Path) -> dict[str, np.ndarray]:
    """An MNIST-style set from its four IDX files: (N, 1, 28, 28) images and integer labels."""
    train_x, train_y, test_x, test_y = (read_idx(raw_dir / name) for name in IDX_FILES)
    return {
        "x_train": train_x[:, None], "y_train": train_y.astype(np.int64),
        "x_test": test_x[:, None], "y_test": test_y.astype(np.int64),
    }
