"""Cost of tracking the telescoping model and the smoother during training, as a ratio to plain
training of the same run (same model, data, optimiser and batches), one process per case."""

from __future__ import annotations

import pandas as pd
import torch

from ..linearize import TelescopingTracker, smoother_for
from ..models import mlp
from ..train import default_dtype, set_threads
from ..train.loop import train_steps
from ..train.optimisers import build_optimiser
from .isolation import run_isolated, timed

METHODS = ("plain", "telescoping", "smoother")


def tracking_case(case: dict) -> dict:
    set_threads(case["threads"])
    with default_dtype("float64"):
        torch.manual_seed(0)
        n, m = case["n_train"], case["n_eval"]
        x = torch.randn(n + m, case["in_features"])
        y = (x[:, 0] > 0).double()
        model = mlp(case["in_features"], case["hidden"], 1)
        optimizer = build_optimiser(case["optimiser"], model.parameters())
        trackers = {"plain": [], "telescoping": [TelescopingTracker(model, x[n:])],
                    "smoother": [smoother_for(model, optimizer, x[:n], x[n:], "half_squared")]}[case["method"]]

        def train(steps):
            return train_steps(model, optimizer, x[:n], y[:n], loss="half_squared", steps=steps,
                               batch_size=case["batch_size"], seed=0, trackers=trackers)

        train(2)  # warm-up: lazy initialisation is not measured
        _, stats = timed(lambda: train(case["steps"]), torch.device("cpu"))
    return {**stats, "seconds_per_step": stats["seconds"] / case["steps"],
            "parameters": sum(p.numel() for p in model.parameters())}


def run_tracking_benchmark(settings: dict, threads: int, log) -> pd.DataFrame:
    rows = []
    for name, case in settings["cases"].items():
        for method in settings["methods"]:
            full = {**case, "method": method, "threads": threads}
            result = run_isolated(tracking_case, full, settings["timeout_s"])
            log.info("tracking %s %s: %s", name, method, result)
            rows.append({"case": name, "method": method, "threads": threads,
                         "hidden": str(case["hidden"]), "optimiser": case["optimiser"]["name"],
                         "steps": case["steps"], **result})
    frame = pd.DataFrame(rows)
    plain = frame[frame["method"] == "plain"].set_index("case")["seconds"]
    frame["time_vs_plain"] = frame["seconds"] / frame["case"].map(plain)
    return frame
