"""Progress of a training session in the job's log: at most one line every ``every_s`` seconds
(default: the config's ``progress_every_s``, else 30) with step / total, the latest batch's
training loss, steps per second and the time left; a line for every probe, snapshot or saved state that took at least ``event_s`` seconds (and every
``every_s`` seconds while one runs), and a
line at the start and at the end. A quick run logs its start and end; a long run logs steadily."""

from __future__ import annotations

import contextlib
import logging
import math
import os
import threading
import time

LOG = logging.getLogger("linearlens.train")


def duration(seconds: float) -> str:
    """h:mm:ss (or m:ss)."""
    if not math.isfinite(seconds):
        return "?"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


PROGRESS_INTERVAL = "LINEARLENS_PROGRESS_EVERY_S"  # set by workflow.logged_job from the config


def default_interval() -> float:
    return float(os.environ.get(PROGRESS_INTERVAL, 30.0))


class Progress:

    def __init__(self, total: int, every_s: float | None = None, event_s: float = 1.0, name: str = "training",
                 logger: logging.Logger = LOG, clock=time.monotonic):
        self.total, self.event_s, self.name = total, event_s, name
        self.every_s = default_interval() if every_s is None else every_s
        self.log, self.clock = logger, clock

    def start(self, step: int, detail: str = "") -> None:
        self.started = self.last_line = self.clock()
        self.first_step = step
        start = f", from step {step}" if step else ""
        self.log.info("%s: %d steps%s%s", self.name, self.total, start, f" ({detail})" if detail else "")

    def due(self) -> bool:
        return self.clock() - self.last_line >= self.every_s

    def step(self, step: int, loss) -> None:
        """After every optimiser step; ``loss`` is read (a device sync) only when a line is due."""
        if not self.due():
            return
        now = self.clock()
        rate = (step - self.first_step) / max(now - self.started, 1e-9)
        left = (self.total - step) / rate if rate > 0 else math.inf
        self.log.info("step %d/%d (%.0f%%): loss %.4g, %.3g steps/s, %s left", step, self.total,
                      100 * step / self.total, float(loss), rate, duration(left))
        self.last_line = now

    def event(self, what: str, step: int, seconds: float) -> None:
        if seconds >= self.event_s:
            self.log.info("step %d: %s (%.1f s)", step, what, seconds)

    @contextlib.contextmanager
    def activity(self, what: str, step: int):
        """Around work between steps (a probe, a snapshot, a save): a line every ``every_s``
        seconds while it runs, so that a long one never leaves the log silent, and one at the
        end when it took ``event_s`` or more."""
        done, started = threading.Event(), time.monotonic()

        def heartbeat():
            while not done.wait(self.every_s):
                self.log.info("step %d: %s still running after %s", step, what, duration(time.monotonic() - started))

        watcher = threading.Thread(target=heartbeat, daemon=True)
        watcher.start()
        try:
            yield
        finally:
            done.set()
            watcher.join()
            self.event(what, step, time.monotonic() - started)

    def end(self, step: int, reason: str) -> None:
        elapsed = self.clock() - self.started
        rate = (step - self.first_step) / elapsed if elapsed > 0 else math.inf
        self.log.info("%s: %s at step %d/%d after %s (%.3g steps/s)", self.name, reason, step, self.total,
                      duration(elapsed), rate)
