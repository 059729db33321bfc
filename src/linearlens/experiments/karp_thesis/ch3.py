"""Chapter 3 and Appendix B, local signal adaptivity (a CNN against its tangent kernel): the runs
behind Figs 3.2-3.5 and Tables 3.1, B.1 (Fig 3.1 is photographs, listed only)."""

from __future__ import annotations

import logging
import math
import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ...analysis.karp_thesis.ch3 import TOY_COLUMNS, array_key, toy_noise_std
from ...data.noisy_images import grouped_labels, noisy_split, resized
from ...linearize.linearised import Linearised
from ...linearize.linearity import active_fractions
from ...models.zoo import build_model
from ...train.batches import EpochBatches, no_batches
from ...train.learners import SupervisedLearner
from ...train.optimisers import build_optimiser
from ...train.progress import Progress
from ...train.runtime import seed_everything
from ...train.schedules import AtSteps, Every, StepDecay
from ...train.session import Session, checkpoint_for

LOG = logging.getLogger(__name__)

# --- Fig 3.3: the LSA toy model (Sec 3.3, Algorithm 3.1) ---
#
# Data (Sec 3.3, with the authors' code's conventions): X has k rows of d
# dimensions; y = ±1 with probability 1/2; one row, chosen uniformly, is the signal y·w* with
# w* = (1, …, 1)/√d; the k − 1 others are noise rows N(0, σ²I_d), σ = multiplier · log(k)/√k
# (Fig 3.3's "σ = 1" is the multiplier: the authors' code's σ is log k/√k). Model:
# f_{w,b}(X) = Σ_i φ_b(⟨w, X_i⟩), φ_b(u) = ReLU(u + b) − ReLU(−u + b); logistic
# loss. Training (Algorithm 3.1): minibatch SGD on fresh samples every step, η_w for w and η_b for
# b; w₀ a uniformly random direction of norm ``init_norm`` (the code's 1e-6; the theory's
# N(0, δ²/(kd)) with δ = k^−100 is numerically unusable), b₀ = ``init_bias`` (0; the code draws
# N(0, 1e-12)).
#
# Two routes draw the same distribution of every step (``route``):
# - ``direct`` draws every X (n·k·d normals) and takes the analytic gradient below.
# - ``projected`` (the default) draws only what the step depends on. Write each
#   noise row as X_i = a_i ŵ + Z_i with ŵ = w/‖w‖: a_i ~ N(0, σ²) and Z_i ~ N(0, σ²(I − ŵŵᵀ)) are
#   independent (an isotropic Gaussian's components along and across ŵ). The output, every
#   indicator and dℓ/df depend on u_i = ⟨w, X_i⟩ = ‖w‖a_i and on the signal row's u = y·(w·w*) only,
#   so the step draws the a_i (as z_i = a_i/σ); the Z_i enter grad_w only through the sum
#   Σ_n g_n Σ_i c_ni Z_ni (c from ``indicator_counts``), which, given every a and y, is exactly
#   N(0, σ² Σ_n Σ_i (g_n c_ni)² (I − ŵŵᵀ)): one d-dimensional standard normal draw, projected across
#   ŵ and scaled. The signal row's position does not matter (f sums over rows). Evaluation needs f
#   only, so it draws the a_i alone. Exact in distribution, not an approximation
#   (tests/test_karp_ch3_lsa_toy.py checks it against the direct route); a step costs a ninth of the
#   direct route's at the thesis's settings (2.7 against 27 CPU-ms).

TOY_ROUTES = ("projected", "direct")
EVAL_CHUNK = 1000  # test examples drawn and scored at a time (bounds the direct route's memory)


def signal_direction(d: int, dtype: torch.dtype = torch.float32) -> Tensor:
    """w* = (1, …, 1)/√d, the authors' code's unit signal."""
    return torch.full((d,), 1.0 / math.sqrt(d), dtype=dtype)


def phi(u: Tensor, b: Tensor | float) -> Tensor:
    """φ_b(u) = ReLU(u + b) − ReLU(−u + b): soft-thresholding when b < 0."""
    return F.relu(u + b) - F.relu(b - u)


def logistic_loss(f: Tensor, y: Tensor) -> Tensor:
    """log(1 + e^{−y f}) per example."""
    return F.softplus(-y * f)


def random_labels(n: int, generator: torch.Generator, dtype: torch.dtype = torch.float32) -> Tensor:
    return torch.randint(0, 2, (n,), generator=generator).to(dtype) * 2 - 1


@dataclass
class LsaBatch:
    """n examples drawn in full (the direct route)."""

    x: Tensor  # (n, k, d)
    y: Tensor  # (n,), ±1
    signal_rows: Tensor  # (n,), the row of each example that holds y·w*


def lsa_samples(n: int, k: int, d: int, sigma: float, generator: torch.Generator,
                dtype: torch.dtype = torch.float32) -> LsaBatch:
    """Fresh examples of the LSA distribution: k rows of N(0, σ²I_d), one uniformly chosen row of
    each replaced by y·w*."""
    y = random_labels(n, generator, dtype)
    x = torch.randn(n, k, d, generator=generator, dtype=dtype).mul_(sigma)
    rows = torch.randint(0, k, (n,), generator=generator)
    x[torch.arange(n), rows] = y[:, None] * signal_direction(d, dtype)
    return LsaBatch(x, y, rows)


def lsa_output(w: Tensor, b: Tensor | float, x: Tensor) -> Tensor:
    """f_{w,b}(X) = Σ_i φ_b(⟨w, X_i⟩) for every example of x (…, k, d)."""
    return phi(x @ w, b).sum(-1)


def indicator_counts(u: Tensor, b: Tensor | float) -> tuple[Tensor, Tensor]:
    """dφ_b/du = 1{u + b > 0} + 1{−u + b > 0} and dφ_b/db = 1{u + b > 0} − 1{−u + b > 0}. The two
    indicators add as NUMBERS: as booleans their sum is a logical OR, wrong where both hold (b > 0,
    |u| < b, where dφ/du = 2)."""
    up, down = (u + b > 0).to(u.dtype), (b - u > 0).to(u.dtype)
    return up + down, up - down


def lsa_gradients(w: Tensor, b: Tensor, batch: LsaBatch) -> tuple[Tensor, Tensor, Tensor]:
    """The analytic gradients of the batch's mean logistic loss in w and b, and that loss
    (the model of Sec 3.3): with g_n = dℓ/df = −y_n σ(−y_n f_n), grad_w = mean_n g_n Σ_i c_ni X_ni and
    grad_b = mean_n g_n Σ_i s_ni (c, s from ``indicator_counts``)."""
    u = batch.x @ w
    f = phi(u, b).sum(-1)
    g = -batch.y * torch.sigmoid(-batch.y * f)
    slope, shift = indicator_counts(u, b)
    n = len(batch.y)
    grad_w = torch.einsum("n,nk,nkd->d", g, slope, batch.x) / n
    grad_b = (g * shift.sum(-1)).mean()
    return grad_w, grad_b, logistic_loss(f, batch.y).mean()


@dataclass
class ProjectedBatch:
    """n examples as the projected route draws them (see the comment above)."""

    z: Tensor  # (n, k − 1): each noise row's coordinate along ŵ in units of σ (a_i = σ·z_i), N(0, 1)
    y: Tensor  # (n,), ±1
    across: Tensor  # (d,): a standard normal draw for the noise rows' components across ŵ


def projected_samples(n: int, k: int, d: int, generator: torch.Generator,
                      dtype: torch.dtype = torch.float32) -> ProjectedBatch:
    y = random_labels(n, generator, dtype)
    z = torch.randn(n, k - 1, generator=generator, dtype=dtype)
    return ProjectedBatch(z, y, torch.randn(d, generator=generator, dtype=dtype))


def unit_direction(w: Tensor) -> Tensor:
    """ŵ = w/‖w‖ (the first axis for w = 0, where every direction gives the same distribution)."""
    norm = w.norm()
    return w / norm if norm > 0 else F.one_hot(torch.tensor(0), len(w)).to(w.dtype)


@dataclass
class NoiseSums:
    """Per example, sums over its noise rows at u_i = scale·z_i (c, s from ``indicator_counts``)."""

    output: Tensor  # Σ_i φ_b(u_i)
    slope_z: Tensor  # Σ_i c_i z_i
    shift: Tensor  # Σ_i s_i
    slope_squared: Tensor  # Σ_i c_i²


def noise_sums(z: Tensor, scale: float, b: float) -> NoiseSums:
    """``NoiseSums`` of the rows z (…, rows). φ_b(u) = c·u + s·b for every b; for b ≤ 0 (after the
    first steps, always) φ_b is soft-thresholding at |b|, which one fused pass computes."""
    return _noise_sums_thresholded(z, scale, b) if b <= 0 and scale > 0 else _noise_sums_general(z, scale, b)


def _noise_sums_thresholded(z: Tensor, scale: float, b: float) -> NoiseSums:
    """b ≤ 0: φ_b(u) = scale·softshrink(z, |b|/scale), c = |sign(φ)| ∈ {0, 1} and s = sign(φ); a
    third of the general path's passes over the rows."""
    threshold = -b / scale
    shrunk = F.softshrink(z, threshold)
    signs = torch.sign(shrunk)
    shift = signs.sum(-1)
    return NoiseSums(scale * shrunk.sum(-1), shrunk.sum(-1) + threshold * shift, shift, signs.abs().sum(-1))


def _noise_sums_general(z: Tensor, scale: float, b: float) -> NoiseSums:
    u = scale * z
    slope, shift = indicator_counts(u, b)
    return NoiseSums((slope * u + shift * b).sum(-1), (slope * z).sum(-1), shift.sum(-1), (slope * slope).sum(-1))


def projected_output(w: Tensor, b: Tensor | float, z: Tensor, y: Tensor, sigma: float, w_star: Tensor) -> Tensor:
    """f of examples given as their noise rows' coordinates along ŵ (in units of σ) and labels."""
    return noise_sums(z, sigma * float(w.norm()), float(b)).output + phi(y * (w @ w_star), b)


def projected_gradients(w: Tensor, b: Tensor, batch: ProjectedBatch, sigma: float,
                        w_star: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """``lsa_gradients`` of a batch drawn by the projected route: the same distribution."""
    direction = unit_direction(w)
    sums = noise_sums(batch.z, sigma * float(w.norm()), float(b))
    u_signal = batch.y * (w @ w_star)
    f = sums.output + phi(u_signal, b)
    g = -batch.y * torch.sigmoid(-batch.y * f)
    slope_signal, shift_signal = indicator_counts(u_signal, b)
    n = len(batch.y)
    along = sigma * (g @ sums.slope_z)  # Σ_n g_n Σ_i c_ni a_ni
    signal = (g * slope_signal) @ batch.y  # Σ_n g_n c_n y_n, from the signal rows y·w*
    spread = sigma * torch.sqrt((g * g) @ sums.slope_squared)  # std of Σ_n g_n Σ_i c_ni Z_ni across ŵ
    across = batch.across - (batch.across @ direction) * direction
    grad_w = (along * direction + signal * w_star + spread * across) / n
    grad_b = (g * (sums.shift + shift_signal)).mean()
    return grad_w, grad_b, logistic_loss(f, batch.y).mean()


@dataclass
class LsaState:
    w: Tensor
    b: Tensor


def initial_state(spec: dict, generator: torch.Generator, dtype: torch.dtype = torch.float32) -> LsaState:
    """w₀ uniform on the sphere of radius ``init_norm``, b₀ = ``init_bias``."""
    w = torch.randn(spec["d"], generator=generator, dtype=dtype)
    return LsaState(w * (spec["init_norm"] / w.norm()), torch.tensor(float(spec["init_bias"]), dtype=dtype))


def sgd_step(state: LsaState, spec: dict, generator: torch.Generator, w_star: Tensor) -> Tensor:
    """One step of Algorithm 3.1 on ``batch_size`` fresh samples (drawn by ``spec["route"]``); the
    batch's loss before the step."""
    sigma, n = toy_noise_std(spec), spec["batch_size"]
    if spec["route"] == "direct":
        batch = lsa_samples(n, spec["k"], spec["d"], sigma, generator, state.w.dtype)
        grad_w, grad_b, loss = lsa_gradients(state.w, state.b, batch)
    else:
        batch = projected_samples(n, spec["k"], spec["d"], generator, state.w.dtype)
        grad_w, grad_b, loss = projected_gradients(state.w, state.b, batch, sigma, w_star)
    state.w = state.w - spec["lr_w"] * grad_w
    state.b = state.b - spec["lr_b"] * grad_b
    return loss


def evaluate(state: LsaState, spec: dict, generator: torch.Generator, w_star: Tensor) -> tuple[float, float]:
    """Test accuracy mean(y·f ≥ 0) (the code's: f = 0 counts as correct) and mean logistic loss on
    ``test_samples`` fresh examples."""
    sigma, correct, loss, left = toy_noise_std(spec), 0.0, 0.0, spec["test_samples"]
    while left:
        n = min(left, EVAL_CHUNK)
        if spec["route"] == "direct":
            batch = lsa_samples(n, spec["k"], spec["d"], sigma, generator, state.w.dtype)
            f, y = lsa_output(state.w, state.b, batch.x), batch.y
        else:
            y = random_labels(n, generator, state.w.dtype)
            z = torch.randn(n, spec["k"] - 1, generator=generator, dtype=state.w.dtype)
            f = projected_output(state.w, state.b, z, y, sigma, w_star)
        correct += float((y * f >= 0).sum())
        loss += float(logistic_loss(f, y).sum())
        left -= n
    return correct / spec["test_samples"], loss / spec["test_samples"]


def toy_generators(seed: int) -> tuple[torch.Generator, torch.Generator]:
    """Two streams from the seed: initialisation and training batches; test samples. The training
    trajectory does not depend on how often or on how many samples it is evaluated."""
    train, test = np.random.SeedSequence(seed).generate_state(2)
    return torch.Generator().manual_seed(int(train)), torch.Generator().manual_seed(int(test))


class LsaLearner:
    """Algorithm 3.1 as a learner of ``train.session``: each step draws ``batch_size`` fresh samples
    from its own generator (there is no training set, so the session's batch order is unused), and
    it keeps what the record reports of the whole trajectory: the peak of b, the steps with b > 0,
    the peak of b/(w·w*) while both are positive, the latest batch's loss."""

    def __init__(self, spec: dict, generator: torch.Generator, w_star: Tensor):
        self.spec, self.generator, self.w_star = spec, generator, w_star
        self.state = initial_state(spec, generator)
        self.peak, self.positive_steps, self.positive_ratio, self.loss = float(self.state.b), 0, 0.0, float("nan")

    def step(self, _unused, step: int) -> Tensor:
        loss = sgd_step(self.state, self.spec, self.generator, self.w_star)
        self.loss = float(loss)
        b = float(self.state.b)
        self.peak = max(self.peak, b)
        if b > 0:
            self.positive_steps += 1
            along = float(self.state.w @ self.w_star)
            if along > 0:
                self.positive_ratio = max(self.positive_ratio, b / along)
        return loss


class LsaProbe:
    """A row of Fig 3.3's record: w's parts along and across w*, b, test accuracy and loss on fresh
    samples of the test generator, and the learner's running facts."""

    def __init__(self, spec: dict, generator: torch.Generator):
        self.spec, self.generator = spec, generator

    def __call__(self, session: Session) -> dict:
        learner = session.learner
        state, w_star = learner.state, learner.w_star
        accuracy, test_loss = evaluate(state, self.spec, self.generator, w_star)
        along, b = float(state.w @ w_star), float(state.b)
        return {"w_dot_wstar": along, "w_perp_norm": float((state.w - along * w_star).norm()),
                "w_norm": float(state.w.norm()), "b": b, "ratio": abs(b) / along if along else float("nan"),
                "test_accuracy": accuracy, "test_loss": test_loss, "train_loss": learner.loss,
                "b_peak": learner.peak, "b_positive_steps": learner.positive_steps,
                "positive_ratio_peak": learner.positive_ratio}


def toy_run(spec: dict, log: logging.Logger = LOG) -> pd.DataFrame:
    """Fig 3.3's run: ``steps`` SGD steps from the seed's w₀, evaluated at step 0, every
    ``eval_every`` steps and at the end; one row per evaluation (``TOY_COLUMNS``), float32."""
    if spec["route"] not in TOY_ROUTES:
        raise ValueError(f"toy route {spec['route']!r}: expected one of {TOY_ROUTES}")
    train, test = toy_generators(spec["seed"])
    learner = LsaLearner(spec, train, signal_direction(spec["d"]))
    log.info("LSA toy SGD: k = %d, d = %d, σ = %.4f, %s route", spec["k"], spec["d"], toy_noise_std(spec),
             spec["route"])
    session = Session(learner, no_batches, spec["steps"], probes=[LsaProbe(spec, test)],
                      evaluate_at=Every(spec["eval_every"]), progress=Progress(spec["steps"], name="LSA toy SGD",
                                                                              logger=log))
    return pd.DataFrame(session.run().rows, columns=list(TOY_COLUMNS))


# --- the noisy-image datasets (Sec 3.6, App. B.3-B.4) -----------------------------------------

SPLITS = ("train", "test")
STORED = np.float16  # pixels as stored: a 64 x 64 CIFAR variant is 1.2 GB so, 2.4 GB in float32


def _seed_of(seed: int, *names: str) -> np.random.Generator:
    """One generator per (seed, names): the levels of a setting at one placement and size share it,
    so they differ in the background's scale only (the same placements and background draws)."""
    return np.random.default_rng([seed, *(zlib.crc32(name.encode()) for name in names)])


def noisy_variant(images: dict[str, np.ndarray], setting: dict, size: dict, placement: str, level: float,
                  rng: np.random.Generator, bank: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """One variant: the setting's images (classes grouped as it says), resized to the size's image
    side and placed on its background side at ``placement`` over backgrounds at ``level``, every
    placement and background drawn from ``rng``."""
    background = setting["background"]
    pool = None
    if background["kind"] == "bank":
        pool = bank
    elif background["kind"] == "tiles":  # distractor images of other classes, from the training split
        chosen = np.isin(images["y_train"], background["classes"])
        pool = resized(images["x_train"][chosen], size["image"])
    out = {}
    for split in SPLITS:
        keep, labels = grouped_labels(images[f"y_{split}"], setting["classes"])
        pictures = resized(images[f"x_{split}"][keep], size["image"])
        noisy, _ = noisy_split(pictures, background, level, placement, size["background"], rng, pool)
        out[f"x_{split}"] = noisy.astype(STORED)
        out[f"y_{split}"] = labels
    return out


def make_image_variants(datasets: dict[str, dict[str, np.ndarray]], images: dict, variants: list[dict]
                        ) -> dict[str, np.ndarray]:
    """A data job's variants as one dict of arrays (``array_key`` names them)."""
    arrays = {}
    for variant in variants:
        setting = images["settings"][variant["setting"]]
        background = setting["background"]
        bank = None
        if background["kind"] == "bank":
            stored = datasets[background["dataset"]]
            bank = np.concatenate([stored["x_train"], stored["x_test"]]).astype(np.float32)
        size = images["sizes"][variant["size"]]
        rng = _seed_of(images["seed"], variant["setting"], variant["placement"], str(size["image"]),
                       str(size["background"]))
        made = noisy_variant(datasets[setting["dataset"]], setting, size, variant["placement"], variant["level"],
                             rng, bank)
        arrays.update({array_key(variant["name"], name): value for name, value in made.items()})
    return arrays


def example_images(datasets: dict[str, dict[str, np.ndarray]], images: dict) -> dict[str, np.ndarray]:
    """Fig 3.5: the first ``count`` test images of each example setting at the examples' level."""
    examples = images["examples"]
    arrays = {}
    for name in examples["settings"]:
        setting = images["settings"][name]
        variant = {"name": name, "setting": name, "placement": setting["placement"], "size": setting["size"],
                   "level": examples["level"]}
        made = make_image_variants(datasets, images, [variant])
        arrays[name] = made[array_key(name, "x_test")][:examples["count"]].astype(np.float32)
    return arrays


def variant_task(arrays, variant_name: str, device) -> dict[str, Tensor]:
    """A variant's splits as float32 tensors on ``device``."""
    task = {}
    for split in SPLITS:
        task[f"x_{split}"] = torch.as_tensor(np.asarray(arrays[array_key(variant_name, f"x_{split}")],
                                                        dtype=np.float32), device=device)
        task[f"y_{split}"] = torch.as_tensor(arrays[array_key(variant_name, f"y_{split}")], device=device)
    return task


# --- the network and its linearisation at θ₀ (App. B.3) -----------------------------------------

def class_mean_cross_entropy(logits: Tensor, labels: Tensor) -> Tensor:
    """The loss of the authors' code, −mean over classes of log-softmax · one-hot: cross-entropy / C."""
    return F.cross_entropy(logits, labels) / logits.shape[1]


LOSSES = {"cross_entropy": F.cross_entropy, "cross_entropy_over_classes": class_mean_cross_entropy}


def _chunks(x: Tensor, size: int):
    return (x[start:start + size] for start in range(0, len(x), size))


@torch.no_grad()
def _outputs(model: nn.Module, x: Tensor, chunk: int) -> Tensor:
    """Outputs in chunks, the model in eval mode: a batch-statistics network normalises each chunk
    by its own statistics, as the authors' code evaluates (batch statistics, chunks of 100)."""
    model.eval()
    try:
        return torch.cat([model(part) for part in _chunks(x, chunk)])
    finally:
        model.train()


class TestEvaluation:
    """The test loss and accuracy, and the mean training loss since the last evaluation."""

    def __init__(self, model: nn.Module, task: dict[str, Tensor], loss, steps_per_epoch: int, chunk: int):
        self.model, self.task, self.loss, self.steps_per_epoch, self.chunk = model, task, loss, steps_per_epoch, chunk

    def __call__(self, session: Session) -> dict:
        logits = _outputs(self.model, self.task["x_test"], self.chunk)
        return {"epoch": session.step / self.steps_per_epoch, "seconds": session.seconds,
                "train_loss": session.mean_loss(), "test_loss": float(self.loss(logits, self.task["y_test"])),
                "test_accuracy": float((logits.argmax(1) == self.task["y_test"]).double().mean())}


def trained_model(kind: str, settings: dict, task: dict[str, Tensor], seed: int) -> nn.Module:
    """The WRN (``network``) or its linearisation at θ₀ (``linearisation``), both from the same θ₀ of
    ``seed``. The linearisation's BatchNorm runs on θ₀'s statistics over the training images."""
    seed_everything(seed)
    x = task["x_train"]
    spec = {**settings["model"], "in_channels": x.shape[1], "num_classes": int(task["y_train"].max()) + 1}
    device = x.device
    if kind == "network":
        return build_model({**spec, "batch_statistics": "always"}).to(device)
    network = build_model({**spec, "batch_statistics": "running"}).to(device)
    return Linearised(network, statistics_inputs=lambda: _chunks(x, settings["statistics_batch"]))


def image_learner(kind: str, settings: dict, task: dict[str, Tensor], seed: int) -> tuple[SupervisedLearner, EpochBatches]:
    """The learner of one run (the model, SGD with its step decay, the loss) and its batch order."""
    model = trained_model(kind, settings, task, seed)
    optimiser = build_optimiser(settings["optimiser"], [p for p in model.parameters() if p.requires_grad])
    batches = EpochBatches(len(task["x_train"]), settings["batch_size"], seed)
    epoch = batches.steps_per_epoch
    rate = StepDecay([drop * epoch for drop in settings["lr_drops"]], settings["lr_factor"])
    return SupervisedLearner(model, optimiser, LOSSES[settings["loss"]], task["x_train"], task["y_train"],
                             learning_rate=rate), batches


def local_signal_run(kind: str, settings: dict, task: dict[str, Tensor], seed: int, *, state_path=None,
                     inputs_version: str = "", name: str = "", probes_of=lambda model: []) -> pd.DataFrame:
    """One model trained on one task as App. B.3 says: per evaluation (the first epochs, then every
    ``eval_every`` epochs, and the last), the test accuracy and loss and the mean training loss, and
    what the probes ``probes_of(model)`` add."""
    learner, batches = image_learner(kind, settings, task, seed)
    model, loss, epoch = learner.model, learner.loss, batches.steps_per_epoch
    steps = settings["epochs"] * epoch
    evaluate_at = Every(settings["eval_every"] * epoch) | AtSteps(range(0, settings["dense_epochs"] * epoch, epoch))
    session = Session(learner, batches, steps,
                      probes=[TestEvaluation(model, task, loss, epoch, settings["eval_batch"]), *probes_of(model)],
                      evaluate_at=evaluate_at,
                      checkpoint=checkpoint_for(state_path, {"kind": kind, "settings": settings, "name": name},
                                                seed, inputs_version),
                      progress=Progress(steps, name=f"{kind} {name}".strip()))
    record = session.run()
    frame = pd.DataFrame.from_records(record.rows)
    frame["ended"] = record.ended
    return frame


def image_runs(arrays, training: dict, kind: str, device, state_dir=None, inputs_version: str = "") -> pd.DataFrame:
    """A training job's runs (``analysis...job_training``) on its variants, one after the other, each
    resumable from ``state_dir`` by a job with the same inputs (``workflow.inputs_version``)."""
    frames = []
    for variant in training["variants"]:
        task = variant_task(arrays, variant["name"], device)
        state = f"{state_dir}/{kind}/{variant['name']}.pt" if state_dir else None
        frame = local_signal_run(kind, training["recipes"][variant["size"]], task, training["seed"],
                                 state_path=state, inputs_version=inputs_version, name=variant["name"])
        for key in ("level", "size", "placement", "setting", "variant"):
            frame.insert(0, key, variant[key] if key != "variant" else variant["name"])
        frame.insert(0, "model", kind)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


# --- Fig 3.2: activation sparsity of the network's ReLU layers over training ---------------------

class ActivityProbe:
    """Per ReLU layer, the fraction of its outputs that are positive on a fixed probe set (in chunks:
    each normalised by its own batch statistics)."""

    def __init__(self, model: nn.Module, probe: Tensor, chunk: int):
        self.model, self.probe, self.chunk = model, probe, chunk

    def __call__(self, session: Session) -> dict:
        self.model.eval()
        try:
            per_chunk = [active_fractions(self.model, part) for part in _chunks(self.probe, self.chunk)]
        finally:
            self.model.train()
        weights = np.array([len(part) for part in _chunks(self.probe, self.chunk)], dtype=float)
        fractions = np.average(np.array(per_chunk), axis=0, weights=weights)
        return {f"active_relu{index + 1}": float(value) for index, value in enumerate(fractions)}


def sparsity_run(task: dict[str, Tensor], settings: dict, state_path=None, inputs_version: str = "") -> pd.DataFrame:
    """The network on the plain images (``analysis...sparsity_settings``), evaluated every epoch, with
    each ReLU layer's active fraction on the first ``probe_size`` test images."""
    probe = task["x_test"][:settings["probe_size"]]
    return local_signal_run("network", settings, task, settings["seed"], state_path=state_path,
                            inputs_version=inputs_version, name="sparsity", probes_of=lambda model: [ActivityProbe(model, probe, settings["eval_batch"])])
