"""Analysis for Chapter 2 (background). Torch-free summaries (pandas and numpy only) behind Fig 2.1 (four
Gaussians equally far apart in parameters but not as distributions; analytic). Fig 2.2 (tangent spaces and
learning paths) is a drawing, in the figures module only."""

from __future__ import annotations

import numpy as np
import pandas as pd

PAIR_NAMES = ("AB", "CD")  # the middle and the right panel of Fig 2.1
PAIR_MEASURES = ("parameter_distance", "kl_forward", "kl_backward", "interval_overlap", "density_overlap",
                 "bayes_accuracy")


def read_gaussians(path: str) -> dict[str, np.ndarray]:
    with np.load(path) as contents:
        return {key: contents[key] for key in contents.files}


def pair_table(record: dict[str, np.ndarray]) -> pd.DataFrame:
    """One row per pair (AB, CD): its measures, and the symmetrised KL (Jeffreys divergence)."""
    table = pd.DataFrame({measure: [float(record[f"{pair}/{measure}"]) for pair in PAIR_NAMES]
                          for measure in PAIR_MEASURES}, index=list(PAIR_NAMES))
    table["kl_symmetric"] = table["kl_forward"] + table["kl_backward"]
    return table
