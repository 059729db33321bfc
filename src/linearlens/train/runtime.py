"""Runtime helpers shared by every training script: device choice, seeding, threads, float64,
and checkpoints that survive an interrupted run."""

from __future__ import annotations

import contextlib
import os
import random
from pathlib import Path

import numpy as np
import torch

from ..data.damaged import damaged_artefact, zip_damage
from .devices import require_cuda


def choose_device(name: str = "auto") -> torch.device:
    """``auto`` picks CUDA when available; ``cuda`` insists on it and fails clearly without it (a
    job settles its device with ``devices.claim_device`` first)."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda"):
        require_cuda()
    return torch.device(name)


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python, NumPy and torch; return a torch generator for explicit use."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def set_threads(threads: int) -> None:
    """Use exactly the cores the rule was given (Snakemake's ``threads``)."""
    threads = max(1, int(threads))
    torch.set_num_threads(threads)
    os.environ["OMP_NUM_THREADS"] = str(threads)


def full_float32_matmuls() -> None:
    """Turn off TF32 on CUDA: iterative linearisation's small per-step updates need full float32."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


@contextlib.contextmanager
def full_float32():
    """TF32 off inside, restored after (also usable as a decorator). cuDNN convolutions use TF32
    by default on CUDA: a float32 ResNet-20 NTK on an H100 came out 2e-3 off its float64 value."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    full_float32_matmuls()
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def dtype_from_name(name: str) -> torch.dtype:
    dtypes = {"float32": torch.float32, "float64": torch.float64}
    if name not in dtypes:
        raise ValueError(f"dtype must be one of {sorted(dtypes)}, got {name!r}")
    return dtypes[name]


@contextlib.contextmanager
def default_dtype(name: str):
    """Temporarily make ``name`` torch's default float type (float64 for the papers' long sums)."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype_from_name(name))
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


def save_checkpoint(path: str | Path, **state) -> None:
    """Write atomically: an interrupted save never leaves a truncated checkpoint behind."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    torch.save(state, partial)
    os.replace(partial, path)


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict:
    """A checkpoint's state; a damaged file fails with the command that rebuilds it."""
    try:
        return torch.load(path, map_location=map_location, weights_only=False)
    except FileNotFoundError:
        raise
    except Exception as error:
        # torch.save writes a zip archive; only a broken archive is damage. A sound one that fails
        # to load (a CUDA tensor on a CPU machine) keeps torch's own error.
        problem = zip_damage(path)
        if problem is None:
            raise
        raise damaged_artefact(path, problem) from error
