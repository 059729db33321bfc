"""Chapter 4, a one-layer transformer learning decision lists: the runs behind Fig 4.1 (Sec 4.3.4).

The model (eq. 4.1) is f_{W,V}(X) = σ(V X σ(Xᵀ W X)) with σ the softmax of each column and X the
one-hot columns of a sequence's tokens; its loss on one sequence (eq. 4.2) is the mean over the
positions j of −log f_{W,V}(X)[y_j, j]. The task (Sec 4.2.2, Sec 4.3.4): f(i) = i mod m, the
permutation π(i) = f(i + 20), each token's decision list DL(i) = (f(i + 10), f(i + 20), f(i + 30), i),
and the label of a token a of a sequence s is π of the first entry of DL(a) that is in s.

Fig 4.1 is one gradient step on V from V₀ ~ N(0, std²) with W = 0 kept fixed. With W = 0 every
attention column is uniform, so every position's attended vector is p = (1/n) Σ_k e_{s_k} and every
output column is softmax(V p): the gradient of eq. (4.2) is (softmax(V p) − ȳ) pᵀ, ȳ the label
histogram divided by n. Its mean over N sampled sequences (the thesis does not give N) estimates
the population gradient; ``uniform_attention_gradient`` computes it for all sequences at once.

Vocabulary: f(i) = i mod (L + 1) is a bijection of {0..L}, not of the thesis's [L] =
{1..L} (π(181) = 0 at L = 200). ``zero_to_L`` (the configured default) takes the vocabulary {0..L}
(V is (L + 1) × (L + 1)) and draws the inputs from {1..L}; list entries equal to 0 never occur in a
sequence. ``zero_to_L_minus_1`` takes the tokens {0..L − 1} with f(i) = i mod L, inputs from all
of them. Each run records its choice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from math import comb

import numpy as np
import torch
from torch import Tensor

# The vocabulary conventions: (modulus of f as a function of L, first input token).
VOCABULARIES = {"zero_to_L": (1, 1), "zero_to_L_minus_1": (0, 0)}


@dataclass(frozen=True)
class DecisionLists:
    """The decision-list task over the vocabulary {0..modulus − 1}."""

    modulus: int  # f(i) = i mod modulus; the vocabulary is {0..modulus − 1}
    permutation: np.ndarray  # π, one entry per vocabulary token
    lists: np.ndarray  # (vocabulary, M): each token's decision list, its last entry the token itself
    input_tokens: np.ndarray  # the tokens sequences are drawn from

    @property
    def vocabulary_size(self) -> int:
        return self.modulus


def decision_lists(vocabulary_length: int, vocabulary: str = "zero_to_L", permutation_shift: int = 20,
                   list_shifts=(10, 20, 30)) -> DecisionLists:
    """The thesis's task for vocabulary size L: π(i) = f(i + shift), DL(i) = (f(i + s₁), …, i)."""
    extra, first_input = VOCABULARIES[vocabulary]
    modulus = vocabulary_length + extra
    tokens = np.arange(modulus)
    permutation = (tokens + permutation_shift) % modulus
    lists = np.stack([(tokens + shift) % modulus for shift in list_shifts] + [tokens], axis=1)
    return DecisionLists(modulus, permutation, lists, np.arange(first_input, vocabulary_length + first_input))


def sample_sequences(task: DecisionLists, length: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` sequences of ``length`` distinct input tokens, uniform over the ordered n-permutations
    (the first n of a uniformly shuffled vocabulary); shape (count, length)."""
    if length > len(task.input_tokens):
        raise ValueError(f"sequences of {length} distinct tokens from {len(task.input_tokens)} input tokens")
    keys = rng.random((count, len(task.input_tokens)))
    return task.input_tokens[np.argsort(keys, axis=1)[:, :length]]


def membership(task: DecisionLists, sequences: np.ndarray) -> np.ndarray:
    """(count, vocabulary) booleans: whether each token is in each sequence."""
    present = np.zeros((len(sequences), task.vocabulary_size), dtype=bool)
    np.put_along_axis(present, sequences, True, axis=1)
    return present


def label_determining_tokens(task: DecisionLists, sequences: np.ndarray) -> np.ndarray:
    """For each position, the first entry of its token's decision list present in the sequence (it
    exists: a list ends with the token itself)."""
    present = membership(task, sequences)
    candidates = task.lists[sequences]  # (count, n, M)
    found = np.take_along_axis(present[:, None, :], candidates, axis=2)
    first = np.argmax(found, axis=2)
    return np.take_along_axis(candidates, first[..., None], axis=2)[..., 0]


def decision_list_labels(task: DecisionLists, sequences: np.ndarray) -> np.ndarray:
    """y_j = π(label-determining token of s_j), shape (count, n)."""
    return task.permutation[label_determining_tokens(task, sequences)]


# --- the model and its loss (eqs. 4.1, 4.2) -------------------------------------------------------

def one_hot_columns(sequences: np.ndarray, vocabulary_size: int, dtype=torch.float64) -> Tensor:
    """X for each sequence: (count, vocabulary, n), column j the one-hot vector of token s_j."""
    tokens = torch.as_tensor(sequences, dtype=torch.long)
    return torch.nn.functional.one_hot(tokens, vocabulary_size).to(dtype).transpose(1, 2)


def transformer_output(W: Tensor, V: Tensor, X: Tensor) -> Tensor:
    """Eq. (4.1), f_{W,V}(X) = σ(V X σ(Xᵀ W X)) with σ the softmax of each column; X is (count, d, n)."""
    attention = torch.softmax(X.transpose(1, 2) @ W @ X, dim=1)  # (count, n keys, n queries)
    return torch.softmax(V @ X @ attention, dim=1)


def sequence_losses(W: Tensor, V: Tensor, X: Tensor, labels: np.ndarray) -> Tensor:
    """Eq. (4.2) per sequence: (1/n) Σ_j −log f_{W,V}(X)[y_j, j]."""
    output = transformer_output(W, V, X)
    y = torch.as_tensor(labels, dtype=torch.long, device=output.device)
    return -torch.log(output.gather(1, y[:, None, :])[:, 0, :]).mean(dim=1)


# --- one gradient step on V under uniform attention (W = 0) ---------------------------------------

def attended_vectors(task: DecisionLists, sequences: np.ndarray, dtype=torch.float64) -> Tensor:
    """p = (1/n) Σ_k e_{s_k} per sequence (the output of uniform attention), (count, vocabulary)."""
    return torch.as_tensor(membership(task, sequences), dtype=dtype) / sequences.shape[1]


def label_histograms(task: DecisionLists, labels: np.ndarray, dtype=torch.float64) -> Tensor:
    """ȳ = (1/n) Σ_j e_{y_j} per sequence, (count, vocabulary)."""
    y = torch.as_tensor(labels, dtype=torch.long)
    histogram = torch.zeros(len(labels), task.vocabulary_size, dtype=dtype)
    histogram.scatter_add_(1, y, torch.ones_like(y, dtype=dtype))
    return histogram / labels.shape[1]


def uniform_attention_gradient(task: DecisionLists, V: Tensor, sequences: np.ndarray, labels: np.ndarray) -> Tensor:
    """The mean over the sequences of ∇_V eq. (4.2) at W = 0: mean of (softmax(V p) − ȳ) pᵀ."""
    p = attended_vectors(task, sequences, V.dtype).to(V.device)
    residual = torch.softmax(p @ V.T, dim=1) - label_histograms(task, labels, V.dtype).to(V.device)
    return residual.T @ p / len(sequences)


def expected_structure_entries(task: DecisionLists, length: int, learning_rate: float) -> np.ndarray:
    """The population value of V₁[π(a), a] per input token a, to first order in V₀ (softmax(V₀ p)
    uniform): η/(n·L_in)·(E[#{j: y_j = π(a)} | a ∈ s] − n/|vocabulary|), L_in the number of input
    tokens. The expectation is exact: a token b of s is labelled π(a) when a is b's label-determining
    token, i.e. b, a ∈ s and the entries of DL(b) before a are not; given a ∈ s (the other n − 1
    tokens a uniform subset of the other L_in − 1) that is a hypergeometric probability."""
    inputs = set(task.input_tokens.tolist())
    given_a = comb(len(inputs) - 1, length - 1)
    expected = dict.fromkeys(inputs, 0.0)
    for b in inputs:
        entries = task.lists[b].tolist()
        for k, a in enumerate(entries):
            if a not in inputs or a in entries[:k]:
                continue  # never in a sequence, or not its first occurrence in the list
            inside, outside = {a, b}, {t for t in entries[:k] if t in inputs}
            if not inside & outside and len(inside) <= length:
                expected[a] += comb(len(inputs) - len(inside) - len(outside), length - len(inside)) / given_a
    return np.array([learning_rate / (length * len(inputs)) * (expected[a] - length / task.vocabulary_size)
                     for a in task.input_tokens.tolist()])


def one_step_run(spec: dict) -> dict[str, np.ndarray]:
    """Fig 4.1: V₁ = V₀ − η G from V₀ ~ N(0, init_std²), G the closed-form gradient at W = 0 averaged
    over ``sequences`` sampled sequences. The sequences and V₀ come from independent streams of
    ``seed``. Returns what the run file keeps: V₀, V₁, the task, the analytic c per token, the settings."""
    task = decision_lists(spec["vocabulary_length"], spec["vocabulary"], spec["permutation_shift"],
                          spec["list_shifts"])
    sequence_stream, init_stream = (np.random.default_rng(s) for s in np.random.SeedSequence(spec["seed"]).spawn(2))
    sequences = sample_sequences(task, spec["sequence_length"], spec["sequences"], sequence_stream)
    labels = decision_list_labels(task, sequences)
    size = task.vocabulary_size
    V0 = torch.as_tensor(init_stream.normal(0.0, spec["init_std"], (size, size)))
    gradient = uniform_attention_gradient(task, V0, sequences, labels)
    V1 = V0 - spec["learning_rate"] * gradient
    analytic = expected_structure_entries(task, spec["sequence_length"], spec["learning_rate"])
    return {"V0": V0.numpy(), "V1": V1.numpy(), "permutation": task.permutation, "lists": task.lists,
            "input_tokens": task.input_tokens, "analytic_structure": analytic,
            "label_counts": np.bincount(labels.ravel(), minlength=size),
            "settings": np.array(json.dumps({**spec, "vocabulary_size": size, "W": "0, not updated"}, sort_keys=True))}
