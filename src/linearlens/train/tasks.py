"""A prepared dataset as the tensors a training run uses, and how well a model classifies them:
the one task loader and the one accuracy of every experiment."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from ..data.prepared import load_prepared
from ..data.transforms import balanced_order

LAYOUTS = ("as_is", "flat", "channels")


def load_task(data_npz, *, dtype: torch.dtype = torch.float32, layout: str = "as_is", targets: str = "classes",
              train_size: int | None = None, subset_seed: int = 0,
              device: str | torch.device = "cpu") -> dict[str, Tensor]:
    """{x_train, y_train, x_test, y_test} on ``device``.

    layout: ``as_is``; ``flat`` (one feature vector per example); ``channels`` (a channel axis
    for convolutions: (N, L) signals become (N, 1, L)). targets: ``classes`` (int64 labels) or
    ``values`` (real targets in ``dtype``, e.g. {0, 1} labels of a scalar-output network).
    train_size: a class-balanced subset of the training set, nested across sizes for one seed.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    if targets not in ("classes", "values"):
        raise ValueError(f"targets must be 'classes' or 'values', got {targets!r}")
    arrays = load_prepared(data_npz)
    task = {}
    for split in ("train", "test"):
        x = torch.as_tensor(arrays[f"x_{split}"], dtype=dtype)
        if layout == "flat":
            x = x.reshape(len(x), -1)
        elif layout == "channels" and x.dim() == 2:
            x = x.unsqueeze(1)
        task[f"x_{split}"] = x
        task[f"y_{split}"] = torch.as_tensor(arrays[f"y_{split}"], dtype=torch.int64 if targets == "classes" else dtype)
    if train_size is not None:
        if train_size > len(task["y_train"]):
            raise ValueError(f"train_size {train_size} exceeds the {len(task['y_train'])} training examples "
                             f"of {data_npz}")
        chosen = torch.as_tensor(np.sort(balanced_order(arrays["y_train"], subset_seed)[:train_size]))
        task["x_train"], task["y_train"] = task["x_train"][chosen], task["y_train"][chosen]
    return {name: t.to(device) for name, t in task.items()}


def predicted_classes(outputs: Tensor) -> Tensor:
    """The arg-max class of multi-output logits (N, C); a single output per example is a
    probability of class 1, thresholded at 0.5."""
    if outputs.dim() == 2 and outputs.shape[1] > 1:
        return outputs.argmax(1)
    return (outputs.reshape(-1) > 0.5).long()


def correct(outputs: Tensor, labels: Tensor) -> int:
    return int((predicted_classes(outputs) == labels.reshape(-1)).sum())


def accuracy(outputs: Tensor, labels: Tensor) -> float:
    """Fraction of examples classified correctly (``predicted_classes``)."""
    return correct(outputs, labels) / len(labels)


@torch.no_grad()
def classification_metrics(logits_of: Callable[[Tensor], Tensor], x: Tensor, y: Tensor,
                           batch_size: int = 1000) -> tuple[float, float]:
    """(accuracy, mean cross-entropy) of the logits ``logits_of(x)``, in batches."""
    hits, loss = 0, 0.0
    for start in range(0, len(x), batch_size):
        logits = logits_of(x[start:start + batch_size]).float()
        labels = y[start:start + batch_size]
        hits += correct(logits, labels)
        loss += float(F.cross_entropy(logits, labels, reduction="sum"))
    return hits / len(x), loss / len(x)


def split_metrics(model: torch.nn.Module, task: dict[str, Tensor]) -> dict[str, float]:
    """{train,test}_{accuracy,loss} of a classifier, in eval mode (BatchNorm on its running statistics)."""
    model.eval()
    row = {}
    for split in ("train", "test"):
        accuracy, loss = classification_metrics(model, task[f"x_{split}"], task[f"y_{split}"])
        row.update({f"{split}_accuracy": accuracy, f"{split}_loss": loss})
    return row
