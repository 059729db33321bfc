"""The training loop the papers' experiments share: seeded mini-batches (epochs without
replacement; the whole set when the batch is at least as large), a squared loss of known scale,
and trackers that see every step (the telescoping accumulator, the smoother)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np
import torch
from torch import Tensor, nn

from .losses import squared_loss


def batches(n: int, batch_size: int, generator: torch.Generator) -> Iterator[Tensor]:
    """Index batches forever: full batch, or a fresh permutation each epoch (last batch may be
    smaller)."""
    if batch_size >= n:
        while True:
            yield torch.arange(n)
    while True:
        order = torch.randperm(n, generator=generator)
        yield from torch.split(order, batch_size)


def seeded_generator(*key: int) -> torch.Generator:
    """A torch generator determined by a tuple of integers (seed, purpose, counter, …), so that
    the random draws of any step can be recomputed without replaying the earlier ones."""
    state = np.random.SeedSequence([int(k) for k in key]).generate_state(2, dtype=np.uint32)
    return torch.Generator().manual_seed(int(state[0]) << 32 | int(state[1]))


class EpochBatches:
    """The mini-batch of every step of a seeded run: epoch e visits the n examples in a
    permutation drawn from (seed, e), in batches of ``batch_size`` (the last one smaller), or
    takes them all at once (full batch). Stateless apart from a cache of the current epoch, so a
    resumed run draws exactly the batches an uninterrupted one would have."""

    def __init__(self, n: int, batch_size: int | None, seed: int):
        self.n, self.seed = n, seed
        self.batch_size = n if batch_size is None or batch_size >= n else batch_size
        self.steps_per_epoch = -(-n // self.batch_size)
        self._epoch, self._order = None, None

    def __call__(self, step: int) -> Tensor:
        """Indices of the batch of optimiser step ``step`` (counted from 1)."""
        epoch, position = divmod(step - 1, self.steps_per_epoch)
        if self.batch_size == self.n:
            return torch.arange(self.n)
        if epoch != self._epoch:
            self._epoch = epoch
            self._order = torch.randperm(self.n, generator=seeded_generator(self.seed, 0, epoch))
        return self._order[position * self.batch_size:(position + 1) * self.batch_size]


def train_steps(model: nn.Module, optimizer: torch.optim.Optimizer, x: Tensor, y: Tensor, *,
                loss: str, steps: int, batch_size: int, seed: int,
                scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
                trackers: Sequence = (), after_step: Callable[[int, Tensor], bool | None] | None = None) -> int:
    """Train for ``steps`` optimiser steps; returns the number of steps taken.

    Each tracker's ``before_step(batch)`` runs before the step and ``after_step()`` after it,
    before the scheduler moves the learning rate. ``after_step(t, batch)`` runs last and may
    return True to stop early.
    """
    generator = torch.Generator().manual_seed(seed)
    batch_stream = batches(len(x), batch_size, generator)
    for t in range(1, steps + 1):
        batch = next(batch_stream)
        for tracker in trackers:
            tracker.before_step(batch)
        optimizer.zero_grad(set_to_none=True)
        squared_loss(model(x[batch]), y[batch], loss).backward()
        optimizer.step()
        for tracker in trackers:
            tracker.after_step()
        if scheduler is not None:
            scheduler.step()
        if after_step is not None and after_step(t, batch):
            return t
    return steps


def log_schedule(steps: int, points: int, dense: int = 30) -> list[int]:
    """Steps to record: every step below ``dense``, then about ``points`` log-spaced steps up to
    and including ``steps`` (curves are read on a log step axis)."""
    spaced = np.unique(np.round(np.geomspace(1, steps, points)).astype(int))
    return sorted({0, *range(min(dense, steps + 1)), *spaced.tolist(), steps})
