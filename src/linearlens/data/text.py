"""Text corpora as byte tokens (Karp ch. 5's language models): one token per byte, 256 of them,
split once into a training and a validation stream.

Quick scale reads the Python standard library's own sources, which ship with every Python: a fixed
list of files, concatenated in the listed order, the last ``validation_fraction`` of the bytes held
out. Their content follows the running Python's version, so the provenance records the version
and every file's SHA-256. Paper scale reads a UTF-8 text file the config names, checked on read.
"""

from __future__ import annotations

import hashlib
import platform
import sysconfig
from pathlib import Path

import numpy as np

BYTE_TOKENS = 256


def python_stdlib_sources(files: list[str], validation_fraction: float = 0.1) -> dict[str, np.ndarray]:
    """The listed files of the running Python's standard library (paths relative to it)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    missing = [name for name in files if not (root / name).is_file()]
    if missing:
        raise FileNotFoundError(f"Python {platform.python_version()}'s standard library ({root}) lacks {missing}; "
                                "list files that exist in the dataset's source_options.files")
    texts = [(root / name).read_bytes() for name in files]
    arrays = split_tokens(b"\n".join(texts), validation_fraction)
    arrays.update(file_names=np.array(files), file_sha256=np.array([hashlib.sha256(t).hexdigest() for t in texts]),
                  python_version=np.array(platform.python_version()))
    return arrays


def text_file_tokens(path: str | None = None, sha256: str | None = None,
                     validation_fraction: float = 0.01) -> dict[str, np.ndarray]:
    """A text file at ``path`` (the dataset's source_options.path), verified against ``sha256``
    when one is given."""
    if not path or not Path(path).is_file():
        raise FileNotFoundError(f"the corpus file {path!r} (the dataset's source_options.path) does not exist: "
                                "place the text there, or point the config to it")
    content = Path(path).read_bytes()
    digest = hashlib.sha256(content).hexdigest()
    if sha256 and digest != sha256:
        raise ValueError(f"the corpus file {path} has SHA-256 {digest}, not the configured {sha256}")
    arrays = split_tokens(content, validation_fraction)
    arrays.update(file_names=np.array([str(path)]), file_sha256=np.array([digest]))
    return arrays


def token_dtype(vocabulary: int) -> np.dtype:
    """The smallest unsigned integer type of a vocabulary's token ids: a stream's type on disk and
    in memory (bytes: uint8; up to 65,536 tokens: uint16)."""
    for dtype in (np.uint8, np.uint16):
        if vocabulary <= np.iinfo(dtype).max + 1:
            return np.dtype(dtype)
    raise ValueError(f"a vocabulary of {vocabulary:,} tokens does not fit uint16")


def token_stream(array: np.ndarray, name: str) -> np.ndarray:
    """A prepared stream as it is kept in memory: uint8 or uint16 token ids, never widened."""
    if array.dtype not in (np.uint8, np.uint16):
        raise ValueError(f"the corpus stream {name} holds {array.dtype} tokens, not uint8 or uint16: prepare the "
                         "dataset again with this version (rule prepare_dataset writes byte tokens)")
    return array


def split_tokens(content: bytes, validation_fraction: float) -> dict[str, np.ndarray]:
    """The bytes as tokens, the last ``validation_fraction`` of them the validation stream."""
    if not 0 < validation_fraction < 1:
        raise ValueError(f"validation_fraction {validation_fraction} is not in (0, 1)")
    tokens = np.frombuffer(content, dtype=token_dtype(BYTE_TOKENS))
    cut = int(round(len(tokens) * (1 - validation_fraction)))
    return {"train_tokens": tokens[:cut].copy(), "validation_tokens": tokens[cut:].copy()}


def corpus_provenance(arrays: dict[str, np.ndarray]) -> dict:
    """The preparation step a text corpus records: its files with their checksums."""
    step = {"step": "byte_tokens", "vocabulary": BYTE_TOKENS,
            "files": dict(zip(arrays["file_names"].tolist(), arrays["file_sha256"].tolist()))}
    if "python_version" in arrays:
        step["python_version"] = str(arrays["python_version"])
    return step
