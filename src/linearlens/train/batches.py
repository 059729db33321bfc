"""The mini-batch of every optimiser step of a run: epochs without replacement (the last batch
of an epoch may be smaller), or the whole training set when the batch is at least as large.

Two orders share one interface (``order(step)`` for steps counted from 1, ``steps_per_epoch``,
``state_dict``/``load_state_dict``):

- ``EpochBatches`` draws epoch e's permutation from (seed, e): the batch of any step is
  computable on its own, in any order. New experiments use it.
- ``GeneratorBatches`` draws the permutations in sequence from a generator the run may share
  with other draws (augmentation); steps are asked in order and its state is the generator's.
  The telescoping-lens runs have always drawn their batches this way, so their records keep it.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor


def seeded_generator(*key: int) -> torch.Generator:
    """A torch generator determined by a tuple of integers (seed, purpose, counter, …), so that
    the random draws of any step can be recomputed without replaying the earlier ones."""
    state = np.random.SeedSequence([int(k) for k in key]).generate_state(2, dtype=np.uint32)
    return torch.Generator().manual_seed(int(state[0]) << 32 | int(state[1]))


class _Epochs:
    first_step = 1

    def __init__(self, n: int, batch_size: int | None):
        self.n = n
        self.batch_size = n if batch_size is None or batch_size >= n else int(batch_size)
        self.steps_per_epoch = -(-n // self.batch_size)
        self._epoch, self._order = None, None

    def __call__(self, step: int) -> Tensor:
        """Indices of the batch of optimiser step ``step``."""
        if step < self.first_step:
            raise ValueError(f"this order starts at step {self.first_step}, asked for step {step}")
        epoch, position = divmod(step - self.first_step, self.steps_per_epoch)
        if self.batch_size == self.n:
            return torch.arange(self.n)
        if epoch != self._epoch:
            self._order = self._permutation(epoch)
            self._epoch = epoch
        return self._order[position * self.batch_size:(position + 1) * self.batch_size]

    def _permutation(self, epoch: int) -> Tensor:
        raise NotImplementedError


class EpochBatches(_Epochs):
    """Epoch e visits the n examples in a permutation drawn from (seed, e). Stateless apart from
    a cache of the current epoch, so a resumed run draws exactly the batches an uninterrupted one
    would have."""

    def __init__(self, n: int, batch_size: int | None, seed: int):
        super().__init__(n, batch_size)
        self.seed = seed

    def _permutation(self, epoch: int) -> Tensor:
        return torch.randperm(self.n, generator=seeded_generator(self.seed, 0, epoch))

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass


class GeneratorBatches(_Epochs):
    """Each epoch's permutation is the next draw of ``generator``, taken at the epoch's first
    step (after whatever else the run drew from it before). Steps must be asked in order; the
    epochs count from ``first_step`` (a run continued from a saved state starts its own)."""

    def __init__(self, n: int, batch_size: int | None, generator: torch.Generator, first_step: int = 1):
        super().__init__(n, batch_size)
        self.generator, self.first_step = generator, first_step

    def _permutation(self, epoch: int) -> Tensor:
        expected = 0 if self._epoch is None else self._epoch + 1
        if epoch != expected:
            raise ValueError(f"GeneratorBatches draws its epochs in order: asked for epoch {epoch}, "
                             f"the next one is {expected}")
        return torch.randperm(self.n, generator=self.generator)

    def state_dict(self) -> dict:
        return {"generator": self.generator.get_state(), "epoch": self._epoch, "order": self._order}

    def load_state_dict(self, state: dict) -> None:
        self.generator.set_state(state["generator"])
        self._epoch, self._order = state["epoch"], state["order"]


def no_batches(step: int) -> None:
    """The batch order of a learner that needs none: a full-batch one, or one that draws its own
    fresh samples."""
    return None
