"""Kernels of trained models: the empirical NTK (layer-wise Gram identity), tree kernels of
gradient-boosted ensembles, and the tools to compare them (alignment, CKA, spectra)."""

from .alignment import (
    alignment, centre, effective_rank, eigenvalues, kernel_regression, target_alignment,
    target_gram, trace_ratios,
)
from .ntk import empirical_ntk, layer_factors, ntk_block, ntk_by_jacobian, ntk_diagonal
from .trees import (
    TreeEnsembleLeaves, leaves_from_sklearn, leaves_of, leaves_from_xgboost, telescoped_predictions,
    tree_contributions, tree_kernel, tree_kernel_row_norms,
)

__all__ = [
    "alignment", "centre", "effective_rank", "eigenvalues", "empirical_ntk", "kernel_regression",
    "layer_factors", "ntk_block", "ntk_by_jacobian", "ntk_diagonal", "target_alignment", "target_gram", "trace_ratios",
    "TreeEnsembleLeaves", "leaves_from_sklearn", "leaves_of", "leaves_from_xgboost", "telescoped_predictions",
    "tree_contributions", "tree_kernel", "tree_kernel_row_norms",
]
