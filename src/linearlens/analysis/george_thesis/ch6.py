"""Analysis for Chapter 6 (NTK alignment) and appendix B. Torch-free summaries (pandas and numpy only) behind
Figs 6.1-6.6 and B.1-B.8 (tangent-kernel spectrum, alignment with the labels, SuperNat, complexity
measures); Fig 6.5's left half is an algorithm box, drawn with its curves."""

from __future__ import annotations

import numpy as np
import pandas as pd

# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and its alignment with the labels over training (alignment) ---

# --- end of alignment ---

# --- Figs 6.4, B.7: alignment on easy vs difficult examples (easy_difficult) ---

# --- end of easy_difficult ---

# --- Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task (disk) ---

DISK_RATIO_INDEX = 20  # the thesis's anisotropy measure λ20/λ1 (eigenvalues numbered from 1)


def read_npz(path) -> dict[str, np.ndarray]:
    with np.load(path) as contents:
        return {key: contents[key] for key in contents.files}


def label_correlations(vectors: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """|Pearson correlation| of each eigenfunction (columns of ``vectors``, sampled on the grid)
    with the grid's labels: how much class structure (the disk) each carries."""
    centred_vectors = vectors - vectors.mean(0)
    centred_labels = labels - labels.mean()
    norms = np.linalg.norm(centred_vectors, axis=0) * np.linalg.norm(centred_labels)
    return np.abs(centred_labels @ centred_vectors) / np.where(norms > 0, norms, np.inf)


def disk_rows(run: dict[str, np.ndarray]) -> pd.DataFrame:
    """One row per snapshot of a disk run: its seed, iteration, λ20/λ1, the largest |correlation|
    of the top eigenfunctions with the labels and which eigenfunction carries it (numbered from 1)."""
    correlations = np.stack([label_correlations(v, run["grid_labels"].astype(float)) for v in run["eigenvectors"]])
    return pd.DataFrame({"seed": int(run["seed"]), "iteration": run["rows"], "ratio": run["ratios"][:, DISK_RATIO_INDEX - 1],
                         "label_correlation": correlations.max(1), "most_correlated": correlations.argmax(1) + 1})


def disk_summary(paths) -> pd.DataFrame:
    """``disk_rows`` of every run (one seed per file)."""
    return pd.concat([disk_rows(read_npz(path)) for path in paths], ignore_index=True)


def percent(value: float) -> str:
    """A small share as the thesis writes it: 1.5%, 0.2%, 0.04%."""
    return f"{100 * value:.2g}%"

# --- end of disk ---

# --- Fig B.2: spectral bias of a random MLP's tangent kernel (spectral_bias) ---

SPECTRAL_RATIO_INDEX = 10  # the thesis's λ10/λ1 ≈ 4% (eigenvalues numbered from 1)
FOURIER_RANGE = 25  # "the first half of the spectrum": eigenvectors j < 25 of 50


def frequency_trend(dominant: np.ndarray, count: int = FOURIER_RANGE) -> dict[str, float]:
    """How monotone the dominant DFT frequency is in the eigen-index over the first ``count``
    eigenvectors: Spearman ρ(j, frequency) and the share of steps j → j + 1 that do not lower it."""
    frequencies = pd.Series(np.asarray(dominant[:count], dtype=float))
    index = pd.Series(np.arange(len(frequencies), dtype=float))
    return {"spearman": float(index.corr(frequencies, method="spearman")),
            "monotone_share": float(np.mean(np.diff(frequencies.to_numpy()) >= 0)), "count": len(frequencies)}

# --- end of spectral_bias ---

# --- Fig 6.5: SuperNat vs gradient descent on noisy linear regression (supernat) ---

# --- end of supernat ---

# --- Fig B.3: which norm measures capacity (random RBF features) (rbf_capacity) ---

# --- end of rbf_capacity ---

# --- Fig B.1: output change along the Jacobian's top singular directions (perturbation) ---

# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

# --- end of complexity ---
