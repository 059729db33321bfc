"""Run one benchmark case in a fresh process, with a time limit, and read back its numbers."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing as mp
import os
import resource
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import numpy as np
import torch


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def reset_peak_rss() -> None:
    """Lower the resident-set high-water mark to what the process holds now, so that ``timed``
    sees the next computation's peak and not an earlier one's in the same process. Freed heap is
    handed back first: the workflow's heap settings keep it resident, and a later computation
    reusing it would not raise the mark. A no-op where Linux's clear_refs is unavailable."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # glibc only
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")  # "5": reset the peak RSS (Linux ≥ 4.0)


def timed(compute: Callable[[], object], device: torch.device) -> tuple[object, dict]:
    """Wall time and peak memory of ``compute()``: GPU memory on CUDA, else the process's
    resident-set high-water mark above what it held before the call."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        base = torch.cuda.memory_allocated(device)
    else:
        base = peak_rss_mb()
    start = time.perf_counter()
    result = compute()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    seconds = time.perf_counter() - start
    if device.type == "cuda":
        peak = (torch.cuda.max_memory_allocated(device) - base) / 2**20
    else:
        peak = peak_rss_mb() - base
    return result, {"seconds": seconds, "peak_memory_mb": peak}


def fastest_run(compute: Callable[[], object], device: torch.device, repeats: int,
                keep: Callable[[object], object] = lambda result: result) -> tuple[object, dict]:
    """``timed`` over ``repeats`` runs of ``compute``: ``keep`` of the first run's result (taken
    before the next run starts, so a large result need not be held), the least disturbed run's
    seconds (on a shared machine the others include time lent to other work) with the median
    beside it, and the first run's memory (the high-water mark already holds it when the others
    start)."""
    result, first = timed(compute, device)
    kept = keep(result)
    del result
    seconds = [first["seconds"]] + [timed(compute, device)[1]["seconds"] for _ in range(repeats - 1)]
    return kept, {**first, "seconds": min(seconds), "median_seconds": float(np.median(seconds))}


def fastest_block(compute: Callable[[], object], device: torch.device, repeats: int) -> dict:
    """``fastest_run``'s numbers alone."""
    return fastest_run(compute, device, repeats, keep=lambda result: None)[1]


def _child(case_fn, case, queue):
    try:
        queue.put({"status": "ok", **case_fn(case)})
    except Exception as error:  # recorded, so one failing case does not lose the others
        queue.put({"status": f"error: {type(error).__name__}: {error}"[:300]})


def run_isolated(case_fn: Callable[[dict], dict], case: dict, timeout_s: float,
                 environment: dict[str, str | None] | None = None) -> dict:
    """``case_fn(case)`` in a spawned process whose environment has ``environment``'s changes
    (None unsets a variable); a case past ``timeout_s`` is killed and recorded as a timeout (its
    time is then a lower bound)."""
    context = mp.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_child, args=(case_fn, case, queue))
    with mock.patch.dict(os.environ):  # the whole environment comes back once the child has started
        for name, value in (environment or {}).items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        process.start()
    process.join(timeout_s)
    if process.is_alive():
        process.kill()
        process.join()
        return {"status": "timeout", "seconds": float("nan"), "peak_memory_mb": float("nan")}
    if process.exitcode != 0 and queue.empty():
        return {"status": f"crashed (exit code {process.exitcode}, e.g. out of memory)"}
    return queue.get()
