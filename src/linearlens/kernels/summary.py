"""What a kernel extraction reports beside the Gram: its spectrum, effective rank, trace ratios
and alignment with the labels, for the whole network and for each layer."""

from __future__ import annotations

import numpy as np
import torch

from .alignment import effective_rank, eigenvalues, target_alignment, trace_ratios

TRACE_RATIO_RANKS = (1, 10, 40, 80, 160)  # George thesis 6.3.2 highlights 40, 80 and 160


def ntk_summary(gram: torch.Tensor, labels: torch.Tensor,
                per_layer: dict[str, torch.Tensor] | None = None) -> dict:
    """Numbers for a (n, c, n, c) or (n, n) NTK Gram of a probe set with integer labels."""
    values = eigenvalues(gram.double())
    ratios = trace_ratios(values)
    summary = {
        "shape": list(gram.shape),
        "eigenvalues_top": values[:20].tolist(),
        "eigenvalue_max": values[0].item(),
        "eigenvalue_mean": values.mean().item(),
        "eigenvalue_median": values.median().item(),
        "effective_rank": effective_rank(values).item(),
        "trace_ratios": {k: ratios[k - 1].item() for k in TRACE_RATIO_RANKS if k <= len(ratios)},
        "label_cka": target_alignment(gram.double(), labels).item(),
        "label_alignment_uncentred": target_alignment(gram.double(), labels, centred=False).item(),
    }
    if per_layer:
        summary["per_layer_label_cka"] = {
            name: target_alignment(layer.double(), labels).item() for name, layer in per_layer.items()}
    return summary


def tree_kernel_summary(row_norms: np.ndarray, telescoped: np.ndarray, predicted: np.ndarray) -> dict:
    """Per-tree kernel-row norms of a probe set and how exactly the telescoped sum reproduces
    the ensemble's own predictions."""
    return {
        "n_probe": int(row_norms.shape[0]),
        "n_trees": int(row_norms.shape[1]),
        "mean_row_norm_per_tree": row_norms.mean(0).tolist(),
        "mean_row_norm": float(row_norms.mean()),
        "max_abs_telescoping_error": float(np.max(np.abs(telescoped - predicted))),
    }
