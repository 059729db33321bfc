"""Cost of tracking the telescoping model and the smoother during training, as a ratio to plain
training of the same run (same model, data, optimiser and batches), one process per case."""

from __future__ import annotations

import os

import pandas as pd
import torch

from ..linearize.smoother import smoother_for
from ..linearize.telescoping import TelescopingTracker
from ..models.mlp import mlp
from ..train.batches import GeneratorBatches
from ..train.heap import HEAP_ENVIRONMENT
from ..train.learners import SupervisedLearner
from ..train.losses import squared_loss_of
from ..train.optimisers import build_optimiser
from ..train.runtime import choose_device, default_dtype, set_threads
from ..train.session import Session
from .isolation import fastest_block, run_isolated

# The smoother all in float64, with its per-step products in float32, and the latter again under
# glibc's default heap settings: what the workflow's HEAP_ENVIRONMENT saves.
METHODS = ("plain", "telescoping", "smoother", "smoother_float32", "smoother_float32_default_heap")
DEFAULT_HEAP = {name: None for name in HEAP_ENVIRONMENT}


def _trackers(method: str, model, optimizer, x, n: int) -> list:
    if method == "plain":
        return []
    if method == "telescoping":
        return [TelescopingTracker(model, x[n:])]
    products = torch.float32 if method.startswith("smoother_float32") else torch.float64
    return [smoother_for(model, optimizer, x[:n], x[n:], "half_squared", products)]


def tracking_case(case: dict) -> dict:
    set_threads(case["threads"])
    device = choose_device(case["device"])
    with default_dtype("float64"):
        torch.manual_seed(0)
        n, m = case["n_train"], case["n_eval"]
        x = torch.randn(n + m, case["in_features"]).to(device)
        y = (x[:, 0] > 0).double()
        model = mlp(case["in_features"], case["hidden"], 1).to(device)
        optimizer = build_optimiser(case["optimiser"], model.parameters())
        trackers = _trackers(case["method"], model, optimizer, x, n)

        learner = SupervisedLearner(model, optimizer, squared_loss_of("half_squared"),
                                    x[:n], y[:n], trackers=trackers)

        def train(steps):
            batches = GeneratorBatches(n, case["batch_size"], torch.Generator().manual_seed(0))
            return Session(learner, batches, steps).run()

        train(case["warmup_steps"])  # lazy initialisation and the allocator's growth are not measured
        block = fastest_block(lambda: train(case["steps"]), device, case["repeats"])
    return {**block, "seconds_per_step": block["seconds"] / case["steps"], "device": str(device),
            "median_seconds_per_step": block["median_seconds"] / case["steps"],
            "parameters": sum(p.numel() for p in model.parameters()),
            "heap": "glibc defaults" if os.environ.keys().isdisjoint(HEAP_ENVIRONMENT) else "kept"}


def run_tracking_benchmark(settings: dict, device: str, threads: int, log) -> pd.DataFrame:
    rows = []
    for name, case in settings["cases"].items():
        for method in settings["methods"]:
            full = {**case, "method": method, "threads": threads, "device": device,
                    "warmup_steps": settings.get("warmup_steps", 20), "repeats": settings.get("repeats", 5)}
            heap = DEFAULT_HEAP if method.endswith("_default_heap") else HEAP_ENVIRONMENT
            result = run_isolated(tracking_case, full, settings["timeout_s"], heap)
            log.info("tracking %s %s: %s", name, method, result)
            rows.append({"case": name, "method": method, "threads": threads,
                         "hidden": str(case["hidden"]), "optimiser": case["optimiser"]["name"],
                         "steps": case["steps"], **result})
    frame = pd.DataFrame(rows)
    plain = frame[frame["method"] == "plain"].set_index("case")["seconds"]
    frame["time_vs_plain"] = frame["seconds"] / frame["case"].map(plain)
    return frame
