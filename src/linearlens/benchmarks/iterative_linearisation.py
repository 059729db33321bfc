"""Cost of one iterative-linearisation step (a forward-mode JVP through the network and the
backward pass through its tangent) as a ratio to one ordinary training step of the same network,
batch and optimiser; one process per (case, method), the fastest of ``repeats`` blocks of
``steps`` steps (the median is recorded too)."""

from __future__ import annotations

import pandas as pd
import torch

from ..linearize.iterative import NEVER, LinearisedTraining, NetworkTraining, has_batch_norm
from ..models.zoo import build_model
from ..train.runtime import choose_device, full_float32_matmuls, seed_everything, set_threads
from .isolation import fastest_block, run_isolated

METHODS = ("ordinary", "linearised")


def step_case(case: dict) -> dict:
    """Seconds per optimiser step of one method on random data of the case's shape."""
    set_threads(case["threads"])
    seed_everything(0)
    device = choose_device(case["device"])
    full_float32_matmuls()
    model = build_model(case["model"]).to(device)
    x = torch.randn(case["batch_size"], *case["input_shape"], device=device)
    y = torch.randint(0, case["model"].get("num_classes", 10), (case["batch_size"],), device=device)
    if case["method"] == "ordinary":
        training = NetworkTraining(model, case["optimiser"])
    else:  # K = ∞: every step is a linearised one (a re-linearisation itself is a copy)
        statistics = (lambda: [x]) if has_batch_norm(model) else None
        training = LinearisedTraining(model, case["optimiser"], NEVER, statistics_inputs=statistics)

    def steps(count):
        for _ in range(count):
            loss = training.step(x, y)
        return float(loss)  # waits for the device

    steps(case["warmup_steps"])  # lazy initialisation and autotuning are not measured
    block = fastest_block(lambda: steps(case["steps"]), device, case["repeats"])
    return {**block, "seconds_per_step": block["seconds"] / case["steps"],
            "median_seconds_per_step": block["median_seconds"] / case["steps"],
            "parameters": sum(p.numel() for p in model.parameters())}


def run_step_benchmark(settings: dict, device: str, threads: int, log) -> pd.DataFrame:
    rows = []
    for name, case in settings["cases"].items():
        for method in METHODS:
            full = {**case, "method": method, "threads": threads, "device": device,
                    "warmup_steps": settings.get("warmup_steps", 3), "steps": settings["steps"],
                    "repeats": settings.get("repeats", 5)}
            result = run_isolated(step_case, full, settings["timeout_s"])
            log.info("iterative linearisation %s %s: %s", name, method, result)
            rows.append({"case": name, "method": method, "device": device, "threads": threads,
                         "batch_size": case["batch_size"], "input_shape": str(case["input_shape"]),
                         "steps": settings["steps"], **result})
    frame = pd.DataFrame(rows)
    ordinary = frame[frame["method"] == "ordinary"].set_index("case")["seconds_per_step"]
    frame["time_vs_ordinary"] = frame["seconds_per_step"] / frame["case"].map(ordinary)
    return frame
