"""Pretrained weights in torch's file format, read without torch: a ``.pth`` state dict such as
torchvision's ImageNet ResNet-18, as named arrays (so a preparation job in the data environment
checks its checksum and records its provenance like any dataset's); and loading such arrays into a
zoo model whose last layer is new (a fine-tuning start).

torch's format (``torch.save`` since torch 1.6) is a zip archive: ``<root>/data.pkl``, a pickle of
the state dict whose tensors are ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
…)`` calls and whose storages are persistent ids ``("storage", torch.<Type>Storage, key, location,
numel)`` naming the raw little-endian bytes ``<root>/data/<key>``. The unpickler accepts only those
names (and OrderedDict): never code.
"""

from __future__ import annotations

import collections
import pickle
import zipfile
from pathlib import Path

import numpy as np

STORAGE_DTYPES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
                  "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16, "CharStorage": np.int8,
                  "ByteStorage": np.uint8, "BoolStorage": np.bool_}


class _StorageType:
    """What a pickled ``torch.<Type>Storage`` class stands for here: its element type."""

    def __init__(self, name: str):
        self.dtype = np.dtype(STORAGE_DTYPES[name])


def _rebuild_tensor(storage: np.ndarray, offset: int, size, stride, *_) -> np.ndarray:
    """A tensor's values: ``size`` elements of its storage from ``offset`` at ``stride`` (a copy)."""
    if not len(size):
        return np.array(storage[offset])
    view = np.lib.stride_tricks.as_strided(storage[offset:], shape=tuple(size),
                                           strides=tuple(s * storage.dtype.itemsize for s in stride))
    return np.array(view)


def _parameter(data: np.ndarray, *_) -> np.ndarray:
    return data


class _StateDictUnpickler(pickle.Unpickler):
    ALLOWED = {("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
               ("torch._utils", "_rebuild_parameter"): _parameter,
               ("collections", "OrderedDict"): collections.OrderedDict}

    def __init__(self, archive: zipfile.ZipFile, root: str, byte_order: str):
        super().__init__(archive.open(f"{root}/data.pkl"))
        self.archive, self.root, self.byte_order = archive, root, byte_order

    def find_class(self, module: str, name: str):
        if (module, name) in self.ALLOWED:
            return self.ALLOWED[(module, name)]
        if module == "torch" and name in STORAGE_DTYPES:
            return _StorageType(name)
        raise pickle.UnpicklingError(f"{module}.{name} has no place in a state dict file")

    def persistent_load(self, pid):
        kind, storage_type, key, _location, numel = pid
        if kind != "storage" or not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError(f"unknown persistent id {pid[:2]}")
        dtype = storage_type.dtype.newbyteorder(self.byte_order)
        return np.frombuffer(self.archive.read(f"{self.root}/data/{key}"), dtype=dtype, count=numel)


def read_state_dict(path: str | Path) -> dict[str, np.ndarray]:
    """The named arrays of a state dict saved by ``torch.save`` (zip format)."""
    path = Path(path)
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path} is not a torch state dict in the zip format (torch >= 1.6)")
    with zipfile.ZipFile(path) as archive:
        pickles = [name for name in archive.namelist() if name.endswith("/data.pkl")]
        if len(pickles) != 1:
            raise ValueError(f"{path} is not a torch state dict file: {len(pickles)} data.pkl entries")
        root = pickles[0].removesuffix("/data.pkl")
        names = set(archive.namelist())
        byte_order = archive.read(f"{root}/byteorder").decode().strip() if f"{root}/byteorder" in names else "little"
        state = _StateDictUnpickler(archive, root, "<" if byte_order == "little" else ">").load()
    if not isinstance(state, dict) or not state or not all(
            isinstance(k, str) and isinstance(v, np.ndarray) for k, v in state.items()):
        raise ValueError(f"{path} holds no state dict of named tensors (found {type(state).__name__})")
    return {name: array.astype(array.dtype.newbyteorder("=")) for name, array in state.items()}


def load_state_arrays(raw_dir: Path, filename: str) -> dict[str, np.ndarray]:
    """The registry's reader of a weights source: its state dict as named arrays."""
    return read_state_dict(Path(raw_dir) / filename)


def load_except_head(model, state: dict, head: str = "fc") -> None:
    """Every parameter and buffer of ``model`` (a torch module) but those of its submodule ``head``
    from ``state`` (named arrays or tensors), which must hold exactly those plus the head's (of any
    size): a pretrained network whose last layer keeps the fresh draw ``model`` was built with."""
    import torch  # the model's side only: reading the weights needs no torch

    prefix = f"{head}."
    own_head = {name for name in model.state_dict() if name.startswith(prefix)}
    if not own_head:
        raise ValueError(f"the model has no submodule {head!r} with parameters")
    body = {name: torch.as_tensor(value) for name, value in state.items() if not name.startswith(prefix)}
    missing, unexpected = model.load_state_dict(body, strict=False)
    missing = set(missing) - own_head
    if missing or unexpected:
        raise ValueError(f"the pretrained weights do not fit the model: missing {sorted(missing)[:5]}, "
                         f"unexpected {sorted(unexpected)[:5]}")
