"""The cost of Karp's chapter-3 runs at paper scale: one epoch of WRN-10-10 and of its
linearisation at θ₀, timed with the runs' own training code (``experiments.karp_thesis.ch3``) on
random images of the variants' shapes, and the whole chapter's cost extrapolated from them
(every variant of the paper config, both models, the thesis's 200 epochs)."""

from __future__ import annotations

import pandas as pd
import torch

from ..analysis.karp_thesis.ch3 import image_variants, recipe
from ..experiments.karp_thesis.ch3 import local_signal_run


def random_task(n_train: int, n_test: int, side: int, classes: int, device) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    return {"x_train": torch.rand(n_train, 3, side, side, generator=generator).to(device),
            "y_train": (torch.arange(n_train) % classes).to(device),
            "x_test": torch.rand(n_test, 3, side, side, generator=generator).to(device),
            "y_test": (torch.arange(n_test) % classes).to(device)}


def epoch_seconds(kind: str, settings: dict, n_train: int, side: int, device, n_test: int = 1000) -> float:
    """Seconds of one training epoch on ``n_train`` images (evaluations excluded): the faster of two
    epochs on the same images, so that the first pays cuDNN's algorithm search and the allocations."""
    one_epoch = {**settings, "epochs": 1, "lr_drops": [], "dense_epochs": 0, "eval_every": 1}
    task = random_task(n_train, n_test, side, 2, device)
    return min(float(local_signal_run(kind, one_epoch, task, 0)["seconds"].iloc[-1]) for _ in range(2))


def chapter_cost(spec: dict, device, n_train: int = 50_000, fraction: float = 1.0) -> pd.DataFrame:
    """Per (size, model): one timed epoch on ``fraction`` of ``n_train`` images (scaled up to all of
    them), the runs the config has of that size, and their hours at the recipe's epochs."""
    variants = image_variants(spec["images"])
    rows = []
    for size, shape in spec["images"]["sizes"].items():
        runs = sum(variant["size"] == size for variant in variants)
        for kind in ("network", "linearisation"):
            settings = recipe(spec, kind, size)
            timed = max(int(n_train * fraction), settings["batch_size"])
            seconds = epoch_seconds(kind, settings, timed, shape["background"], device) * n_train / timed
            extra = 1 if kind == "network" and size == "small" and spec.get("sparsity") else 0  # Fig 3.2's run
            rows.append({"size": size, "side": shape["background"], "model": kind, "batch_size": settings["batch_size"],
                         "timed_images": timed, "epoch_seconds": seconds, "runs": runs + extra,
                         "epochs": settings["epochs"], "hours": (runs + extra) * settings["epochs"] * seconds / 3600,
                         "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"})
    return pd.DataFrame(rows)

