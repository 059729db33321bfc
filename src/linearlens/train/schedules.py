"""When a session does something (evaluate its probes, keep a snapshot, ask its stopping rule),
and the learning rate of every step.

A schedule answers ``due(step, loss)`` after each optimiser step (and once at step 0, before
training, with no loss); schedules combine with ``|``. All but ``LossThresholds`` are fixed in
advance; that one fires at the first step the training loss falls below each of its thresholds
and keeps which ones have fired in its state, so a resumed run does not fire them again.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


class Schedule:
    reads_loss = False  # whether ``due`` needs each step's loss (a device sync per step)

    def due(self, step: int, loss: float | None = None) -> bool:
        raise NotImplementedError

    def __or__(self, other: Schedule) -> Schedule:
        return AnyOf(self, other)

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass


class Never(Schedule):
    def due(self, step, loss=None):
        return False


class AtSteps(Schedule):
    """The listed steps (0 is before the first step)."""

    def __init__(self, steps: Iterable[int]):
        self.steps = frozenset(int(s) for s in steps)

    def due(self, step, loss=None):
        return step in self.steps


class Every(Schedule):
    """Every ``k`` steps, step 0 included."""

    def __init__(self, k: int):
        if k < 1:
            raise ValueError(f"a schedule of every k steps needs k ≥ 1, got {k}")
        self.k = int(k)

    def due(self, step, loss=None):
        return step % self.k == 0


def epoch_starts(steps_per_epoch: int) -> Every:
    """The start of every epoch: step 0 and the last step of each epoch."""
    return Every(steps_per_epoch)


def log_spaced(steps: int, points: int, dense: int = 30) -> AtSteps:
    """Every step below ``dense``, then about ``points`` log-spaced steps up to and including
    ``steps`` (curves read on a log step axis)."""
    return AtSteps(log_steps(steps, points, dense))


def log_steps(steps: int, points: int, dense: int = 30) -> list[int]:
    spaced = np.unique(np.round(np.geomspace(1, steps, points)).astype(int))
    return sorted({0, *range(min(dense, steps + 1)), *spaced.tolist(), steps})


class LossThresholds(Schedule):
    """The first step whose training loss is below each threshold (several at once when one
    step crosses several); the thresholds crossed so far are its state."""

    reads_loss = True

    def __init__(self, thresholds: Iterable[float]):
        self.thresholds = sorted({float(t) for t in thresholds}, reverse=True)
        self.crossed: list[float] = []

    def due(self, step, loss=None):
        if loss is None:
            return False
        newly = [t for t in self.thresholds if t not in self.crossed and loss < t]
        self.crossed.extend(newly)
        return bool(newly)

    def state_dict(self) -> dict:
        return {"crossed": list(self.crossed)}

    def load_state_dict(self, state: dict) -> None:
        self.crossed = list(state["crossed"])


def geometric_thresholds(start: float, factor: float, floor: float) -> list[float]:
    """start · factor^k for k = 1, 2, … down to ``floor`` (inclusive): the loss levels at which the
    author's code of George ch. 5 logs (start = log C, the loss of the zero function; factor 0.96)."""
    if not 0 < factor < 1 or floor <= 0:
        raise ValueError(f"thresholds need 0 < factor < 1 and floor > 0, got factor {factor}, floor {floor}")
    levels, level = [], start * factor
    while level >= floor:
        levels.append(level)
        level *= factor
    return levels


class AnyOf(Schedule):
    """Due when any part is due (every part is asked, so each stateful part sees every step)."""

    def __init__(self, *parts: Schedule):
        self.parts = [p for part in parts for p in (part.parts if isinstance(part, AnyOf) else [part])]

    @property
    def reads_loss(self) -> bool:
        return any(part.reads_loss for part in self.parts)

    def due(self, step, loss=None):
        return any([part.due(step, loss) for part in self.parts])

    def state_dict(self) -> dict:
        return {"parts": [part.state_dict() for part in self.parts]}

    def load_state_dict(self, state: dict) -> None:
        for part, saved in zip(self.parts, state["parts"]):
            part.load_state_dict(saved)


# --- learning rates ---------------------------------------------------------------------------
# A multiplier of the optimiser's configured learning rate for each step (counted from 1); the
# session sets lr = base · multiplier(step) before the step, so resuming needs no scheduler state.

def constant(step: int) -> float:
    return 1.0


class Warmup:
    """Linear warm-up: step t uses min(1, t / steps) of the rate."""

    def __init__(self, steps: int):
        self.steps = int(steps)

    def __call__(self, step: int) -> float:
        return min(1.0, step / self.steps) if self.steps > 0 else 1.0


class WarmupCosine(Warmup):
    """Linear warm-up, then a cosine from the full rate down to ``final`` of it at step ``until``
    (held there after): UL2's schedule in Karp App. C.1.2."""

    def __init__(self, steps: int, until: int, final: float):
        super().__init__(steps)
        self.until, self.final = int(until), float(final)

    def __call__(self, step: int) -> float:
        if step <= self.steps:
            return super().__call__(step)
        progress = min(1.0, (step - self.steps) / max(1, self.until - self.steps))
        return self.final + (1 - self.final) * 0.5 * (1 + math.cos(math.pi * progress))


class StepDecay:
    """factor^k after k of the ``drops`` (step numbers) have passed: step t uses the rate of
    the drops at or before t − 1."""

    def __init__(self, drops: Iterable[int], factor: float = 0.1):
        self.drops, self.factor = tuple(drops), float(factor)

    def __call__(self, step: int) -> float:
        return self.factor ** sum(step - 1 >= drop for drop in self.drops)
