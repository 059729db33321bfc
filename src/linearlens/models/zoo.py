"""The model zoo: a model is described by a spec, ``{"name": <zoo name>, **constructor arguments}``,
which a checkpoint stores beside the weights, so any checkpoint the pipeline writes can be rebuilt.

A zoo name is a function of a module of ``linearlens.models`` marked ``@zoo_model`` (``names``). The
zoo imports only the module that defines it, so a job runs the model code it uses and nothing else, and
its code inputs say so: adding a model module reruns no result.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import torch
from torch import nn

from ..train.runtime import load_checkpoint, save_checkpoint
from .names import model_module


def model_constructor(name: str):
    """The function that builds the zoo model ``name``."""
    return getattr(importlib.import_module(model_module(name)), name)


def build_model(spec: dict) -> nn.Module:
    """A fresh model from its spec, e.g. {"name": "mlp", "in_features": 64, "hidden": [32], ...}."""
    arguments = dict(spec)
    return model_constructor(arguments.pop("name", None))(**arguments)


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
