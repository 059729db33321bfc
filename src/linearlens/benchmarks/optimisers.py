"""Cost of a KFAC, EKFAC or EKFAC-ra training step (George's thesis, ch. 4) as a ratio to a step of
SGD with momentum: forward, backward and the optimiser's step, as ``SupervisedLearner`` takes them,
on one random batch of the case's shape. One process per case trains a copy of the network (the
same θ₀) with each method; the methods take turns, one timed window each per round, and the
fastest of ``repeats`` windows is reported (the median too).

A window is ``periods`` recompute periods (``periods · freq`` steps), so its mean is the amortised
cost per step; the steps that recompute the curvature and those that do not (KFAC's solve alone,
EKFAC's solve after its per-step s* refit, EKFAC-ra's after its running average) are also averaged
apart. Peak memory is that of each method's first window, above what the process held before it."""

from __future__ import annotations

import time
from functools import partial

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from ..curvature.optim import METHODS as CURVATURE_METHODS
from ..experiments.george_thesis.ch4 import TASKS, reconstruction_loss, training_optimiser
from ..models.zoo import build_model
from ..train.learners import SupervisedLearner
from ..train.runtime import choose_device, seed_everything, set_threads
from .isolation import reset_peak_rss, run_isolated, timed

METHODS = ("sgd", *CURVATURE_METHODS)
KINDS = ("amortised", "recompute", "plain")
SGD = {"name": "sgd", "momentum": 0.9}
RUN = {"lr": 1e-3, "damping": 1e-3}  # the cost does not depend on them; they keep the steps finite
LOSSES = {"reconstruction": reconstruction_loss, "classification": F.cross_entropy}


def check_methods(methods) -> None:
    unknown = sorted(set(methods) - set(METHODS))
    if unknown or "sgd" not in methods or len(set(methods)) != len(methods):
        raise ValueError(f"methods must be distinct names of {METHODS} including sgd (the reference of "
                         f"the ratios); got {list(methods)}")


class TimedTraining:
    """One method's training on the case's batch, each step timed on its own (the device
    synchronised) and marked as a recompute or a plain step."""

    def __init__(self, case: dict, method: str, x: torch.Tensor, targets: torch.Tensor):
        seed_everything(case["seed"])  # every method starts from the same θ₀
        self.model = build_model(case["model"]).to(x.device)
        # damping per factor for all three, as the thesis's deep networks have it (App. A.4)
        settings = SGD if method == "sgd" else {"method": method, "damping_mode": "factors"}
        self.optimiser = training_optimiser(self.model, settings, {**RUN, "freq": case["freq"]},
                                            TASKS[case["task"]], case.get("conv_factors", "kfc"))
        self.learner = SupervisedLearner(self.model, self.optimiser, LOSSES[case["task"]], x, targets)
        self.indices = torch.arange(len(x), device=x.device)
        self.taken, self.loss = 0, float("nan")

    def steps(self, count: int) -> list[tuple[bool, float]]:
        """(recomputed, seconds) of each of ``count`` steps."""
        record = []
        for _ in range(count):
            before = getattr(self.optimiser, "matrix", None)
            start = time.perf_counter()
            loss = self.learner.step(self.indices, self.taken)
            self.loss = float(loss)  # waits for the device
            seconds = time.perf_counter() - start
            # a recompute replaces the curvature matrix; SGD has none
            record.append((getattr(self.optimiser, "matrix", None) is not before, seconds))
            self.taken += 1
        return record


def by_kind(record: list[tuple[bool, float]], curvature: bool) -> dict[str, list[float]]:
    """A window's step seconds: all of them, and for a curvature method its recompute and plain
    steps apart (a kind absent from the window, e.g. plain at freq 1, is left out)."""
    kinds = {"amortised": [seconds for _, seconds in record]}
    if curvature:
        for kind, recomputed in (("recompute", True), ("plain", False)):
            seconds = [s for r, s in record if r == recomputed]
            if seconds:
                kinds[kind] = seconds
    return kinds


def _summary(windows: list[dict[str, list[float]]], kind: str) -> dict:
    """Steps of the kind per window, and its mean seconds per step in the fastest and median window."""
    means = [float(np.mean(window[kind])) for window in windows]
    return {"steps": len(windows[0][kind]), "seconds_per_step": min(means),
            "median_seconds_per_step": float(np.median(means))}


def _batch(case: dict, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Random inputs (pixels in [0, 1] for the auto-encoder, its own targets) and random labels
    over the network's outputs."""
    seed_everything(case["seed"])
    shape = (case["batch_size"], *case["input_shape"])
    if case["task"] == "reconstruction":
        x = torch.rand(shape, device=device)
        return x, x
    x = torch.randn(shape, device=device)
    with torch.no_grad():
        classes = build_model(case["model"]).to(device)(x[:1]).shape[1]
    return x, torch.randint(0, classes, (len(x),), device=device)


def optimiser_case(case: dict) -> dict:
    """Every method's costs on one case, one row per (method, kind); runs inside the isolated process."""
    set_threads(case["threads"])
    device = choose_device(case["device"])
    x, targets = _batch(case, device)
    trainings = {method: TimedTraining(case, method, x, targets) for method in case["methods"]}
    for training in trainings.values():
        training.steps(case["warmup_steps"])  # lazy initialisation and a first recompute are not measured
    windows = {method: [] for method in trainings}
    memory = {}
    for round_ in range(case["repeats"]):
        for method, training in trainings.items():
            if round_ == 0:
                reset_peak_rss()  # each method's first window sets its own high-water mark
            record, stats = timed(partial(training.steps, case["periods"] * case["freq"]), device)
            windows[method].append(by_kind(record, method != "sgd"))
            memory.setdefault(method, stats["peak_memory_mb"])
    return {"rows": [{"method": method, "kind": kind, **_summary(windows[method], kind),
                      "peak_memory_mb": memory[method], "final_loss": trainings[method].loss,
                      "parameters": sum(p.numel() for p in trainings[method].model.parameters())}
                     for method in trainings for kind in windows[method][0]]}


def _case_rows(name: str, case: dict, result: dict) -> list[dict]:
    """The case's rows; a case that failed or timed out gets one row per (method, kind) with its status."""
    described = {"case": name, "device": case["device"], "threads": case["threads"],
                 "batch_size": case["batch_size"], "input_shape": str(case["input_shape"]),
                 "freq": case["freq"], "conv_factors": case.get("conv_factors", "kfc"),
                 "repeats": case["repeats"], "status": result["status"]}
    if "rows" in result:
        return [{**described, **row} for row in result["rows"]]
    return [{**described, "method": method, "kind": kind, "seconds_per_step": float("nan")}
            for method in case["methods"] for kind in (KINDS[:1] if method == "sgd" else KINDS)]


def run_optimiser_benchmark(settings: dict, device: str, threads: int, log) -> pd.DataFrame:
    check_methods(settings["methods"])
    rows = []
    for name, case in settings["cases"].items():
        full = {**case, "methods": list(settings["methods"]), "device": device, "threads": threads,
                "seed": 0, "periods": settings.get("periods", 2), "repeats": settings.get("repeats", 3),
                "warmup_steps": settings.get("warmup_steps", 3)}
        result = run_isolated(optimiser_case, full, settings["timeout_s"])
        log.info("optimisers %s: %s", name, result)
        rows += _case_rows(name, full, result)
    frame = pd.DataFrame(rows, columns=None if rows else ["case", "method", "kind", "seconds_per_step"])
    sgd = frame[frame["method"] == "sgd"].set_index("case")["seconds_per_step"]
    frame["time_vs_sgd"] = frame["seconds_per_step"] / frame["case"].map(sgd)
    return frame
