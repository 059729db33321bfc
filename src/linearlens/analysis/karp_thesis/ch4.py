"""Chapter 4, a one-layer transformer learning decision lists: the
summaries of V₁ behind Fig 4.1 and its claims (torch-free, numpy only).

The structure Theorem 4.4 needs is V ≈ cP, P the permutation matrix of π (P[π(a), a] = 1): in each
column a of V₁ (an input token) the entry at row π(a) stands out. The summaries run over the input
tokens' columns only (with the default vocabulary {0..L}, column 0 is never an input and keeps V₀).
"""

from __future__ import annotations

import json

import numpy as np


def read_one_step(path: str) -> dict:
    """The run's arrays by name, and its settings as a dict under ``settings``."""
    with np.load(path) as contents:
        record = {key: contents[key] for key in contents.files}
    record["settings"] = json.loads(str(record["settings"]))
    return record


def structure_entries(V: np.ndarray, permutation: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """V[π(a), a] for each column a."""
    return V[permutation[columns], columns]


def off_structure(V: np.ndarray, permutation: np.ndarray, columns: np.ndarray) -> np.ma.MaskedArray:
    """The columns of V with their structure entry V[π(a), a] masked: (rows, len(columns))."""
    mask = np.zeros((V.shape[0], len(columns)), dtype=bool)
    mask[permutation[columns], np.arange(len(columns))] = True
    return np.ma.masked_array(V[:, columns], mask)


def fraction_at_permutation(V: np.ndarray, permutation: np.ndarray, columns: np.ndarray) -> float:
    """The fraction of the columns whose largest entry sits at row π(a)."""
    return float(np.mean(np.argmax(V[:, columns], axis=0) == permutation[columns]))


def secondary_band(V: np.ndarray, permutation: np.ndarray, lists: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """V[π(a), b] for the columns b whose decision list starts with an input token a (a = f(b + 10)
    in the thesis's lists, so V₁[π(a), a − 10]): b is labelled π(a) whenever a is in the sequence."""
    first = lists[columns, 0]
    kept = np.isin(first, columns)
    return V[permutation[first[kept]], columns[kept]]


def permuted_to_diagonal(V: np.ndarray, permutation: np.ndarray) -> np.ndarray:
    """V Pᵀ: column j of V Pᵀ is column π⁻¹(j) of V, so V ≈ cP becomes c·I (the structure on the
    main diagonal)."""
    return V[:, np.argsort(permutation)]


def structure_summary(record: dict) -> dict[str, float]:
    """The numbers Fig 4.1's caption and the claims quote, over the input tokens' columns of V₁."""
    V, permutation, columns = record["V1"], record["permutation"], record["input_tokens"]
    entries = structure_entries(V, permutation, columns)
    off = off_structure(V, permutation, columns)
    analytic = record["analytic_structure"]
    return {
        "columns": int(len(columns)),
        "fraction_at_permutation": fraction_at_permutation(V, permutation, columns),
        "structure_mean": float(entries.mean()),  # c
        "structure_min": float(entries.min()),
        "structure_max": float(entries.max()),
        "largest_off_structure_mean": float(off.max(axis=0).mean()),
        "off_structure_mean": float(off.mean()),
        "secondary_band_mean": float(secondary_band(V, permutation, record["lists"], columns).mean()),
        "analytic_structure_mean": float(analytic.mean()),
        "analytic_rms_deviation": float(np.sqrt(np.mean((entries - analytic) ** 2))),
        "init_std": float(record["V0"].std()),
    }


def vocabulary_text(settings: dict) -> str:
    """The run's vocabulary convention, as the figure and the claims state it: f(i) = i mod (L + 1)
    permutes {0..L}, not the thesis's token set [L] = {1..L}."""
    size = settings["vocabulary_length"]
    if settings["vocabulary"] == "zero_to_L":
        return (f"vocabulary {{0..{size}}} (f(i) = i mod {size + 1}, so π permutes {size + 1} tokens; V is "
                f"{size + 1} × {size + 1}), inputs drawn from {{1..{size}}}")
    return f"vocabulary {{0..{size - 1}}} (f(i) = i mod {size}; V is {size} × {size}), inputs drawn from all of it"


def run_text(settings: dict) -> str:
    """The step's settings in one line: L, n, η, V₀, N, seed."""
    return (f"L = {settings['vocabulary_length']}, n = {settings['sequence_length']}, η = {settings['learning_rate']:,g}, "
            f"V₀ i.i.d. N(0, {settings['init_std']:g}²), W = 0 (not updated), gradient averaged over "
            f"N = {settings['sequences']:,} sequences (seed {settings['seed']})")
