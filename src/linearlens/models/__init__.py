"""The model zoo: MLPs, small CNNs, the LeNet-style CNN (2-D and 1-D), ResNets (the CIFAR ResNet-20 and
ResNet-18, any stage layout, 1-D or 2-D, with or without BatchNorm) and the KBGP24 polynomial
network; every model is a plain nn.Module.

A model is described by a spec, ``{"name": <zoo name>, **constructor arguments}``, which a
checkpoint stores beside the weights, so any checkpoint the pipeline writes can be rebuilt.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from ..train import load_checkpoint, save_checkpoint
from .cnn import small_cnn
from .lenet import lenet
from .mlp import mlp
from .polynomial import polynomial_net
from .resnet import cifar_resnet, resnet, resnet18, resnet20

ZOO = {"mlp": mlp, "small_cnn": small_cnn, "lenet": lenet, "resnet": resnet, "resnet18": resnet18,
       "resnet20": resnet20, "cifar_resnet": cifar_resnet, "polynomial_net": polynomial_net}


def build_model(spec: dict) -> nn.Module:
    """A fresh model from its spec, e.g. {"name": "mlp", "in_features": 64, "hidden": [32], ...}."""
    arguments = dict(spec)
    name = arguments.pop("name", None)
    if name not in ZOO:
        raise ValueError(f"model spec names {name!r}; the zoo has {sorted(ZOO)}")
    return ZOO[name](**arguments)


def save_model(path: str | Path, model: nn.Module, spec: dict, **metadata) -> None:
    """A checkpoint that ``load_model`` can rebuild: the spec, the state dict and any metadata."""
    save_checkpoint(path, model_spec=dict(spec), state_dict=model.state_dict(), metadata=metadata)


def load_model(path: str | Path, device: str | torch.device = "cpu") -> tuple[nn.Module, dict]:
    """The model of a checkpoint written by ``save_model``, in eval mode, and its metadata."""
    state = load_checkpoint(path, map_location=device)
    missing = {"model_spec", "state_dict"} - set(state)
    if missing:
        raise ValueError(f"{path} is not a linearlens model checkpoint: it lacks {sorted(missing)}")
    model = build_model(state["model_spec"]).to(device)
    model.load_state_dict(state["state_dict"])
    return model.eval(), state.get("metadata", {})


__all__ = ["ZOO", "build_model", "cifar_resnet", "lenet", "load_model", "mlp", "polynomial_net", "resnet",
           "resnet18", "resnet20", "save_model", "small_cnn"]
