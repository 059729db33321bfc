"""One training run, whatever is trained: the session every experiment of the pipeline uses.

A session drives a *learner* (anything with ``step(indices, step) -> loss``: one optimiser step on
the mini-batch of those training indices, and ``state_dict``/``load_state_dict``; see
``train.learners``) through ``steps`` optimiser
steps on a *batch order* (``train.batches``), and around the steps it

- runs *probes* at the steps its evaluation schedule names (``train.schedules``: fixed steps,
  log-spaced, every k, epoch starts, loss thresholds) and always at the last step: each probe is
  a callable ``probe(session) -> dict`` and one evaluation makes one row of the run's record (a
  probe wrapped as ``Scheduled(probe, when)`` runs at its own steps instead);
- keeps snapshots (of the parameters, or whatever ``snapshot(session)`` returns) at chosen steps;
- guards against divergence and asks a stopping rule when it is due;
- saves its whole state every ``every_s`` seconds and when the job is interrupted (SIGTERM from
  a cluster, Ctrl-C), so that the rerun job resumes bit for bit where it stopped, provided the
  run, its seed and the code it imports are the same (the checkpoint's key);
- logs its progress (``train.progress``).

``run()`` returns a ``RunRecord``: the rows, the snapshots, and how and when the run ended.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import torch
from torch import Tensor

from ..data.damaged import DamagedFileError
from .interruption import TrainingInterrupted
from .progress import LOG, Progress
from .runtime import load_checkpoint, save_checkpoint
from .schedules import Never, Schedule

Probe = Callable[["Session"], dict]


def run_key(run: dict, seed: int, inputs_version: str) -> str:
    """What a saved state must match to be resumed: the run, the seed and the job's inputs (data,
    starting weights, the code it imports: ``workflow.inputs_version``)."""
    text = json.dumps({"run": run, "seed": seed, "inputs": inputs_version}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Scheduled:
    """A probe with its own schedule (a Gram matrix at log-spaced steps beside cheap metrics at
    every evaluation, say): ``Scheduled(probe, when)``."""

    probe: Probe
    when: Schedule

    def __call__(self, session: Session) -> dict:
        return self.probe(session)

    @property
    def __name__(self) -> str:
        return _name(self.probe)


@dataclass
class Checkpoint:
    """Where a session saves its state, the key the state must carry to be resumed, and how
    often it is saved (seconds of wall-clock time; at interruption in any case)."""

    path: str | Path
    key: str
    every_s: float = 1800.0


def checkpoint_for(state_path, run: dict, seed: int, inputs_version: str,
                   every_s: float = 1800.0) -> Checkpoint | None:
    """The checkpoint of a run keyed by ``run_key``; None without a state path."""
    return Checkpoint(state_path, run_key(run, seed, inputs_version), every_s) if state_path else None


class DivergenceGuard:
    """At each scheduled evaluation: the run has diverged when the mean training loss since the
    previous one is not finite or exceeds ``factor`` times the first step's loss."""

    def __init__(self, factor: float = 3.0):
        self.factor = factor
        self.first_loss: float | None = None

    def diverged(self, losses: Sequence[Tensor]) -> bool:
        if not losses:
            return False
        if self.first_loss is None:
            self.first_loss = float(losses[0])
        mean = float(torch.stack(list(losses)).mean())
        return not math.isfinite(mean) or mean > self.factor * self.first_loss

    def state_dict(self) -> dict:
        return {"first_loss": self.first_loss}

    def load_state_dict(self, state: dict) -> None:
        self.first_loss = state["first_loss"]


@dataclass
class RunRecord:
    rows: list[dict]
    snapshots: dict[int, Any]
    steps: int              # optimiser steps taken
    ended: str              # "finished", "diverged" or "stopped"
    seconds: float          # time spent in optimiser steps (evaluations excluded)

    @property
    def diverged(self) -> bool:
        return self.ended == "diverged"

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame.from_records(self.rows)


@dataclass
class Session:
    learner: Any
    batches: Callable[[int], Tensor]
    steps: int
    probes: Sequence[Probe] = ()
    evaluate_at: Schedule = field(default_factory=Never)
    snapshot_at: Schedule = field(default_factory=Never)
    snapshot: Callable[[Session], Any] | None = None
    guard: DivergenceGuard | None = None
    stop: Callable[[Session], bool] | None = None
    stop_at: Schedule | None = None       # None: right after each scheduled evaluation
    checkpoint: Checkpoint | None = None
    progress: Progress | None = None
    point: str = "scheduled"              # what the current evaluation is (probes may read it)
    first_step: int = 0                   # the step the learner's state is at (a continued run)

    def __post_init__(self):
        self.step = self.first_step
        self.rows: list[dict] = []
        self.snapshots: dict[int, Any] = {}
        self.losses: list[Tensor] = []    # since the last scheduled evaluation
        self.seconds = 0.0
        self.ended: str | None = None
        self.progress = self.progress or Progress(self.steps)
        self._wants_loss = any(schedule.reads_loss for schedule in self._schedules())

    # --- what probes and stopping rules read ------------------------------------------------

    @property
    def diverged(self) -> bool:
        return self.ended == "diverged"

    def mean_loss(self) -> float:
        """Mean training loss since the last scheduled evaluation (NaN before any step)."""
        return float(torch.stack(self.losses).mean()) if self.losses else float("nan")

    # --- the run ------------------------------------------------------------------------------

    def run(self, max_steps: int | None = None) -> RunRecord | None:
        """Train to ``steps`` (or until the guard or the stopping rule ends the run). With
        ``max_steps``, stop after that many steps of this call, save the state and return None."""
        if max_steps is not None and self.checkpoint is None:
            raise ValueError("max_steps stops a run to be resumed: it needs a checkpoint")
        if not self._resume():
            self._at_step(self._due_probes(0, None))
        self.progress.start(self.step)
        taken = 0
        with self._interruptible() as interrupted:
            while self.step < self.steps and self.ended is None:
                if max_steps is not None and taken >= max_steps:
                    self.save()
                    return None
                loss = self._optimiser_step()
                taken += 1
                due = self._due_probes(self.step, float(loss) if self._wants_loss else None)
                self._at_step(list(self.probes) if self.step == self.steps else due)
                self.progress.step(self.step, loss)
                if interrupted.is_set():
                    self.save()
                    raise TrainingInterrupted(
                        f"interrupted at step {self.step}/{self.steps}; the state is saved in "
                        f"{self.checkpoint.path}: rerunning the job resumes from there")
                self._save_if_due()
        self.ended = self.ended or "finished"
        self.progress.end(self.step, self.ended)
        if self.checkpoint is not None:
            Path(self.checkpoint.path).unlink(missing_ok=True)
        return RunRecord(self.rows, self.snapshots, self.step, self.ended, self.seconds)

    def _optimiser_step(self) -> Tensor:
        """One step of the learner; then its ``after_step(session)`` hook, if it has one (work
        between steps that is not timed as training, e.g. a re-linearisation)."""
        started = time.perf_counter()
        loss = self.learner.step(self.batches(self.step + 1), self.step + 1)
        self.seconds += time.perf_counter() - started
        self.step += 1
        self.losses.append(loss)
        if hasattr(self.learner, "after_step"):
            self.learner.after_step(self)
        return loss

    def _due_probes(self, step: int, loss: float | None) -> list[Probe]:
        """The probes due after ``step``; every schedule is asked exactly once per step."""
        scheduled = self.evaluate_at.due(step, loss)
        own = [getattr(probe, "when", None) for probe in self.probes]
        own_due = [when.due(step, loss) if when is not None else scheduled for when in own]
        return [probe for probe, due in zip(self.probes, own_due) if due]

    def _at_step(self, due: list[Probe]) -> None:
        """After step ``self.step`` (or before the first): guard, evaluation, snapshot, stop."""
        evaluated = bool(due)
        if evaluated:
            if self.guard is not None and self.guard.diverged(self.losses):
                self.ended = "diverged"
            self.evaluate(probes=due)
            self.losses = []
        if self.snapshot_at.due(self.step):
            with self.progress.activity("snapshot", self.step):
                self.snapshots[self.step] = (self.snapshot or _learner_snapshot)(self)
        if self.stop is not None and self.ended is None and self.step > self.first_step and (
                evaluated if self.stop_at is None else self.stop_at.due(self.step)):
            if self.stop(self):
                self.ended = "stopped"
                if not evaluated and self.probes:
                    self.evaluate()  # a run's last step is always evaluated

    def evaluate(self, point: str = "scheduled", probes: Sequence[Probe] | None = None) -> dict:
        """Run ``probes`` (all of them by default: e.g. around a re-linearisation) into one row
        of the record; probes may read ``session.point`` to say which kind of evaluation it is."""
        self.point = point
        row = {"step": self.step}
        for probe in self.probes if probes is None else probes:
            with self.progress.activity(f"probe {_name(probe)}", self.step):
                row.update(probe(self))
        self.rows.append(row)
        self.point = "scheduled"
        return row

    # --- saving and resuming ----------------------------------------------------------------

    def _components(self) -> dict[str, Any]:
        parts = {"learner": self.learner, "batches": self.batches, "guard": self.guard, "stop": self.stop,
                 **{f"schedule{i}": s for i, s in enumerate(self._schedules())},
                 **{f"probe{i}": p for i, p in enumerate(self.probes)}}
        return {name: part for name, part in parts.items() if hasattr(part, "state_dict")}

    def _schedules(self) -> list[Schedule]:  # each stateful schedule once
        whens = [getattr(p, "when", None) for p in self.probes]
        return [s for s in (self.evaluate_at, self.snapshot_at, self.stop_at, *whens) if s is not None]

    def state_dict(self) -> dict:
        return {"step": self.step, "rows": self.rows, "snapshots": self.snapshots, "losses": self.losses,
                "seconds": self.seconds, "ended": self.ended,
                **{name: part.state_dict() for name, part in self._components().items()}}

    def load_state_dict(self, state: dict) -> None:
        self.step, self.rows, self.snapshots = state["step"], state["rows"], state["snapshots"]
        self.losses, self.seconds, self.ended = state["losses"], state["seconds"], state["ended"]
        for name, part in self._components().items():
            part.load_state_dict(state[name])

    def save(self) -> None:
        if self.checkpoint is None:
            return
        with self.progress.activity("saving the state", self.step):
            save_checkpoint(self.checkpoint.path, key=self.checkpoint.key, session=self.state_dict())
        self._last_save = time.monotonic()
        LOG.info("step %d: state saved to %s", self.step, self.checkpoint.path)

    def _save_if_due(self) -> None:
        if self.checkpoint is not None and time.monotonic() - self._last_save >= self.checkpoint.every_s:
            self.save()

    def _resume(self) -> bool:
        self._last_save = time.monotonic()
        if self.checkpoint is None or not Path(self.checkpoint.path).exists():
            return False
        try:
            saved = load_checkpoint(self.checkpoint.path, map_location=_device_of(self.learner))
        except DamagedFileError as error:
            LOG.warning("%s: starting afresh", error)
            return False
        if saved.get("key") != self.checkpoint.key:
            LOG.info("%s holds the state of another run (or of other inputs): starting afresh",
                     self.checkpoint.path)
            return False
        self.load_state_dict(saved["session"])
        LOG.info("resumed from %s at step %d", self.checkpoint.path, self.step)
        return True

    @contextlib.contextmanager
    def _interruptible(self):
        """With a checkpoint: SIGTERM and SIGINT finish the current step, save and stop."""
        flag = threading.Event()
        if self.checkpoint is None or threading.current_thread() is not threading.main_thread():
            yield flag
            return
        previous = {sig: signal.signal(sig, lambda *_: flag.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            yield flag
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _learner_snapshot(session: Session):
    return session.learner.snapshot()


def _device_of(learner) -> torch.device | str:
    return getattr(learner, "device", "cpu")


def _name(probe) -> str:
    return getattr(probe, "__name__", type(probe).__name__)

