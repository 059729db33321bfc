"""Kernel extraction: the empirical NTK of a saved model on a probe set, saved with a summary."""

from __future__ import annotations

import numpy as np
import torch

from ..data import load_prepared
from ..data.transforms import random_subset
from ..models import load_model
from ..train import choose_device, dtype_from_name, set_threads
from .ntk import empirical_ntk
from .summary import ntk_summary


def probe_examples(probe_npz, split: str, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` seeded examples of one split of a prepared dataset: inputs, labels, their indices."""
    arrays = load_prepared(probe_npz)
    x, y = arrays[f"x_{split}"], arrays[f"y_{split}"]
    if n > len(y):
        raise ValueError(f"probe asks for {n} examples; the {split} split of {probe_npz} has {len(y)}")
    index = random_subset(len(y), n, seed)  # sorted
    return x[index], y[index], index


def extract_ntk(checkpoint, probe_npz, settings: dict, device: str, threads: int, gram_path) -> dict:
    """Write the Gram (and per-layer Grams) to ``gram_path`` as npz; return the summary."""
    set_threads(threads)
    dtype = dtype_from_name(settings.get("dtype", "float64"))
    device = choose_device(device)
    model, metadata = load_model(checkpoint, device)
    model = model.to(dtype)
    probe = settings["probe"]
    x, y, index = probe_examples(probe_npz, probe["split"], probe["n"], probe.get("seed", 0))
    inputs = torch.as_tensor(x, dtype=dtype, device=device)
    layers = empirical_ntk(model, inputs, output=settings.get("output", "full"), per_layer=True)
    gram = sum(layers.values())
    labels = torch.as_tensor(y).long()
    summary = ntk_summary(gram.cpu(), labels, {k: v.cpu() for k, v in layers.items()}
                          if settings.get("per_layer", True) else None)
    arrays = {"gram": gram.cpu().numpy(), "labels": y, "probe_index": index}
    if settings.get("per_layer", True):
        arrays.update({f"layer:{name}": g.cpu().numpy() for name, g in layers.items()})
    np.savez_compressed(gram_path, **arrays)
    return {"checkpoint": str(checkpoint), "checkpoint_metadata": metadata, "probe": probe,
            "dtype": str(dtype).removeprefix("torch."), **summary}
