"""Language-model batches and losses over a byte-token stream: next-token prediction for a decoder
(``causal``) and BERT's masked-LM objective for an encoder (``masked``).

Training batches are random windows of the training stream, drawn from a generator the caller
seeds per step, so every model that is given the same seed sees the same batches in the same
order. The validation set is fixed: the first non-overlapping windows of the validation stream,
masked (for the masked objective) by a fixed seed, so every model is scored on the same targets.

Streams stay in their stored dtype (uint8 bytes; ``data.text.token_dtype``): a corpus of billions
of tokens as int64 would take eight times the memory. Only a batch's windows become int64.
A batch too big for the device is stepped in micro-batches (``accumulate_gradients``) and scored
in chunks, with the full batch's gradient and loss.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ..data.text import BYTE_TOKENS
from .batches import seeded_generator

MASK_TOKEN = BYTE_TOKENS  # the token after the 256 bytes
VOCABULARY = BYTE_TOKENS + 1
IGNORED = -100  # targets that carry no loss
OBJECTIVES = ("causal", "masked")
MASK_RATE = 0.15  # BERT: 15% of positions predicted; of those 80% [MASK], 10% a random byte, 10% kept


def random_windows(tokens: np.ndarray, count: int, length: int, generator: torch.Generator) -> torch.Tensor:
    """``count`` windows of ``length`` tokens at random offsets of the stream, as int64."""
    offsets = torch.randint(0, len(tokens) - length + 1, (count,), generator=generator)
    return widened(np.asarray(tokens)[offsets.numpy()[:, None] + np.arange(length)])


def leading_windows(tokens: np.ndarray, count: int, length: int) -> torch.Tensor:
    """The first ``count`` non-overlapping windows of the stream, as int64."""
    if count * length > len(tokens):
        raise ValueError(f"{count} windows of {length} need {count * length:,} tokens; the stream has {len(tokens):,}")
    return widened(np.asarray(tokens)[: count * length].reshape(count, length))


def widened(windows: np.ndarray) -> torch.Tensor:
    """Token ids as torch's index type (a batch, never a whole stream)."""
    return torch.from_numpy(windows.astype(np.int64))


def causal_example(windows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and next-token targets: windows of context + 1 tokens."""
    return windows[:, :-1], windows[:, 1:]


def masked_example(windows: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's corruption of windows of context tokens: the targets are the chosen positions' tokens."""
    chosen = torch.rand(windows.shape, generator=generator) < MASK_RATE
    fate = torch.rand(windows.shape, generator=generator)
    random_bytes = torch.randint(0, BYTE_TOKENS, windows.shape, generator=generator)
    inputs = torch.where(chosen & (fate < 0.8), MASK_TOKEN, windows)
    inputs = torch.where(chosen & (fate >= 0.8) & (fate < 0.9), random_bytes, inputs)
    return inputs, torch.where(chosen, windows, IGNORED)


def window_length(objective: str, context: int) -> int:
    return context + 1 if objective == "causal" else context


def make_example(objective: str, windows: torch.Tensor, generator: torch.Generator):
    if objective not in OBJECTIVES:
        raise ValueError(f"objective {objective!r} is not one of {OBJECTIVES}")
    return causal_example(windows) if objective == "causal" else masked_example(windows, generator)


def training_batch(tokens: np.ndarray, objective: str, batch_size: int, context: int, *key: int):
    """The batch of step ``key`` (e.g. seed, phase, step): the same key gives the same batch."""
    generator = seeded_generator(*key)
    windows = random_windows(tokens, batch_size, window_length(objective, context), generator)
    return make_example(objective, windows, generator)


def validation_batches(tokens: np.ndarray, objective: str, count: int, batch_size: int, context: int,
                       seed: int = 0, chunk: int | None = None) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The fixed validation set, ``count`` batches of the stream's leading windows, in chunks of
    ``chunk`` sequences (default: a batch) that are scored one at a time."""
    windows = leading_windows(tokens, count * batch_size, window_length(objective, context))
    inputs, targets = make_example(objective, windows, seeded_generator(seed, 7))
    return list(zip(inputs.split(chunk or batch_size), targets.split(chunk or batch_size)))


def token_loss(model: torch.nn.Module, inputs: torch.Tensor, targets: torch.Tensor, reduction: str = "mean"):
    logits = model(inputs)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=IGNORED,
                           reduction=reduction)


def accumulate_gradients(model: torch.nn.Module, inputs: torch.Tensor, targets: torch.Tensor,
                         micro_batch: int) -> torch.Tensor:
    """Backpropagate the batch's mean token loss ``micro_batch`` sequences at a time; returns that
    loss. Each part's summed loss is divided by the whole batch's target count, so the gradients
    add up to the full batch's (the masked objective's parts hold different numbers of targets)."""
    count = (targets != IGNORED).sum()
    total = torch.zeros((), device=inputs.device)
    for part_inputs, part_targets in zip(inputs.split(micro_batch), targets.split(micro_batch)):
        loss = token_loss(model, part_inputs, part_targets, "sum") / count
        loss.backward()
        total += loss.detach()
    return total


@torch.no_grad()
def validation_loss(model: torch.nn.Module, batches) -> float:
    """Mean cross-entropy (nats per predicted token) over every target of the validation set,
    its batches moved to the model's device one at a time."""
    device = next(model.parameters()).device
    total = sum(token_loss(model, inputs.to(device), targets.to(device), "sum").item() for inputs, targets in batches)
    count = sum(int((targets != IGNORED).sum()) for _, targets in batches)
    return total / count
