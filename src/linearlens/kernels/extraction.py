"""Kernel extraction: the empirical NTK of a saved model on a probe set, saved with a summary."""

from __future__ import annotations

import numpy as np
import torch

from ..data.prepared import load_prepared
from ..data.transforms import random_subset
from ..models.zoo import load_model
from ..train.runtime import choose_device, dtype_from_name, set_threads
from ..train.trees import load_tree_ensemble
from .ntk import empirical_ntk
from .summary import ntk_summary
from .trees import leaves_of, telescoped_predictions, tree_contributions, tree_kernel, tree_kernel_row_norms


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
    per_layer = settings.get("per_layer", True)
    layers = empirical_ntk(model, inputs, output=settings.get("output", "full"), per_layer=per_layer)
    gram = sum(layers.values()) if per_layer else layers
    labels = torch.as_tensor(y).long()
    summary = ntk_summary(gram.cpu(), labels, {k: v.cpu() for k, v in layers.items()}
                          if per_layer else None)
    arrays = {"gram": gram.cpu().numpy(), "labels": y, "probe_index": index}
    if per_layer:
        arrays.update({f"layer:{name}": g.cpu().numpy() for name, g in layers.items()})
    np.savez_compressed(gram_path, **arrays)
    return {"checkpoint": str(checkpoint), "checkpoint_metadata": metadata, "probe": probe,
            "dtype": str(dtype).removeprefix("torch."), **summary}


def extract_tree_kernel(ensemble_path, probe_npz, settings: dict, kernel_path) -> dict:
    """The tree kernels of a saved boosted ensemble on a probe set, written to ``kernel_path``
    (npz): per-tree kernel row norms and telescoping terms, and the mean kernel over trees
    against the training set; the summary checks that the telescoped sum is the prediction."""
    model, metadata = load_tree_ensemble(ensemble_path)
    x_train, y_train = metadata["x_train"], metadata["y_train"]
    probe = settings["probe"]
    x, y, index = probe_examples(probe_npz, probe["split"], probe["n"], probe.get("seed", 0))
    x = x.reshape(len(x), -1).astype(np.float64)
    if x.shape[1] != x_train.shape[1]:
        raise ValueError(f"probe set {probe_npz} has {x.shape[1]} features; the ensemble "
                         f"{ensemble_path} was fitted on {x_train.shape[1]}")
    leaves = leaves_of(model, x_train)
    probe_leaves = leaves.leaf_ids(model, x)
    norms = tree_kernel_row_norms(leaves, probe_leaves)
    telescoped = telescoped_predictions(leaves, probe_leaves, y_train)
    predicted = np.asarray(model.predict(x), dtype=np.float64)
    arrays = {"row_norms": norms, "contributions": tree_contributions(leaves, probe_leaves, y_train),
              "telescoped": telescoped, "predicted": predicted, "labels": y, "probe_index": index}
    if settings.get("mean_kernel", True):
        kernel = sum(tree_kernel(leaves, probe_leaves, t) for t in range(leaves.n_trees))
        arrays["mean_kernel"] = kernel.toarray() / leaves.n_trees
    np.savez_compressed(kernel_path, **arrays)
    scale = max(np.abs(predicted).max(), 1e-300)
    return {"ensemble": str(ensemble_path), "library": leaves.library, "n_trees": leaves.n_trees,
            "n_train": leaves.n_train, "probe": probe, "reg_lambda": leaves.reg_lambda,
            "learning_rate": leaves.learning_rate,
            "telescoped_vs_predict_max_relative_error": float(np.abs(telescoped - predicted).max() / scale),
            "mean_row_norm_per_tree": norms.mean(0).tolist(),
            "mean_row_norm": float(norms.mean()),
            "probe_mse": float(np.mean((predicted - y.astype(np.float64)) ** 2)),
            "ensemble_metadata": {k: v for k, v in metadata.items() if k not in ("x_train", "y_train")}}
