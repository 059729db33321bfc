"""Pretrained weights in torch's file format (a ``.pth`` state dict: a zip of a pickle and raw
tensor storages), such as torchvision's ImageNet ResNet-18, and loading them into a zoo model
whose last layer is new (a fine-tuning start).

The file is unpickled with ``weights_only=True``: only tensors and plain containers, never code.
Its checksum is the download layer's business (``data.download.verify``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn


def read_state_dict(path: str | Path) -> dict[str, Tensor]:
    """The tensors of a saved state dict, by name."""
    path = Path(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        raise ValueError(f"{path} is not a torch state dict file: {error}") from error
    if not isinstance(state, dict) or not state or not all(
            isinstance(k, str) and isinstance(v, Tensor) for k, v in state.items()):
        raise ValueError(f"{path} holds no state dict of named tensors (found {type(state).__name__})")
    return dict(state)


def load_state_arrays(raw_dir: Path, filename: str) -> dict[str, np.ndarray]:
    """The registry's reader of a weights source: its state dict as arrays."""
    return {name: tensor.numpy() for name, tensor in read_state_dict(Path(raw_dir) / filename).items()}


def load_except_head(model: nn.Module, state: dict[str, Tensor], head: str = "fc") -> None:
    """Every parameter and buffer of ``model`` but those of its submodule ``head`` from ``state``,
    which must hold exactly those plus the head's (any size): a pretrained network whose last layer
    keeps the fresh draw ``model`` was built with."""
    prefix = f"{head}."
    own_head = {name for name in model.state_dict() if name.startswith(prefix)}
    if not own_head:
        raise ValueError(f"the model has no submodule {head!r} with parameters")
    body = {name: tensor for name, tensor in state.items() if not name.startswith(prefix)}
    missing, unexpected = model.load_state_dict(body, strict=False)
    missing = set(missing) - own_head
    if missing or unexpected:
        raise ValueError(f"the pretrained weights do not fit the model: missing {sorted(missing)[:5]}, "
                         f"unexpected {sorted(unexpected)[:5]}")
