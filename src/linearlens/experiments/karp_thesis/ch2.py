"""Chapter 2 and Appendix A, the algorithmic stability of SGD: the pair runs behind Figs 2.1-2.4 and
A.1-A.15.

For each size m and sample r: S is a uniform subset of the training split without
replacement, z a uniform test point and i a uniform position; S′ is S with S_i replaced by z. A(S)
and A(S′) start from the trial's one initialisation and follow the trial's one batch order over
positions 1..m, so z is visited exactly where S_i would be. A job trains a block of pairs of one
size in lockstep (``train.learners.LockstepLearner``: members S₀, S′₀, S₁, S′₁, …) and evaluates
them at each snapshot; the logistic regression (Fig 2.1) and the networks go through the same code.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor

from ...ensembles import member_outputs, stacked
from ...models.zoo import build_model
from ...train.batches import EpochBatches
from ...train.interpolation import interpolate
from ...train.learners import LockstepLearner
from ...train.optimisers import build_optimiser
from ...train.runtime import choose_device, seed_everything
from ...train.schedules import AtSteps, StepDecay
from ...train.session import Session, checkpoint_for
from ...train.tasks import load_task

# --- seeds and samples -------------------------------------------------------------------------


def trial_seeds(trial: int) -> tuple[int, int]:
    """(initialisation seed, batch-order seed) of a trial: 1000 + t, 2000 + t (the thesis gives no seeds)."""
    return 1000 + trial, 2000 + trial


def sample_generator(configuration: str, trial: int, m: int, sample: int) -> np.random.Generator:
    """The draws of sample r at size m: independent across samples, sizes, trials and configurations."""
    return np.random.default_rng([zlib.crc32(configuration.encode()), trial, m, sample])


@dataclass(frozen=True)
class SwapPair:
    """S (m indices into the training split), the position i and the test point z of S′ = S^{i←z}."""

    s: np.ndarray
    position: int
    z: int

    def s_prime(self, n_train: int) -> np.ndarray:
        """S′ as indices into the pool (training split, then test split): S with S_i := n_train + z."""
        swapped = self.s.copy()
        swapped[self.position] = n_train + self.z
        return swapped


def swap_pair(n_train: int, n_test: int, m: int, generator: np.random.Generator) -> SwapPair:
    if not 0 < m <= n_train:
        raise ValueError(f"a training set of size {m} cannot be drawn from {n_train} training examples")
    s = generator.choice(n_train, size=m, replace=False)
    return SwapPair(s, int(generator.integers(m)), int(generator.integers(n_test)))


def sample_pair(configuration: str, trial: int, m: int, sample: int, n_train: int, n_test: int) -> SwapPair:
    return swap_pair(n_train, n_test, m, sample_generator(configuration, trial, m, sample))


# --- losses ----------------------------------------------------------------------------------------

def _logistic(outputs: Tensor, labels: Tensor) -> Tensor:
    """log(1 + exp(−y f)) with y = ±1, as binary cross-entropy of the single logit."""
    return F.binary_cross_entropy_with_logits(outputs[..., 0], labels.to(outputs.dtype), reduction="none")


def _cross_entropy(outputs: Tensor, labels: Tensor) -> Tensor:
    """log Σ exp f − f_y, written out: under vmap it runs a fifth faster than F.cross_entropy's
    decomposition (1.2 s against 1.5 s for 1,000 steps of 32 MLPs, measured)."""
    return torch.logsumexp(outputs, -1) - outputs.gather(-1, labels[..., None])[..., 0]


PER_EXAMPLE_LOSSES = {"logistic": _logistic, "cross_entropy": _cross_entropy}


def per_example_losses(kind: str, outputs: Tensor, labels: Tensor) -> Tensor:
    if kind not in PER_EXAMPLE_LOSSES:
        raise ValueError(f"loss must be one of {sorted(PER_EXAMPLE_LOSSES)}, got {kind!r}")
    return PER_EXAMPLE_LOSSES[kind](outputs, labels)


def per_example_errors(kind: str, outputs: Tensor, labels: Tensor) -> Tensor:
    """The 0-1 loss: the sign of the logit, or the arg-max class."""
    predicted = (outputs[..., 0] > 0).long() if kind == "logistic" else outputs.argmax(-1)
    return (predicted != labels).to(outputs.dtype)


def training_loss(kind: str):
    return lambda outputs, labels: per_example_losses(kind, outputs, labels).mean()


# --- the task and the members ------------------------------------------------------------------

@dataclass
class PoolTask:
    """Training split then test split as one pool (S′ takes its z from the test split)."""

    x: Tensor
    y: Tensor
    n_train: int

    @property
    def n_test(self) -> int:
        return len(self.y) - self.n_train

    @property
    def x_test(self) -> Tensor:
        return self.x[self.n_train:]

    @property
    def y_test(self) -> Tensor:
        return self.y[self.n_train:]


def pool_task(data_npz, settings: dict, device) -> PoolTask:
    task = load_task(data_npz, layout=settings.get("layout", "as_is"), device=device)
    return PoolTask(torch.cat([task["x_train"], task["x_test"]]), torch.cat([task["y_train"], task["y_test"]]),
                    len(task["y_train"]))


def initial_model(settings: dict, trial: int, device) -> torch.nn.Module:
    """The trial's one initialisation, shared by every pair and size (each of the thesis's plots fixes
    one initialisation seed): built on the CPU from the trial's seed (the same weights on every
    device), or all zeros (the logistic regression)."""
    seed_everything(trial_seeds(trial)[0])
    model = build_model(settings["model"])
    if settings.get("init", "default") == "zeros":
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.zero_()
    return model.to(device)


def deterministic(device: torch.device) -> None:
    """A(S) and A(S′) may differ only through z: deterministic kernels on CUDA. cuBLAS
    reads its workspace setting once, when CUDA first uses it: set later, torch's own check passes
    while cuBLAS stays nondeterministic, so a process that initialised CUDA without it is refused."""
    if device.type != "cuda":
        return
    if "CUBLAS_WORKSPACE_CONFIG" not in os.environ:
        if torch.cuda.is_initialized():
            raise RuntimeError(
                "Karp ch. 2 training needs deterministic cuBLAS, but CUDA was initialised before "
                "CUBLAS_WORKSPACE_CONFIG was set; call deterministic(device) before any CUDA work, or "
                "export CUBLAS_WORKSPACE_CONFIG=:4096:8 before the job starts")
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    torch.backends.cudnn.benchmark = False
    torch.use_deterministic_algorithms(True)


def lockstep_learner(settings: dict, model: torch.nn.Module, task: PoolTask, examples: np.ndarray) -> LockstepLearner:
    start = {name: p.detach() for name, p in model.named_parameters()}
    optimiser = settings["optimiser"]
    return LockstepLearner(
        model, [start] * len(examples), lambda params: build_optimiser(optimiser, params),
        training_loss(settings["loss"]), task.x, task.y, torch.as_tensor(np.stack(examples), dtype=torch.long),
        learning_rate=StepDecay(settings.get("lr_drops", []), settings.get("lr_drop_factor", 0.1)))


# --- evaluation at a snapshot --------------------------------------------------------------------

@torch.no_grad()
def evaluate_members(learner: LockstepLearner, task: PoolTask, kind: str, chunk: int) -> dict[str, Tensor]:
    """Every member (BatchNorm on its running statistics): the loss on each test point (M, n_test),
    the mean test 0-1 loss, the mean loss and 0-1 loss on its own training set, and the flat
    vector of its trainable parameters (M, P; BatchNorm buffers excluded)."""
    test_losses, test_errors = [], []
    for start in range(0, task.n_test, chunk):
        outputs = learner.outputs(task.x_test[start:start + chunk], train=False, shared_inputs=True)
        labels = task.y_test[start:start + chunk].expand(len(outputs), -1)
        test_losses.append(per_example_losses(kind, outputs, labels))
        test_errors.append(per_example_errors(kind, outputs, labels))
    train_loss = train_error = 0.0
    n = learner.examples.shape[1]
    for start in range(0, n, chunk):
        rows = learner.examples[:, start:start + chunk]
        outputs = learner.outputs(task.x[rows], train=False)
        train_loss = train_loss + per_example_losses(kind, outputs, task.y[rows]).sum(1)
        train_error = train_error + per_example_errors(kind, outputs, task.y[rows]).sum(1)
    flat = torch.cat([p.detach().flatten(1) for p in learner.params.values()], dim=1)
    return {"test_losses": torch.cat(test_losses, 1), "test_error": torch.cat(test_errors, 1).mean(1),
            "train_loss": train_loss / n, "train_error": train_error / n, "flat": flat}


def member_rows(evaluation: dict[str, Tensor], members: list[int]) -> list[dict]:
    """Per member: its losses and 0-1 losses, the generalisation gaps and its parameter norm."""
    rows = []
    for m in members:
        test_loss = float(evaluation["test_losses"][m].mean())
        rows.append({"train_loss": float(evaluation["train_loss"][m]), "train_error": float(evaluation["train_error"][m]),
                     "test_loss": test_loss, "test_error": float(evaluation["test_error"][m]),
                     "gap_loss": test_loss - float(evaluation["train_loss"][m]),
                     "gap_error": float(evaluation["test_error"][m] - evaluation["train_error"][m]),
                     "norm": float(evaluation["flat"][m].double().norm())})
    return rows


def pair_row(evaluation: dict[str, Tensor], first: int, second: int, z: int) -> dict:
    """A(S) = member ``first``, A(S′) = member ``second``: β̂(S, S′) = max over the test set of the
    loss difference (z included), where it is attained, and the parameter distance."""
    s, s_prime = member_rows(evaluation, [first, second])
    difference = (evaluation["test_losses"][first] - evaluation["test_losses"][second]).abs()
    point = int(difference.argmax())
    distance = float((evaluation["flat"][first].double() - evaluation["flat"][second].double()).norm())
    return {**s, **{f"{key}_prime": value for key, value in s_prime.items()},
            "stability": float(difference[point]), "stability_point": point, "stability_at_z": point == z,
            "distance": distance, "normalised_distance": distance / ((s["norm"] + s_prime["norm"]) / 2)}


# --- the runs ----------------------------------------------------------------------------------------

def snapshot_steps(settings: dict) -> dict[int, str]:
    """{step: snapshot name} of the configured snapshots (early, main, late: the thesis's t = 50k,
    100k, 150k)."""
    return {int(step): name for name, step in settings["snapshots"].items()}


def train_members(settings: dict, task: PoolTask, trial: int, examples: list[np.ndarray], evaluate,
                  state_path=None, run: dict | None = None, inputs_version: str = "") -> dict[int, object]:
    """Train the members (their training sets ``examples``, pool indices) in lockstep from the
    trial's initialisation on the trial's batch order; ``evaluate(learner, step)`` at each snapshot.
    Returns {step: what evaluate returned}; resumes from ``state_path`` when a job was interrupted."""
    device = task.x.device
    learner = lockstep_learner(settings, initial_model(settings, trial, device), task, examples)
    steps = snapshot_steps(settings)
    order = EpochBatches(len(examples[0]), settings["batch_size"], trial_seeds(trial)[1])
    session = Session(learner, order, int(settings["steps"]), snapshot_at=AtSteps(steps),
                      snapshot=lambda s: evaluate(s.learner, s.step),
                      checkpoint=checkpoint_for(state_path, run or {}, trial, inputs_version))
    return session.run().snapshots


def pair_run(data_npz, settings: dict, configuration: str, trial: int, sizes, pairs: list[int],
             keep_sizes=(), state_path=None, inputs_version: str = "", device: str = "auto") -> tuple[pd.DataFrame, dict]:
    """One block of pairs at each of ``sizes`` (one after the other): a row per size, pair and
    snapshot; and for the sizes in ``keep_sizes`` the members' states (parameters and buffers) at the
    main snapshot, for mode connectivity: {"pairs": pairs, "sizes": {m: [states of S₀, S′₀, …]}}."""
    device = choose_device(device)
    deterministic(device)
    task = pool_task(data_npz, settings, device)
    frames, kept = [], {}
    for m in sizes:
        frame, states = _pair_block(task, settings, configuration, trial, int(m), pairs, m in keep_sizes,
                                    f"{state_path}.m{m}" if state_path else None, inputs_version)
        frames.append(frame)
        if states is not None:
            kept[int(m)] = states
    return pd.concat(frames, ignore_index=True), {"pairs": list(pairs), "sizes": kept}


def _pair_block(task: PoolTask, settings: dict, configuration: str, trial: int, m: int, pairs: list[int],
                keep: bool, state_path, inputs_version: str) -> tuple[pd.DataFrame, list | None]:
    draws = [sample_pair(configuration, trial, m, r, task.n_train, task.n_test) for r in pairs]
    examples = [indices for draw in draws for indices in (draw.s, draw.s_prime(task.n_train))]
    kind, chunk = settings["loss"], int(settings.get("eval_batch", 1000))
    main_step = int(settings["snapshots"]["main"])

    def evaluate(learner: LockstepLearner, step: int) -> dict:
        evaluation = evaluate_members(learner, task, kind, chunk)
        rows = [pair_row(evaluation, 2 * k, 2 * k + 1, draw.z) for k, draw in enumerate(draws)]
        states = [learner.member_state(k) for k in range(learner.members)] if keep and step == main_step else None
        return {"rows": rows, "states": states}

    run = {"pairs": {"configuration": configuration, "settings": settings, "m": m, "pairs": pairs}}
    snapshots = train_members(settings, task, trial, examples, evaluate, state_path, run, inputs_version)
    names = snapshot_steps(settings)
    frame = pd.DataFrame.from_records([
        {"configuration": configuration, "trial": trial, "m": m, "pair": r, "snapshot": names[step], "step": step,
         "position": draw.position, "z": draw.z, **row}
        for step, record in sorted(snapshots.items()) for r, draw, row in zip(pairs, draws, record["rows"])])
    return frame, snapshots[main_step]["states"] if keep else None


def sweep_run(data_npz, settings: dict, configuration: str, trial: int, sizes, samples: int,
              state_path=None, inputs_version: str = "", device: str = "auto") -> pd.DataFrame:
    """Fig A.1: A(S) alone for samples 0..samples-1 at each of ``sizes`` (the same S as those pairs' S)."""
    device = choose_device(device)
    deterministic(device)
    task = pool_task(data_npz, settings, device)
    kind, chunk = settings["loss"], int(settings.get("eval_batch", 1000))

    def evaluate(learner: LockstepLearner, step: int) -> list[dict]:
        return member_rows(evaluate_members(learner, task, kind, chunk), list(range(learner.members)))

    names, frames = snapshot_steps(settings), []
    for m in sizes:
        examples = [sample_pair(configuration, trial, m, r, task.n_train, task.n_test).s for r in range(samples)]
        run = {"sweep": {"configuration": configuration, "settings": settings, "m": m, "samples": samples}}
        snapshots = train_members(settings, task, trial, examples, evaluate,
                                  f"{state_path}.m{m}" if state_path else None, run, inputs_version)
        frames.append(pd.DataFrame.from_records([
            {"configuration": configuration, "trial": trial, "m": m, "sample": r, "snapshot": names[step],
             "step": step, **row}
            for step, rows in sorted(snapshots.items()) for r, row in enumerate(rows)]))
    return pd.concat(frames, ignore_index=True)


# --- mode connectivity (Figs 2.4, A.14, A.15) ------------------------------------------------------

def interpolation_alphas(settings: dict) -> np.ndarray:
    """α of W(α) = α·W_S + (1 − α)·W_S′: np.linspace(start, stop, points); the thesis's 76 points
    on [−1, 2] step 0.04."""
    return np.linspace(settings["start"], settings["stop"], settings["points"]).round(12)


def chosen_pairs(available: list[int], count: int, seed: int) -> list[int]:
    """``count`` pairs drawn without replacement (one fixed draw, the same pairs for the
    train and the test rows)."""
    generator = np.random.default_rng(seed)
    return sorted(int(r) for r in generator.choice(sorted(available), size=min(count, len(available)), replace=False))


@torch.no_grad()
def path_accuracies(model: torch.nn.Module, states: list[dict], x: Tensor, y: Tensor, kind: str, chunk: int) -> np.ndarray:
    """Accuracy of each state (one per α, stacked as members; BatchNorm on the interpolated running
    statistics) on (x, y)."""
    params = stacked([{name: state[name] for name, _ in model.named_parameters()} for state in states])
    buffers = stacked([{name: state[name] for name, _ in model.named_buffers()} for state in states]) \
        if any(True for _ in model.buffers()) else {}
    errors = 0.0
    for start in range(0, len(y), chunk):
        outputs = member_outputs(model, params, buffers, x[start:start + chunk], train=False, shared_inputs=True)
        errors = errors + per_example_errors(kind, outputs, y[start:start + chunk].expand(len(states), -1)).sum(1)
    return (1 - errors / len(y)).cpu().numpy()


def interpolation_run(data_npz, settings: dict, configuration: str, trial: int, states_files: list,
                      interpolation: dict, device: str = "auto") -> pd.DataFrame:
    """Linear mode connectivity (Sec 2.4.2) at every kept size: for ``interpolation["pairs"]`` pairs
    drawn from those kept, the accuracy of W(α) = α·W_S + (1 − α)·W_S′ on S (train) and on the test
    split at each α; the full state is interpolated, BatchNorm's running statistics included."""
    device = choose_device(device)
    task = pool_task(data_npz, settings, device)
    kept: dict[int, dict[int, tuple]] = {}
    for path in states_files:
        block = torch.load(path, map_location=device, weights_only=True)
        for m, members in block["sizes"].items():
            for k, r in enumerate(block["pairs"]):
                kept.setdefault(int(m), {})[r] = (members[2 * k], members[2 * k + 1])
    model = initial_model(settings, trial, device)
    alphas = interpolation_alphas(interpolation)
    chunk = int(settings.get("eval_batch", 1000))
    rows = []
    for m, pairs in sorted(kept.items()):
        for r in chosen_pairs(list(pairs), interpolation["pairs"], interpolation["seed"]):
            states = [interpolate(*pairs[r], float(alpha)) for alpha in alphas]
            s = torch.as_tensor(sample_pair(configuration, trial, m, r, task.n_train, task.n_test).s, device=device)
            train = path_accuracies(model, states, task.x[s], task.y[s], settings["loss"], chunk)
            test = path_accuracies(model, states, task.x_test, task.y_test, settings["loss"], chunk)
            rows += [{"configuration": configuration, "trial": trial, "m": m, "pair": r, "alpha": float(alpha),
                      "train_accuracy": float(a), "test_accuracy": float(b)} for alpha, a, b in zip(alphas, train, test)]
    return pd.DataFrame.from_records(rows)
