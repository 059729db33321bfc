"""Experiments for Chapter 3 (NNGeometry): the runs of its experimental showcase (§3.4). One training
run keeps the network at chosen epochs; at each of them, the quality of the diagonal, quasi-diagonal,
KFAC and EKFAC Fisher approximations against the Monte-Carlo FIM (Figs 3.3-3.6: solve, mv, vTMv,
trace), and the NTK Gram of a two-class function on test examples of the two classes (Fig 3.7).
Figs 3.1 (code listing) and 3.2 (schematic) are drawings, in the figures module.

Fig 3.1's listing, vᵀFv for a 10-class model with a KFAC and a dense FIM and v the model's own
parameters, runs here as it does with NNGeometry (the same lines, one representation apart):

>>> import torch
>>> from torch import nn
>>> from linearlens.curvature import fisher
>>> from linearlens.parameters import ParameterLayout
>>> generator = torch.manual_seed(0)
>>> model = nn.Sequential(nn.Linear(20, 16), nn.Tanh(), nn.Linear(16, 10)).double()
>>> x = torch.randn(64, 20, dtype=torch.float64)
>>> F_kfac = fisher(model, x, representation="kfac")
>>> F_full = fisher(model, x, representation="dense")
>>> v = ParameterLayout(model).vector()
>>> print(f"KFAC {F_kfac.vTMv(v):.6f}, dense {F_full.vTMv(v):.6f}")
KFAC 0.180191, dense 0.237429

The dense FIM's value is also what the implicit representation computes without storing F (the
thesis's comment on its right-hand column):

>>> F_implicit = fisher(model, x, representation="implicit")
>>> print(f"implicit {F_implicit.vTMv(v):.6f}")
implicit 0.237429
"""

from __future__ import annotations

import inspect
import math
import time

import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ...capture import is_affine
from ...curvature import FisherSource, build
from ...curvature.representations import BlockDiagonal, Kronecker
from ...kernels.ntk import empirical_ntk
from ...models.zoo import build_model, model_constructor, save_model
from ...parameters import ParameterLayout
from ...train.augment import augment
from ...train.batches import EpochBatches, seeded_generator
from ...train.learners import SupervisedLearner
from ...train.optimisers import build_optimiser
from ...train.progress import Progress
from ...train.runtime import choose_device, dtype_from_name, load_checkpoint, seed_everything
from ...train.schedules import AtSteps, constant
from ...train.session import RunRecord, Session, checkpoint_for
from ...train.tasks import load_task, split_metrics

# Purpose keys of seeded generators: seeded_generator(seed, purpose, ...)
AUGMENTATION, FISHER_EXAMPLES, DIRECTIONS = 1, 2, 3


# --- the training run and its checkpoints -------------------------------------------------------

def sized_model_spec(model: dict, x: Tensor, num_classes: int) -> dict:
    """The zoo spec with the sizes the data fixes, for each argument its constructor takes."""
    sizes = {"in_channels": x.shape[1], "num_classes": num_classes, "image_size": x.shape[-1]}
    accepted = inspect.signature(model_constructor(model["name"])).parameters
    return {**{k: v for k, v in sizes.items() if k in accepted}, **model}


def cosine_rate(steps: int):
    """The learning-rate multiplier of step t (from 1): ½(1 + cos(π (t − 1)/steps)), 1 at the first
    step and near 0 at the last."""
    return lambda step: 0.5 * (1.0 + math.cos(math.pi * (step - 1) / steps))


LEARNING_RATES = {"constant": lambda steps: constant, "cosine": cosine_rate}


def learner_steps(spec: dict, batches: EpochBatches) -> int:
    return spec["training"]["epochs"] * batches.steps_per_epoch


def training_learner(spec: dict, task: dict[str, Tensor]) -> tuple[dict, SupervisedLearner, EpochBatches]:
    """The training's sized model spec, learner (SGD, cross-entropy, the rate schedule, crops and
    flips) and batch order, the model built from the seed in the task's device and dtype."""
    x = task["x_train"]
    num_classes = int(max(task["y_train"].max(), task["y_test"].max())) + 1
    model_spec = sized_model_spec(spec["model"], x, num_classes)
    seed = spec["seed"]
    seed_everything(seed)
    model = build_model(model_spec).to(device=x.device, dtype=x.dtype)
    training = spec["training"]
    batches = EpochBatches(len(task["y_train"]), training["batch_size"], seed)
    crop, flip = training.get("crop_padding", 0), training.get("flip", False)
    learner = SupervisedLearner(
        model, build_optimiser(training["optimiser"], model.parameters()), F.cross_entropy, x,
        task["y_train"], learning_rate=LEARNING_RATES[training["lr_schedule"]](learner_steps(spec, batches)),
        augment=(lambda x, step: augment(x, crop, flip, seeded_generator(seed, AUGMENTATION, step)))
        if crop or flip else None)
    return model_spec, learner, batches


def train_with_checkpoints(data_npz, spec: dict, device: str = "auto", state_path=None,
                           inputs_version: str = "") -> tuple[nn.Module, dict, RunRecord, int]:
    """Train ``spec["model"]`` on the dataset with SGD (cross-entropy, seeded batch order, optional
    crops and flips, constant or cosine rate) and keep its state at the epochs ``spec["checkpoints"]``
    (0 = initialisation), with the train/test metrics there. Returns the model, its sized spec,
    the record (snapshots by step, metric rows) and the steps per epoch."""
    if max(spec["checkpoints"]) > spec["training"]["epochs"]:
        raise ValueError(f"checkpoints {spec['checkpoints']} go past the {spec['training']['epochs']} training epochs")
    device, dtype = choose_device(device), dtype_from_name(spec["dtype"])
    task = load_task(data_npz, dtype=dtype, layout="channels", device=device)
    model_spec, learner, batches = training_learner(spec, task)
    model, seed, steps = learner.model, spec["seed"], learner_steps(spec, batches)
    kept = AtSteps(epoch * batches.steps_per_epoch for epoch in spec["checkpoints"])
    checkpoint = checkpoint_for(state_path, spec, seed, inputs_version, spec.get("state_every_s", 1800.0))
    record = Session(learner, batches, steps, probes=[lambda session: split_metrics(model, task)],
                     evaluate_at=kept, snapshot_at=kept, snapshot=lambda session: cpu_state(model),
                     checkpoint=checkpoint, progress=Progress(steps, name="ch. 3 training")).run()
    return model, model_spec, record, batches.steps_per_epoch


def cpu_state(model: nn.Module) -> dict[str, Tensor]:
    return {name: tensor.detach().cpu().clone() for name, tensor in model.state_dict().items()}


def save_checkpoints(model: nn.Module, model_spec: dict, record: RunRecord, steps_per_epoch: int, spec: dict,
                     paths: list[str]) -> pd.DataFrame:
    """One model checkpoint per epoch of ``spec["checkpoints"]`` (the paths in that order), its
    epoch, step and metrics as metadata; the metric rows with their epochs."""
    rows = {row["step"]: row for row in record.rows}
    for epoch, path in zip(spec["checkpoints"], paths):
        step = epoch * steps_per_epoch
        model.load_state_dict(record.snapshots[step])
        save_model(path, model, model_spec, **rows[step], epoch=epoch, dtype=spec["dtype"])
    frame = record.frame()
    frame.insert(0, "epoch", frame["step"] / steps_per_epoch)
    return frame


def load_showcase_model(path, dtype: str, device: str | torch.device = "cpu") -> tuple[nn.Module, dict]:
    """A checkpoint's model in ``dtype`` (the zoo builds float32 models), in eval mode, and its metadata."""
    state = load_checkpoint(path, map_location=device)
    model = build_model(state["model_spec"]).to(device=device, dtype=dtype_from_name(dtype))
    model.load_state_dict(state["state_dict"])
    return model.eval(), state["metadata"]


def evaluation_examples(data_npz, spec: dict, split: str, device) -> tuple[Tensor, Tensor]:
    """One split of the dataset in the run's dtype, on the device."""
    task = load_task(data_npz, dtype=dtype_from_name(spec["dtype"]), layout="channels", device=device)
    return task[f"x_{split}"], task[f"y_{split}"]


# --- Figs 3.3-3.6: quality of the FIM approximations ----------------------------------------------

def unit_directions(count: int, size: int, seed: int, dtype, device) -> Tensor:
    """``count`` vectors uniform on the unit sphere of R^size: normalised standard normals."""
    g = torch.randn(count, size, generator=seeded_generator(seed, DIRECTIONS), dtype=dtype).to(device)
    return g / torch.linalg.vector_norm(g, dim=1, keepdim=True)


# The metrics' sums in float64: over 24 M float32 entries, a cosine came out 1.001.

def cosine(a: Tensor, b: Tensor) -> float:
    a, b = a.double(), b.double()
    return float(a @ b / (a.norm() * b.norm()))


def residual(approx: Tensor, true: Tensor) -> float:
    """‖approx − true‖ / ‖true‖."""
    approx, true = approx.double(), true.double()
    return float((approx - true).norm() / true.norm())


def relative_error(approx: Tensor, true: Tensor) -> float:
    return float((approx.double() - true.double()).abs() / true.double().abs())


def fisher_examples(x: Tensor, count: int, seed: int) -> Tensor:
    """A fixed random subset of ``count`` examples (the same at every checkpoint)."""
    chosen = torch.randperm(len(x), generator=seeded_generator(seed, FISHER_EXAMPLES))[:count]
    return x[chosen.sort().values.to(x.device)]


def approximation_source(source: FisherSource, draws: str) -> FisherSource:
    """The approximations' Monte-Carlo labels: the reference's own ("same": only the structure
    differs) or an independent draw, seeded mc_seed + 1 ("independent": the sampling noise of a
    second estimate too)."""
    if draws == "same":
        return source
    return FisherSource(source.model, source.x, None, source.likelihood, source.variant, source.samples,
                        source.seed + 1)


def library_solve(approx, v: Tensor, damping: float) -> Tensor:
    """(F_a + λI)⁻¹ v as NNGeometry, the library the chapter showcases, solves it: KFAC's blocks damped
    factor-wise, (A + π√λ I)⁻¹ ⊗ (B + √λ/π I)⁻¹ (``PMatKFAC.solve``); every other block exactly (EKFAC
    adds λ to s* in its KFE)."""
    if not isinstance(approx, BlockDiagonal):
        return approx.solve(v, damping)
    return approx.solve_per_block(v, lambda block: block.pi_damping(damping) if isinstance(block, Kronecker)
                                  else damping)


def dense_block_layers(layout: ParameterLayout) -> list[str]:
    """Layers outside KFAC/EKFAC/quasi-diagonal structure (not Linear/conv): they get exact dense blocks."""
    return [layer.name for layer in layout.layers if not is_affine(layer.module)]


def fisher_quality(model: nn.Module, x: Tensor, spec: dict, seed: int) -> dict:
    """The metrics of Figs 3.3-3.6 for each approximation F_a against the reference F, the Monte-Carlo FIM with
    ``samples`` labels per example accessed implicitly (never stored), on ``directions`` vectors v
    uniform on the unit sphere:

    trace |tr F_a − tr F|/|tr F|; vTMv |vᵀF_a v − vᵀFv|/|vᵀFv|; mv cos(Fv, F_a v) and
    ‖F_a v − Fv‖/‖Fv‖; solve v' = (F_a + λI)⁻¹(F + λI)v: cos(v, v') and ‖v − v'‖/‖v'‖ for λ on the
    grid 10^relative × tr F/d (the mean eigenvalue), (F_a + λI)⁻¹ as NNGeometry's (``library_solve``).
    vᵀFv is v·(Fv), the same number as the implicit forward pass. With ``dense_check`` the dense F (d² numbers) is built too and its Fv, vᵀFv and
    trace are compared with the implicit ones."""
    model.eval()
    fisher = spec["fisher"]
    chunk = fisher["chunk_size"]
    source = FisherSource(model, x, None, "categorical", "mc", fisher["samples"], fisher["mc_seed"])
    reference = build(source, "implicit", chunk)
    layout = reference.layout
    d = layout.size
    started = time.perf_counter()
    trace = reference.trace()
    v = unit_directions(fisher["directions"], d, seed, x.dtype, x.device)
    fv = torch.stack([reference.mv(u) for u in v])
    vfv = (v.double() * fv.double()).sum(1)
    reference_seconds = time.perf_counter() - started
    grid = fisher["relative_dampings"]
    relative = torch.logspace(grid["low"], grid["high"], grid["points"], dtype=torch.float64)
    dampings = (relative * float(trace) / d).tolist()
    approximations = approximation_source(source, fisher["approximation_draws"])
    result = {
        "n_params": d, "n_examples": len(x), "samples": fisher["samples"], "directions": len(v),
        "dense_float32_bytes": 4 * d * d, "dense_block_layers": dense_block_layers(layout),
        "dense_block_parameters": sum(layer.size for layer in layout.layers if not is_affine(layer.module)),
        "trace": float(trace), "damping_unit": float(trace) / d, "relative_dampings": relative.tolist(),
        "dampings": dampings, "vTMv": vfv.tolist(), "reference_seconds": reference_seconds,
        "dense_check": dense_agreement(source, v, fv, trace, chunk) if fisher["dense_check"] else None,
        "representations": {},
    }
    for name in fisher["representations"]:
        started = time.perf_counter()
        approx = build(approximations, name, chunk)
        row = {"trace": float(approx.trace()), "trace_error": relative_error(approx.trace(), trace),
               "vTMv_error": [], "mv_cos": [], "mv_residual": [],
               "solve_cos": [[] for _ in dampings], "solve_residual": [[] for _ in dampings]}
        for u, fu, ufu in zip(v, fv, vfv):
            au = approx.mv(u)
            row["vTMv_error"].append(relative_error(u.double() @ au.double(), ufu))
            row["mv_cos"].append(cosine(fu, au))
            row["mv_residual"].append(residual(au, fu))
            for k, damping in enumerate(dampings):
                solved = library_solve(approx, fu + damping * u, damping)
                row["solve_cos"][k].append(cosine(u, solved))
                row["solve_residual"][k].append(residual(u, solved))  # ‖v − v'‖ / ‖v'‖
        row["seconds"] = time.perf_counter() - started
        result["representations"][name] = row
    return result


def dense_agreement(source: FisherSource, v: Tensor, fv: Tensor, trace: Tensor, chunk: int) -> dict[str, float]:
    """Largest relative differences between the dense FIM and the implicit one on the same draws."""
    dense = build(source, "dense", chunk)
    dense_fv = torch.stack([dense.mv(u) for u in v])
    return {"mv": max(residual(a, b) for a, b in zip(dense_fv, fv)),
            "vTMv": max(relative_error(u @ a, u @ b) for u, a, b in zip(v, dense_fv, fv)),
            "trace": relative_error(dense.trace(), trace)}


# --- Fig 3.7: the NTK of a two-class function ---------------------------------------------------

class ClassContrast(nn.Module):
    """f_{c1,c2}(x) = f(x)[c2] − f(x)[c1], the scalar function of a classifier between two classes."""

    def __init__(self, model: nn.Module, first: int, second: int):
        super().__init__()
        self.model, self.first, self.second = model, first, second

    def forward(self, x: Tensor) -> Tensor:
        out = self.model(x)
        return out[:, self.second:self.second + 1] - out[:, self.first:self.first + 1]


def pair_examples(x: Tensor, y: Tensor, classes: list[int], per_class: int) -> tuple[Tensor, Tensor]:
    """The first ``per_class`` examples of each of the two classes, the first class's first; labels
    0 and 1."""
    chosen, labels = [], []
    for label, c in enumerate(classes):
        index = torch.nonzero(y == c).flatten()[:per_class]
        if len(index) < per_class:
            raise ValueError(f"class {c} has {len(index)} examples in the split, fewer than {per_class}")
        chosen.append(index)
        labels.append(torch.full((per_class,), label))
    return x[torch.cat(chosen)], torch.cat(labels)


def ntk_pair(model: nn.Module, x: Tensor, y: Tensor, spec: dict) -> dict:
    """The scalar NTK Gram G_ij = ∇f_{c1,c2}(x_i)·∇f_{c1,c2}(x_j) on ``per_class`` examples of
    each class (unnormalised, uncentred: the figure normalises and centres)."""
    model.eval()
    ntk = spec["ntk"]
    first, second = ntk["classes"]
    examples, labels = pair_examples(x, y, ntk["classes"], ntk["per_class"])
    gram = empirical_ntk(ClassContrast(model, first, second), examples, output=0)
    return {"gram": gram.detach().cpu().double().numpy(), "labels": labels.numpy(),
            "classes": torch.tensor(ntk["classes"]).numpy()}
