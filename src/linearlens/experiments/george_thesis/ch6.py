"""Experiments for Chapter 6 (NTK alignment) and appendix B. The runs behind Figs 6.1-6.6 and B.1-B.8
(tangent-kernel spectrum, alignment with the labels, SuperNat, complexity measures); Fig 6.5's left half is
an algorithm box, drawn with its curves."""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor

from ...analysis.george_thesis.ch6 import complexity_run_name, learning_flow_of_records
from ...capacity.measures import UpdateNormTracker, complexity_measures
from ...data.transforms import balanced_order, randomise_labels
from ...kernels.alignment import (
    alignment,
    centre,
    effective_rank,
    eigenvalues,
    target_alignment,
    target_gram,
    trace_ratios,
)
from ...kernels.directions import output_changes, random_unit_directions, top_singular_directions
from ...kernels.eigenfunctions import eigenvalue_ratios, tangent_eigenfunctions
from ...kernels.ntk import empirical_ntk, ntk_diagonal
from ...models.mlp import mlp
from ...models.zoo import build_model, model_constructor
from ...parameters import ParameterLayout
from ...train.batches import EpochBatches, seeded_generator
from ...train.learners import SupervisedLearner
from ...train.optimisers import build_optimiser
from ...train.progress import Progress
from ...train.runtime import choose_device, full_float32_matmuls, seed_everything
from ...train.schedules import AtSteps, Every, log_spaced, log_steps
from ...train.session import RunRecord, Scheduled, Session, checkpoint_for
from ...train.tasks import load_task, split_metrics

# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and label alignment over training ---

NUM_CLASSES = 10


@dataclass
class ProbeSet:
    """Fixed examples whose tangent kernel is taken during training, with the labels it is
    aligned with (the training labels, noisy ones included, for training examples)."""

    name: str
    x: Tensor
    labels: Tensor


class KernelProbe:
    """At its steps, the tangent Gram of every probe set over all outputs, (n, c, n, c), layer by
    layer (a layer = one module's weight and bias). Each row gets the whole kernel's CKA with the
    labels, its uncentred alignment and its trace; the per-layer numbers are kept as scalars (a
    per-layer Gram would cost layers x Gram memory per step); the whole Grams are kept raw
    (float32, uncentred) when asked, so every spectrum and alignment variant can be derived later."""

    def __init__(self, model: torch.nn.Module, probe_sets: list[ProbeSet], per_output_centring: bool,
                 keep_grams: bool):
        self.model, self.probe_sets = model, probe_sets
        self.per_output, self.keep_grams = per_output_centring, keep_grams
        self.grams: dict[str, list[Tensor]] = {probe.name: [] for probe in probe_sets}
        self.gram_steps: list[int] = []
        self.layer_rows: list[dict] = []

    def __call__(self, session: Session) -> dict:
        row = {}
        for probe in self.probe_sets:
            layers = empirical_ntk(self.model, probe.x, per_layer=True)
            whole = sum(layers.values()).double()
            row.update(_alignment_numbers(probe.name, whole, probe.labels, self.per_output))
            for index, (layer, gram) in enumerate(layers.items()):
                self.layer_rows.append({"step": session.step, "probe": probe.name, "layer": layer,
                                        "layer_index": index,
                                        **_alignment_numbers("", gram.double(), probe.labels, self.per_output)})
            if self.keep_grams:
                self.grams[probe.name].append(whole.float().cpu())
        self.gram_steps.append(session.step)
        return row

    def state_dict(self) -> dict:
        return {"grams": self.grams, "gram_steps": self.gram_steps, "layer_rows": self.layer_rows}

    def load_state_dict(self, state: dict) -> None:
        self.grams, self.gram_steps, self.layer_rows = state["grams"], state["gram_steps"], state["layer_rows"]


def _alignment_numbers(prefix: str, gram: Tensor, labels: Tensor, per_output: bool) -> dict:
    name = f"{prefix}_" if prefix else ""
    return {f"{name}cka": float(target_alignment(gram, labels, per_output=per_output)),
            f"{name}alignment_uncentred": float(target_alignment(gram, labels, centred=False)),
            f"{name}trace": float(torch.einsum("iaia->", gram))}


class ClassificationProbe:
    """Loss and accuracy on the training set (its labels as trained, noisy ones included) and on
    the test set."""

    def __init__(self, model, task):
        self.model, self.task = model, task

    def __call__(self, session: Session) -> dict:
        return split_metrics(self.model, self.task)


def training_steps(run: dict, n_train: int) -> int:
    return run["epochs"] * math.ceil(n_train / run["batch_size"])


def alignment_learner(run: dict, task: dict[str, Tensor], seed: int) -> SupervisedLearner:
    """The run's model from ``seed`` and its SGD with momentum on the cross-entropy."""
    torch.manual_seed(seed)
    model = build_model(run["model"]).to(task["x_train"].device)
    optimizer = torch.optim.SGD(model.parameters(), lr=run["lr"], momentum=run["momentum"],
                                weight_decay=run["weight_decay"])
    return SupervisedLearner(model, optimizer, F.cross_entropy, task["x_train"], task["y_train"])


def kernel_alignment_run(run: dict, task: dict[str, Tensor], probe_sets: list[ProbeSet], seed: int,
                         state_path: str | None = None, inputs_version: str = "") -> tuple[RunRecord, KernelProbe]:
    """SGD with momentum on the cross-entropy (Chapter 6's runs) with the tangent kernels of the
    probe sets taken at log-spaced steps (step 0 included)."""
    learner = alignment_learner(run, task, seed)
    model, steps = learner.model, training_steps(run, len(task["x_train"]))
    kernels = KernelProbe(model, probe_sets, run["centring"] == "per_output", run["keep_grams"])
    session = Session(learner, EpochBatches(len(task["x_train"]), run["batch_size"], seed), steps,
                      probes=[ClassificationProbe(model, task), kernels],
                      evaluate_at=AtSteps(log_steps(steps, run["gram_points"], dense=1)),
                      checkpoint=checkpoint_for(state_path, run, seed, inputs_version))
    return session.run(), kernels


def label_noise_task(data_npz, run: dict, seed: int, device) -> tuple[dict[str, Tensor], list[ProbeSet], int]:
    """The training set with a share ``label_noise`` of its labels redrawn uniformly (seeded by the
    run's seed), and the probe sets: ``probe_size`` training examples (with the labels trained on)
    and test examples. Returns the task, the probe sets and the number redrawn."""
    task = load_task(data_npz, device=device)
    noisy, redrawn = randomise_labels(task["y_train"].cpu().numpy(), run["label_noise"], NUM_CLASSES, seed)
    task["y_train"] = torch.as_tensor(noisy, device=device)
    n = run["probe_size"]
    train, test = (probe_examples(task[f"y_{split}"], n) for split in ("train", "test"))
    probes = [ProbeSet("train", task["x_train"][train], task["y_train"][train]),
              ProbeSet("test", task["x_test"][test], task["y_test"][test])]
    return task, probes, len(redrawn)


def probe_examples(labels: Tensor, n: int) -> Tensor:
    """The same ``n`` examples in every run and at every step: a class-balanced choice (a prepared
    split may be sorted by class, and a one-class probe has no label alignment), by a fixed seed."""
    return torch.as_tensor(balanced_order(labels.cpu().numpy(), seed=0)[:n], device=labels.device)


def record_frames(record: RunRecord, kernels: KernelProbe) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The run's rows (metrics and whole-kernel alignment per step) and its per-layer rows."""
    return record.frame(), pd.DataFrame.from_records(kernels.layer_rows)


def saved_grams(kernels: KernelProbe) -> dict[str, np.ndarray]:
    """The raw Grams as arrays for an npz: ``steps`` and one (steps, n, c, n, c) stack per probe set."""
    arrays = {"steps": np.asarray(kernels.gram_steps)}
    for name, grams in kernels.grams.items():
        arrays[f"gram_{name}"] = torch.stack(grams).numpy()
    for probe in kernels.probe_sets:
        arrays[f"labels_{probe.name}"] = probe.labels.cpu().numpy()
    return arrays


# Centring conventions of the alignment: over the examples for each output
# (Φ(x) - E_x Φ(x), the author's code), over all n·c indices (eq. 6.3.3), or none (Fig B.6).
CENTRINGS = ("per_output", "global", "uncentred")
TRACE_RATIO_MARKS = (40, 80, 160)


def centred_as(gram: Tensor, centring: str) -> Tensor:
    return gram if centring == "uncentred" else centre(gram, per_output=centring == "per_output")


def label_alignment(gram: Tensor, labels: Tensor, centring: str) -> float:
    target = centred_as(target_gram(labels, gram.shape[1]).to(gram), centring)
    return float(alignment(centred_as(gram, centring), target, centred=False))


def spectrum_summary(grams: dict[str, np.ndarray], centring: str) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """From a run's raw Grams: per step and probe set, the spectrum of the kernel centred as
    ``centring`` says (the thesis reports centred features): max, mean and median eigenvalue,
    effective rank (eq. 6.3.1), trace ratios T_k = Σ_{j≤k} λ_j / Σ_j λ_j (eq. 6.3.2, k counted from
    1, so T_1 = λ_1 / Σλ); the alignment with the labels under every centring; and all T_k curves.
    A step whose Gram is not finite (the run diverged) is marked ``diverged``, its values NaN."""
    rows, curves = [], {}
    for key in (k for k in grams if k.startswith("gram_")):
        probe = key.removeprefix("gram_")
        labels = torch.as_tensor(grams[f"labels_{probe}"])
        ratios = []
        for step, gram in zip(grams["steps"], grams[key]):
            gram = torch.as_tensor(gram, dtype=torch.float64)
            if not torch.isfinite(gram).all():  # the run diverged: no spectrum (eigh would not converge)
                ratios.append(np.full(gram.shape[0] * gram.shape[1], np.nan))
                rows.append({"step": int(step), "probe": probe, "diverged": True})
                continue
            values = eigenvalues(centred_as(gram, centring)).clamp(min=0)  # rounding leaves tiny negatives
            ratio = trace_ratios(values)
            ratios.append(ratio.numpy())
            rows.append({"step": int(step), "probe": probe, "diverged": False, "eigenvalue_max": float(values[0]),
                         "eigenvalue_mean": float(values.mean()), "eigenvalue_median": float(values.median()),
                         "effective_rank": float(effective_rank(values)),
                         **{f"trace_ratio_{k}": float(ratio[k - 1]) for k in TRACE_RATIO_MARKS if k <= len(ratio)},
                         **{f"cka_{name}": label_alignment(gram, labels, name) for name in CENTRINGS}})
        curves[f"trace_ratios_{probe}"] = np.stack(ratios)
    curves["steps"] = np.asarray(grams["steps"])
    return pd.DataFrame.from_records(rows), curves


# --- Figs 6.4, B.7: alignment on easy vs difficult examples ---

def _balanced(task: dict[str, Tensor]) -> dict[str, Tensor]:
    """The training set in a fixed class-balanced order, so that its prefixes are balanced."""
    order = probe_examples(task["y_train"], len(task["y_train"]))
    return {**task, "x_train": task["x_train"][order], "y_train": task["y_train"][order]}


def easy_difficult_task(data_npz, run: dict, seed: int, device,
                        difficult_npz=None) -> tuple[dict[str, Tensor], list[ProbeSet]]:
    """Hierarchical alignment (§6.3.4): ``n_easy`` training examples with their labels, plus
    ``n_difficult`` difficult ones, and a probe set of ``probe_size`` examples of each kind (all
    chosen class-balanced, in a fixed order).

    Difficult examples are other training examples with random labels (``random_labels``, drawn
    uniformly, possibly equal to the true one, as the author's code), examples of another dataset
    sharing the output head (``dataset``, KMNIST at paper scale), or a structured stand-in
    (``transposed``: other training images transposed, their labels permuted by a fixed
    permutation: learnable, but unlike the easy ones)."""
    task = _balanced(load_task(data_npz, device=device))
    n_easy, n_difficult, kind = run["n_easy"], run["n_difficult"], run["difficult"]
    easy_x, easy_y = task["x_train"][:n_easy], task["y_train"][:n_easy]
    if kind == "dataset":
        other = _balanced(load_task(difficult_npz, device=device))
        hard_x, hard_y = other["x_train"][:n_difficult], other["y_train"][:n_difficult]
    else:
        hard_x = task["x_train"][n_easy:n_easy + n_difficult]
        hard_y = task["y_train"][n_easy:n_easy + n_difficult]
        if len(hard_x) < n_difficult:
            raise ValueError(f"{data_npz} has {len(task['x_train'])} training examples: too few for "
                             f"{n_easy} easy and {n_difficult} difficult ones")
        if kind == "random_labels":
            hard_y = torch.as_tensor(randomise_labels(hard_y.cpu().numpy(), 1.0, NUM_CLASSES, seed)[0], device=device)
        elif kind == "transposed":
            hard_x = hard_x.transpose(-1, -2)
            permutation = torch.as_tensor(np.random.default_rng(run["permutation_seed"]).permutation(NUM_CLASSES),
                                          device=device)
            hard_y = permutation[hard_y]
        else:
            raise ValueError(f"difficult examples: unknown kind {kind!r}")
    x_train, y_train = torch.cat([easy_x, hard_x]), torch.cat([easy_y, hard_y])
    if run["standardise"]:  # with the mixture's statistics (the author's code)
        mean, std = x_train.mean(), x_train.std()
        x_train, task["x_test"] = (x_train - mean) / std, (task["x_test"] - mean) / std
    task = {"x_train": x_train, "y_train": y_train, "x_test": task["x_test"], "y_test": task["y_test"]}
    n = run["probe_size"]  # prefixes of class-balanced sets: balanced probes
    probes = [ProbeSet("easy", task["x_train"][:n], y_train[:n]),
              ProbeSet("difficult", task["x_train"][n_easy:n_easy + n], y_train[n_easy:n_easy + n])]
    return task, probes


# --- Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task ---

def binary_cross_entropy(logits: Tensor, labels: Tensor) -> Tensor:
    """Binary cross-entropy of a scalar logit against {0, 1} labels (the thesis's ±1 labels)."""
    return F.binary_cross_entropy_with_logits(logits.reshape(-1), labels.reshape(-1))


def disk_mlp(spec: dict) -> torch.nn.Module:
    """The thesis's MLP: ``depth`` Linear layers (``depth − 1`` hidden layers of ``width`` units, as
    the thesis code counts them), scalar output, PyTorch's default init."""
    return mlp(2, [spec["width"]] * (spec["depth"] - 1), 1, spec["activation"])


def disk_run(data_npz, spec: dict, seed: int, device: str = "auto") -> dict[str, np.ndarray]:
    """Full-batch GD on the binary cross-entropy of the disk task (App. B.3.1); at each of the
    figure's rows (iterations) the scalar tangent Gram on the test grid (of centred tangent
    features when ``centred``), its whole spectrum, λ_j/λ_1 and its top ``eigenfunctions``
    eigenvectors (``kernels.eigenfunctions``); the training loss and the train and grid accuracies
    at log-spaced iterations."""
    iterations = spec["iterations"]
    if not all(0 <= row <= iterations for row in spec["rows"]):
        raise ValueError(f"the figure's rows {spec['rows']} must lie within the run's {iterations} iterations")
    device = choose_device(device)
    task = load_task(data_npz, layout="flat", targets="values", device=device)
    x_grid = task["x_test"]
    seed_everything(seed)
    model = disk_mlp(spec).to(device)
    learner = SupervisedLearner(model, torch.optim.SGD(model.parameters(), lr=spec["lr"]), binary_cross_entropy,
                                task["x_train"], task["y_train"])

    @torch.no_grad()
    def metrics(session: Session) -> dict:
        logits = model(task["x_train"]).reshape(-1)
        grid_logits = model(x_grid).reshape(-1)
        return {"train_loss": float(binary_cross_entropy(logits, task["y_train"])),
                "train_accuracy": float(((logits > 0).to(logits) == task["y_train"]).float().mean()),
                "grid_accuracy": float(((grid_logits > 0).to(logits) == task["y_test"]).float().mean())}

    def spectrum(session: Session) -> dict[str, Tensor]:
        values, vectors = tangent_eigenfunctions(model, x_grid, spec["eigenfunctions"], centred=spec["centred"])
        return {"eigenvalues": values.cpu(), "eigenvectors": vectors.cpu()}

    record = Session(learner, EpochBatches(len(task["y_train"]), None, seed), iterations, probes=[metrics],
                     evaluate_at=log_spaced(iterations, spec["log_points"]), snapshot_at=AtSteps(spec["rows"]),
                     snapshot=spectrum, progress=Progress(iterations, name="disk")).run()
    rows = sorted(record.snapshots)
    log = record.frame()
    values = torch.stack([record.snapshots[r]["eigenvalues"] for r in rows])
    return {
        "seed": np.asarray(seed), "rows": np.asarray(rows), "grid_side": np.asarray(int(round(len(x_grid) ** 0.5))),
        "eigenvalues": values.numpy(), "ratios": torch.stack([eigenvalue_ratios(v) for v in values]).numpy(),
        "eigenvectors": torch.stack([record.snapshots[r]["eigenvectors"] for r in rows]).numpy(),  # (row, N, k)
        "grid_labels": task["y_test"].cpu().numpy(), "n_train": np.asarray(len(task["y_train"])),
        "parameters": np.asarray(sum(p.numel() for p in model.parameters())),
        **{f"log_{column}": log[column].to_numpy() for column in ("step", "train_loss", "train_accuracy",
                                                                    "grid_accuracy")},
    }


# --- Fig B.1: output change along the Jacobian's top singular directions ---

RANDOM_DIRECTIONS = 7  # the purpose key of the random directions' generator: seeded_generator(seed, 7)


def train_classifier(model: torch.nn.Module, task: dict, spec: dict, seed: int, state_path=None,
                     inputs_version: str = "") -> int:
    """Cross-entropy training for ``epochs`` epochs of ``batch_size`` (seeded batch order) with the
    configured optimiser, on a session that resumes from ``state_path``; the number of steps taken."""
    optimizer = build_optimiser(spec["optimiser"], model.parameters())
    learner = SupervisedLearner(model, optimizer, F.cross_entropy, task["x_train"], task["y_train"])
    batches = EpochBatches(len(task["y_train"]), spec["batch_size"], seed)
    steps = spec["epochs"] * batches.steps_per_epoch
    checkpoint = checkpoint_for(state_path, spec, seed, inputs_version)
    return Session(learner, batches, steps, checkpoint=checkpoint,
                   progress=Progress(steps, name="perturbation training")).run().steps


def perturbation_run(data_npz, spec: dict, seed: int, device: str = "auto", state_path=None,
                     inputs_version: str = "") -> dict[str, np.ndarray]:
    """Fig B.1, one seed: train ``spec["model"]`` on the dataset, then move its parameters by ε = ``epsilon``
    along the top ``directions`` right singular vectors of the Jacobian of every output on the first
    ``n_probe`` test examples (B.1.23, from the Gram's eigenvectors) and along as many random unit
    directions, and measure ‖f_{w+εv}(X) − f_w(X)‖₂ on the first ``n_eval`` test examples (all when null).
    The arrays of the run's npz: the changes, the Gram's spectrum, accuracies and the sizes."""
    device = choose_device(device)
    task = load_task(data_npz, layout="channels", device=device)
    num_classes = int(max(task["y_train"].max(), task["y_test"].max())) + 1
    model_spec = {"in_channels": task["x_train"].shape[1], "num_classes": num_classes, **spec["model"]}
    seed_everything(seed)
    model = build_model(model_spec).to(device)
    steps = train_classifier(model, task, spec, seed, state_path, inputs_version)
    metrics = split_metrics(model, task)

    x_test = task["x_test"]
    probe, evaluation = x_test[:spec["n_probe"]], x_test[:spec.get("n_eval") or len(x_test)]
    k, epsilon = spec["directions"], spec["epsilon"]
    top = top_singular_directions(model, probe, k)
    n_params = ParameterLayout(model).size
    random = random_unit_directions(k, n_params, seeded_generator(seed, RANDOM_DIRECTIONS), top.right.dtype, device)
    top_changes = output_changes(model, top.right, epsilon, evaluation)
    random_changes = output_changes(model, random, epsilon, evaluation)
    return {"top_changes": top_changes.cpu().numpy(), "random_changes": random_changes.cpu().numpy(),
            "spectrum": top.spectrum.cpu().numpy(),
            "direction_norms": torch.linalg.vector_norm(top.right.double(), dim=1).cpu().numpy(),
            "epsilon": np.float64(epsilon), "seed": np.int64(seed), "steps": np.int64(steps),
            "n_params": np.int64(n_params), "n_train": np.int64(len(task["y_train"])),
            "n_probe": np.int64(len(probe)), "n_eval": np.int64(len(evaluation)), "num_classes": np.int64(num_classes),
            **{name: np.float64(value) for name, value in metrics.items()}}


# --- Fig 6.6: complexity measures against the generalisation gap ---

def complexity_task(data_npz, corruption: float, seed: int, device: torch.device) -> dict[str, Tensor]:
    """The prepared dataset as tensors, the training labels randomised at rate ``corruption``
    (each redrawn uniformly from all classes with that probability, so possibly unchanged;
    seeded by the run's seed); the test labels stay clean. ``redrawn``: which labels were."""
    task = load_task(data_npz, device=device)
    num_classes = int(max(task["y_train"].max(), task["y_test"].max())) + 1
    labels, redrawn = randomise_labels(task["y_train"].cpu().numpy(), corruption, num_classes, seed)
    task["y_train"] = torch.as_tensor(labels, device=device)
    task["redrawn"] = torch.as_tensor(redrawn, device=device)
    return task


def sized_spec(model: dict, x: Tensor, num_classes: int) -> dict:
    """The zoo spec with the sizes the data fixes, for each argument its constructor takes (an
    MLP flattens the images itself)."""
    sizes = {"in_features": x[0].numel(), "out_features": num_classes, "in_channels": x.shape[1],
             "num_classes": num_classes}
    accepted = inspect.signature(model_constructor(model["name"])).parameters
    return {**{k: v for k, v in sizes.items() if k in accepted}, **model}


class ComplexityRun:
    """One run of Fig 6.6: SGD with momentum on the cross-entropy until the training loss on the
    whole training set is at most ``stop_loss`` (checked at every epoch's end), or ``max_epochs``
    (a capped run). Every step adds ‖δw_t‖ to an exact running sum; every ``trace_every`` steps a
    probe records Tr K_t on a fixed probe of ``trace_probe`` training examples (all outputs) beside
    the running sum; at the end, the train and test errors and every complexity measure.

    run: dataset, model (zoo spec without sizes), corruption, optimiser {lr, momentum},
    batch_size, stop_loss, max_epochs, trace_every, trace_probe, margin_quantile, state_every_s,
    device.
    """

    def __init__(self, data_npz, run: dict, seed: int):
        self.run, self.seed = run, seed
        self.device = choose_device(run.get("device", "auto"))
        self.task = complexity_task(data_npz, run["corruption"], seed, self.device)
        x, y = self.task["x_train"], self.task["y_train"]
        self.num_classes = int(max(y.max(), self.task["y_test"].max())) + 1
        self.model_spec = sized_spec(run["model"], x, self.num_classes)
        seed_everything(seed)
        self.model = build_model(self.model_spec).to(self.device)
        self.initial = {name: p.detach().clone() for name, p in self.model.named_parameters()}
        self.batches = EpochBatches(len(y), run["batch_size"], seed)
        probe = torch.randperm(len(y), generator=seeded_generator(seed, 5))[:run["trace_probe"]]
        self.x_probe = x[probe.to(self.device)]
        self.norms = UpdateNormTracker(self.model)
        optimiser = run["optimiser"]
        sgd = torch.optim.SGD(self.model.parameters(), lr=optimiser["lr"], momentum=optimiser.get("momentum", 0.0))
        self.learner = SupervisedLearner(self.model, sgd, F.cross_entropy, x, y, trackers=[self.norms])
        self.result: RunRecord | None = None

    @property
    def steps_per_epoch(self) -> int:
        return self.batches.steps_per_epoch

    def trace(self, session: Session) -> dict:
        """Tr K_t of the probe's Gram (examples × outputs) and the running sum of ‖δw‖ to this step."""
        return {"probe_trace": float(ntk_diagonal(self.model, self.x_probe, output="trace").sum()),
                "update_norm_sum": float(self.norms.total)}

    def evaluation(self, session: Session) -> dict:
        """Loss and error on the whole training set (its labels as trained on) and the test set."""
        metrics = split_metrics(self.model, self.task)
        record = {"epoch": session.step / self.steps_per_epoch}
        for split in ("train", "test"):
            record[f"{split}_loss"], record[f"{split}_error"] = metrics[f"{split}_loss"], 1 - metrics[f"{split}_accuracy"]
        return record

    def reached(self, session: Session) -> bool:
        """The stopping rule: training cross-entropy at most ``stop_loss`` at the last evaluation."""
        losses = [row["train_loss"] for row in session.rows if "train_loss" in row]
        return bool(losses) and losses[-1] <= self.run["stop_loss"]

    def session(self, state_path=None, inputs_version: str = "") -> Session:
        epochs = Every(self.steps_per_epoch)
        steps = self.run["max_epochs"] * self.steps_per_epoch
        checkpoint = checkpoint_for(state_path, self.run, self.seed, inputs_version, self.run.get("state_every_s", 1800))
        return Session(self.learner, self.batches, steps,
                       probes=[Scheduled(self.trace, Every(self.run["trace_every"])), self.evaluation],
                       evaluate_at=epochs, stop=self.reached, stop_at=epochs, checkpoint=checkpoint,
                       progress=Progress(steps, name=complexity_run_name(self.run)))

    def train(self, state_path=None, inputs_version: str = "") -> RunRecord:
        self.result = self.session(state_path, inputs_version).run()
        return self.result

    def records(self) -> pd.DataFrame:
        return self.result.frame()

    def final(self) -> dict:
        """The run's end: errors, gap, whether it was capped, the learning-flow measure (6.4.11)
        and the comparison measures of the final network."""
        records = self.records()
        last = records.dropna(subset=["train_loss"]).iloc[-1]
        n_train = len(self.task["y_train"])
        measures = complexity_measures(self.model, self.initial, self.task["x_train"], self.task["y_train"],
                                       self.run.get("margin_quantile", 0.05))
        return {
            "run": self.run, "seed": self.seed, "model_spec": self.model_spec,
            "steps": self.result.steps, "epochs": self.result.steps / self.steps_per_epoch,
            "capped": self.result.ended != "stopped", "ended": self.result.ended,
            "parameters": sum(p.numel() for p in self.model.parameters()),
            "n_train": n_train, "n_probe": len(self.x_probe), "labels_redrawn": len(self.task["redrawn"]),
            "train_loss": float(last["train_loss"]), "train_error": float(last["train_error"]),
            "test_loss": float(last["test_loss"]), "test_error": float(last["test_error"]),
            "gap": float(last["test_error"] - last["train_error"]),
            "update_norm_sum": float(self.norms.total),
            "learning_flow": learning_flow_of_records(records, n_train, len(self.x_probe)),
            **measures,
            "seconds": self.result.seconds,
        }


def complexity_run(data_npz, run: dict, seed: int, state_path=None, inputs_version: str = ""
                   ) -> tuple[pd.DataFrame, dict]:
    """Train one run of Fig 6.6 (resuming from ``state_path`` when it holds this run's state):
    its records over training and its final measures."""
    full_float32_matmuls()
    experiment = ComplexityRun(data_npz, run, seed)
    experiment.train(state_path, inputs_version)
    return experiment.records(), experiment.final()
