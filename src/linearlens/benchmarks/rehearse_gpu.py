"""A few steps of each heavy run family at paper size, timed on the device (``snakemake rehearse_gpu``).

Each family builds the project's own learner (the step its runs take) from the paper configuration,
at the paper's model and batch size, on random inputs of the paper's shapes: the rehearsal times
steps and needs no data. After ``warmup`` steps (allocations, cuDNN's algorithm search) it times
``timed`` steps, synchronising the device, and reads the peak memory the device allocated (NaN off
CUDA: the CPU's is not the GPU's). ``steps_per_job`` is the paper's steps in one job of the family,
so ``benchmarks.plan`` turns the step time into GPU-hours.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import torch

COLUMNS = ("family", "rule", "group", "model", "batch_size", "steps_per_job", "step_seconds",
           "peak_memory_gib", "device", "torch")
GIB = 2**30
WARMUP_STEPS, TIMED_STEPS = 2, 5  # a step's first calls pay allocations and cuDNN's search; then 5 are timed


@dataclass
class Rehearsal:
    """One family variant ready to step: its runs' learner and batch order."""

    family: str
    rule: str
    group: str
    model: str
    batch_size: int
    steps_per_job: int
    learner: object
    batches: Callable[[int], object]

    def step(self, t: int) -> object:
        """Step t as a training session takes it (``train.session.Session``): the learner on batch t."""
        return self.learner.step(self.batches(t), t)


def time_steps(step: Callable[[int], object], device: torch.device, warmup: int = WARMUP_STEPS,
               timed: int = TIMED_STEPS) -> tuple[float, float]:
    """(seconds per step over ``timed`` steps after ``warmup``, peak GiB the device allocated; NaN off CUDA)."""
    cuda = device.type == "cuda"
    for t in range(1, warmup + 1):
        step(t)
    if cuda:
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
    started = time.perf_counter()
    for t in range(warmup + 1, warmup + timed + 1):
        step(t)
    if cuda:
        torch.cuda.synchronize(device)
    seconds = (time.perf_counter() - started) / timed
    return seconds, torch.cuda.max_memory_allocated(device) / GIB if cuda else math.nan


@contextlib.contextmanager
def global_settings_restored():
    """torch's process-wide numerics as they were: a family's runs may set them (Karp ch. 2's
    deterministic algorithms, iterative linearisation's float32 matmuls) for their own process."""
    deterministic, benchmark = torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.benchmark
    precision = torch.get_float32_matmul_precision()
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(deterministic)
        torch.backends.cudnn.benchmark = benchmark
        torch.set_float32_matmul_precision(precision)


def rehearse(rehearsals: list[Callable[[], Rehearsal]], device: torch.device, warmup: int = WARMUP_STEPS,
             timed: int = TIMED_STEPS, log=None) -> pd.DataFrame:
    """A row per family variant, built one at a time (each frees its memory before the next)."""
    rows = []
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    for build in rehearsals:
        with global_settings_restored():  # Karp ch. 2's deterministic kernels stay its own
            rehearsal = build()
            seconds, peak = time_steps(rehearsal.step, device, warmup, timed)
        rows.append({"family": rehearsal.family, "rule": rehearsal.rule, "group": rehearsal.group,
                     "model": rehearsal.model, "batch_size": rehearsal.batch_size,
                     "steps_per_job": rehearsal.steps_per_job, "step_seconds": seconds,
                     "peak_memory_gib": peak, "device": name, "torch": torch.__version__})
        if log:
            log.info("%s: %.4f s a step at batch %d, peak %.1f GiB, %.1f h a job of %d steps", rehearsal.family,
                     seconds, rehearsal.batch_size, peak, seconds * rehearsal.steps_per_job / 3600,
                     rehearsal.steps_per_job)
        del rehearsal
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return pd.DataFrame(rows, columns=COLUMNS)


# --- the families -------------------------------------------------------------------------------

def karp_ch5_grow(name: str, setting: dict, device: torch.device) -> Rehearsal:
    """Karp ch. 5: one step of a grown model (``layers + grown_layers``) through the chapter's
    Trainer, at the paper's batch in its micro-batches, on random bytes."""
    from ..experiments.karp_thesis.ch5 import Trainer, fresh_model
    from ..train.language_modelling import BYTE_TOKENS, training_batch

    layers = setting["layers"] + setting["grown_layers"]
    trainer = Trainer(fresh_model(setting, layers, seed=0)[0], setting, device=device)
    context, batch = setting["model"]["context"], setting["batch_size"]
    tokens = np.random.default_rng(0).integers(0, BYTE_TOKENS, size=4 * batch * (context + 1), dtype=np.uint8)
    batches = lambda t: training_batch(tokens, setting["objective"], batch, context, 0, t)  # noqa: E731
    return Rehearsal(f"karp_ch5_grow_{name}", "karp_thesis_ch5_grow", name,
                     f"transformer_lm {layers} layers, width {setting['model']['width']}", batch,
                     int(setting["train_steps"]), trainer, batches)


def karp_ch3_images(spec: dict, kind: str, size: str, device: torch.device, n_train: int) -> Rehearsal:
    """Karp ch. 3: a step of the WRN (``network``) or its linearisation at one image size, on
    random images of that size; a job trains ``epochs`` over ``n_train`` images."""
    from ..analysis.karp_thesis.ch3 import recipe
    from ..experiments.karp_thesis.ch3 import image_learner
    from .local_signal import random_task

    settings = recipe(spec, kind, size)
    side = spec["images"]["sizes"][size]["background"]
    timed = 8 * settings["batch_size"]  # enough images for the warm-up and timed steps in one epoch
    learner, batches = image_learner(kind, settings, random_task(timed, settings["batch_size"], side, 2, device), 0)
    steps = settings["epochs"] * math.ceil(n_train / settings["batch_size"])
    return Rehearsal(f"karp_ch3_{kind}_{side}", "karp_thesis_ch3_run_images", kind,
                     f"{settings['model']['name']} {side}x{side}", settings["batch_size"], steps,
                     learner, batches)


def karp_ch2_pairs(configuration: str, settings: dict, device: torch.device, pool_test: int = 10_000) -> Rehearsal:
    """Karp ch. 2: one lockstep step of a job's block of pairs (2 x ``pairs_per_job`` ResNet-20s) at
    the configuration's largest m, under the chapter's deterministic CUDA settings."""
    from ..experiments.karp_thesis.ch2 import (
        PoolTask,
        deterministic,
        initial_model,
        lockstep_learner,
        sample_pair,
        trial_seeds,
    )
    from ..train.batches import EpochBatches

    deterministic(device)
    m, trial = max(settings["sizes"]), settings["trials"][0]
    generator = torch.Generator().manual_seed(0)
    pool = m + pool_test
    task = PoolTask(torch.rand(pool, 3, 32, 32, generator=generator).to(device),
                    (torch.arange(pool) % 10).to(device), m)
    draws = [sample_pair(configuration, trial, m, r, task.n_train, task.n_test) for r in range(settings["pairs_per_job"])]
    examples = [indices for draw in draws for indices in (draw.s, draw.s_prime(task.n_train))]
    learner = lockstep_learner(settings, initial_model(settings, trial, device), task, examples)
    batches = EpochBatches(m, settings["batch_size"], trial_seeds(trial)[1])
    return Rehearsal(f"karp_ch2_pairs_{configuration}", "karp_thesis_ch2_train_pairs", configuration,
                     f"{len(examples)} x {settings['model']['name']} (deterministic)", settings["batch_size"],
                     int(settings["steps"]), learner, batches)


def george_ch3_training(spec: dict, device: torch.device, n_train: int = 100_000, side: int = 64,
                        classes: int = 200) -> Rehearsal:
    """George ch. 3: a step of the showcase's training (ResNet50, crops and flips, SGD) on random
    images of Tiny ImageNet's shape (``n_train`` of 64 x 64, 200 classes)."""
    from ..experiments.george_thesis.ch3 import training_learner
    from ..train.runtime import dtype_from_name

    batch = spec["training"]["batch_size"]
    task = random_images(8 * batch, (3, side, side), classes, device)
    task = {name: x.to(dtype_from_name(spec["dtype"])) if name.startswith("x_") else x for name, x in task.items()}
    _, learner, batches = training_learner(spec, task)
    steps = spec["training"]["epochs"] * math.ceil(n_train / batch)
    return Rehearsal("george_ch3_showcase", "george_thesis_ch3_train", "", f"{spec['model']['name']} {side}x{side}",
                     batch, steps, learner, batches)


def george_ch4_search(group: str, spec: dict, device: torch.device, n_train: int) -> Rehearsal:
    """George ch. 4: a step of the group's first EKFAC search run (its first batch size), through the
    runs' own learner (``curvature.optim``'s optimiser), on random images of CIFAR-10's shape. The
    eigenbasis refresh every ``freq`` steps falls in the warm-up, not in the timed steps."""
    from ..analysis.george_thesis.ch4 import search_runs
    from ..experiments.george_thesis.ch4 import run_learner

    run = next(run for run in search_runs(spec) if run["optimiser"] == "ekfac")
    task = random_images(8 * run["batch_size"], (3, 32, 32), 10, device)
    learner, batches, _ = run_learner(task, spec, run)
    steps = spec["epochs"] * math.ceil(n_train / run["batch_size"])
    return Rehearsal(f"george_ch4_{group}_ekfac", "george_thesis_ch4_run_search", group,
                     f"{spec['model']['name']} (EKFAC, freq {run['freq']})", run["batch_size"], steps, learner, batches)


def iterative_linearisation(experiment: str, setting: str, run: dict, scratch: Path, device: torch.device,
                            n_train: int) -> Rehearsal:
    """Iterative linearisation: a step of one run (its model, K, master dtype, batch or chunked full
    batch) through the run's own session, on ``n_train`` random images of CIFAR-10's shape in a
    prepared-dataset file under ``scratch``."""
    from ..experiments.iterative_linearisation import ILRun
    from ..train.runtime import full_float32_matmuls

    full_float32_matmuls()  # as il_run sets it: no TF32
    data = scratch / "cifar_shaped.npz"
    if not data.exists():
        task = random_images(n_train, (3, 32, 32), 10, torch.device("cpu"))
        np.savez(data, **{name: tensor.numpy() for name, tensor in task.items()})
    session = ILRun(data, {**run, "device": str(device)}, seed=0).session()
    batch = run.get("batch_size") or run.get("train_size") or n_train
    return Rehearsal(f"iterative_linearisation_{experiment}_{setting}", "iterative_linearisation_run", experiment,
                     f"{run['model']['name']} K={run['K']} {run.get('master_dtype', 'float32')}", batch,
                     int(run["steps"]), session.learner, session.batches)


def george_ch5_difficulty(spec: dict, run: dict, device: torch.device, n_train: int) -> Rehearsal:
    """George ch. 5: a step of a difficulty run (the α-scaled network and its optimiser) on random
    images of CIFAR-10's shape; a job runs at most ``epochs`` (its loss threshold may end it sooner)."""
    from ..analysis.george_thesis.ch5 import run_settings
    from ..experiments.george_thesis.ch5 import difficulty_learner
    from ..models.zoo import build_model
    from ..train.batches import EpochBatches

    settings = run_settings(spec, run)
    torch.manual_seed(0)
    batch = settings["batch_size"]
    task = random_images(8 * batch, (3, 32, 32), 10, device)
    learner = difficulty_learner(build_model(settings["model"]).to(device), settings, task["x_train"], task["y_train"])
    return Rehearsal(f"george_ch5_{run['experiment']}_{run['architecture']}_alpha{run['alpha']:g}",
                     "george_thesis_ch5_run_difficulty", run["experiment"],
                     f"{settings['model']['name']} α={run['alpha']:g}", batch,
                     run["epochs"] * math.ceil(n_train / batch), learner, EpochBatches(8 * batch, batch, 0))


def george_ch6_alignment(family: str, run: dict, device: torch.device, n_train: int) -> Rehearsal:
    """George ch. 6: a training step of an alignment run (SGD with momentum) on random images of
    CIFAR-10's shape; the tangent kernels it takes at ~75 log-spaced steps are not in the step."""
    from ..experiments.george_thesis.ch6 import alignment_learner, training_steps
    from ..train.batches import EpochBatches

    learner = alignment_learner(run, random_images(8 * run["batch_size"], (3, 32, 32), 10, device), seed=0)
    return Rehearsal(f"george_ch6_alignment_{family}", "george_thesis_ch6_run_alignment", family,
                     run["model"]["name"] + (f"{run['model']['depth']}" if "depth" in run["model"] else ""),
                     run["batch_size"], training_steps(run, n_train), learner,
                     EpochBatches(8 * run["batch_size"], run["batch_size"], 0))


def random_images(n: int, shape: tuple[int, ...], classes: int, device: torch.device) -> dict[str, torch.Tensor]:
    """A task of ``n`` random training images of ``shape`` (and a few test images): what a step reads."""
    generator = torch.Generator().manual_seed(0)
    return {"x_train": torch.randn(n, *shape, generator=generator).to(device),
            "y_train": (torch.arange(n) % classes).to(device),
            "x_test": torch.randn(classes, *shape, generator=generator).to(device),
            "y_test": torch.arange(classes).to(device)}


def paper_rehearsals(config: dict, device: torch.device, scratch: Path, n_train: int = 50_000
                     ) -> list[Callable[[], Rehearsal]]:
    """The heavy families the paper configuration holds, each a builder (built when timed); runs
    that read a prepared file read random images of CIFAR-10's shape (``n_train`` of them) in ``scratch``."""
    from ..experiments.settings import experiment_runs

    karp, george = config.get("karp_thesis", {}), config.get("george_thesis", {})
    builders = []
    if "showcase" in george.get("ch3", {}):
        builders.append(lambda: george_ch3_training(george["ch3"]["showcase"], device))
    difficulty = george.get("ch5", {}).get("difficulty")
    if difficulty:
        from ..analysis.george_thesis.ch5 import difficulty_runs

        lazy = {}  # per experiment and architecture, the run of the largest α (the longest)
        for run in difficulty_runs(difficulty):
            key = (run["experiment"], run["architecture"])
            if key not in lazy or run["alpha"] > lazy[key]["alpha"]:
                lazy[key] = run
        for run in lazy.values():
            builders.append(lambda r=run: george_ch5_difficulty(difficulty, r, device, n_train))
    alignment = george.get("ch6", {}).get("alignment")
    if alignment:
        from ..manifests.george_thesis_runs import kernel_runs

        image_runs = {}  # each CIFAR family's first setting (its settings differ in rate and label noise only)
        for (family, _), run in kernel_runs(alignment).items():
            if alignment["families"][family]["dataset"].startswith("cifar10"):
                image_runs.setdefault(family, run)
        for family, run in image_runs.items():
            builders.append(lambda f=family, r=run: george_ch6_alignment(f, r, device, n_train))
    for group in ("vgg", "resnet"):
        if group in george.get("ch4", {}):
            builders.append(lambda g=group: george_ch4_search(g, george["ch4"][g], device, n_train))
    for configuration, settings in karp.get("ch2", {}).get("configurations", {}).items():
        if settings["model"]["name"] == "resnet20":
            builders.append(lambda c=configuration, s=settings: karp_ch2_pairs(c, s, device))
    ch3 = karp.get("ch3", {})
    if "images" in ch3:
        for size in ch3["images"]["sizes"]:
            for kind in ("network", "linearisation"):
                builders.append(lambda k=kind, z=size: karp_ch3_images(ch3, k, z, device, n_train))
    for experiment, spec in config.get("iterative_linearisation", {}).get("experiments", {}).items():
        runs = experiment_runs(spec)
        for setting in dict.fromkeys([next(iter(runs)), next(reversed(runs))]):  # the grid's ends: K = 1 and the largest
            builders.append(lambda e=experiment, s=setting, r=runs[setting]:
                            iterative_linearisation(e, s, r, scratch, device, n_train))
    for name, setting in karp.get("ch5", {}).get("growing", {}).items():
        builders.append(lambda n=name, s=setting: karp_ch5_grow(n, s, device))
    return builders
