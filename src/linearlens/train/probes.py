"""Session probes shared by experiments: loss and accuracy of a model on named groups of examples
(C-score deciles, clean and noisy labels, groups with and without a spurious feature, a test set)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn


@dataclass
class Group:
    """Examples and the labels they are scored against (noisy examples: their wrong labels)."""

    name: str
    x: Tensor
    y: Tensor


def summed_loss(outputs: Tensor, labels: Tensor) -> Tensor:
    """Cross-entropy of multi-output logits; for one output per example, the logistic loss of the
    logit against {0, 1} labels. Summed over the examples."""
    if outputs.dim() == 2 and outputs.shape[1] > 1:
        return F.cross_entropy(outputs, labels, reduction="sum")
    return F.binary_cross_entropy_with_logits(outputs.reshape(-1), labels.reshape(-1).to(outputs.dtype),
                                              reduction="sum")


def predicted(outputs: Tensor) -> Tensor:
    """Arg-max class; for one logit per example, its sign."""
    if outputs.dim() == 2 and outputs.shape[1] > 1:
        return outputs.argmax(1)
    return (outputs.reshape(-1) > 0).long()


@torch.no_grad()
def group_metrics(model: nn.Module | Callable[[Tensor], Tensor], groups: list[Group],
                  batch_size: int = 1000) -> dict[str, float]:
    """{<group>_loss, <group>_accuracy} (mean loss, share classified right) of every group, with
    the model in evaluation mode. The groups go through the model together, in batches of
    ``batch_size`` (many small groups cost a few forward passes, not one each)."""
    if isinstance(model, nn.Module):
        was_training = model.training
        model.eval()
    x = torch.cat([group.x for group in groups])
    outputs = torch.cat([model(x[start:start + batch_size]).float() for start in range(0, len(x), batch_size)])
    row, offset = {}, 0
    for group in groups:
        mine, labels = outputs[offset:offset + len(group.x)], group.y
        offset += len(group.x)
        row[f"{group.name}_loss"] = float(summed_loss(mine, labels)) / len(group.x)
        row[f"{group.name}_accuracy"] = int((predicted(mine) == labels.reshape(-1)).sum()) / len(group.x)
    if isinstance(model, nn.Module):
        model.train(was_training)
    return row


class GroupProbe:
    """``group_metrics`` as a session probe."""

    def __init__(self, model, groups: list[Group]):
        self.model, self.groups = model, groups

    def __call__(self, session) -> dict[str, float]:
        return group_metrics(self.model, self.groups)
