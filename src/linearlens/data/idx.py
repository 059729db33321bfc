"""Reader for the IDX format of MNIST, Fashion-MNIST and KMNIST (optionally gzipped)."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import numpy as np

from .damaged import DamagedFileError, rebuild_command

# The third byte of the magic number names the element type (LeCun's IDX description).
IDX_DTYPES = {
    0x08: np.uint8,
    0x09: np.int8,
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


GZIP_MAGIC = b"\x1f\x8b"


def read_idx(path: str | Path) -> np.ndarray:
    """Read an IDX file into an array of its declared shape and type."""
    path = Path(path)
    raw = _read_bytes(path)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        looks_gzipped = " (it is gzipped: name it .gz)" if raw.startswith(GZIP_MAGIC) else ""
        raise damaged_download(path, f"not an IDX file (bad magic number 0x{raw[:4].hex()}){looks_gzipped}")
    type_code, ndim = raw[2], raw[3]
    if type_code not in IDX_DTYPES:
        raise damaged_download(path, f"unknown IDX element type 0x{type_code:02x}")
    header_bytes = 4 + 4 * ndim
    if len(raw) < header_bytes:
        raise damaged_download(path, f"truncated IDX file (header of {ndim} dimensions cut short)")
    shape = tuple(int(d) for d in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    dtype = np.dtype(IDX_DTYPES[type_code])
    expected, found = int(np.prod(shape)) * dtype.itemsize, len(raw) - header_bytes
    if found != expected:
        verdict = "cut off" if found < expected else "longer than its header says"
        raise damaged_download(path, f"header says {expected} bytes of data but the file has {found}: {verdict}")
    data = np.frombuffer(raw, dtype=dtype, offset=header_bytes).reshape(shape)
    return data.astype(dtype.newbyteorder("="))


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, decompressed when it is named .gz."""
    stored = path.read_bytes()
    if path.suffix != ".gz":
        return stored
    if not stored.startswith(GZIP_MAGIC):
        raise damaged_download(path, f"not a gzip file, though named .gz (it starts 0x{stored[:4].hex()})")
    try:
        return gzip.decompress(stored)
    except EOFError as error:
        raise damaged_download(path, f"gzip stream cut off ({error})") from error
    except (gzip.BadGzipFile, zlib.error) as error:
        raise damaged_download(path, f"corrupt gzip stream ({error})") from error


def damaged_download(path: Path, problem: str) -> DamagedFileError:
    """One line naming a raw file, what is wrong with it and how to get it again (the readers of
    every downloaded format raise it). Raw files are the download rule's outputs: asking Snakemake
    for a missing one fetches it again."""
    return DamagedFileError(
        f"{path}: {problem}; delete it and download it again with `{rebuild_command(path)}`"
    )


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
