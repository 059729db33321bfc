"""What an NTK extraction reports beside the Gram: its spectrum, effective rank, trace ratios
and alignment with the labels, for the whole network and for each layer."""

from __future__ import annotations

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

