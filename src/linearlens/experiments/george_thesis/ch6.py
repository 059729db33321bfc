"""Experiments for Chapter 6 (NTK alignment) and appendix B. The runs behind Figs 6.1-6.6 and B.1-B.8
(tangent-kernel spectrum, alignment with the labels, SuperNat, complexity measures); Fig 6.5's left half is
an algorithm box, drawn with its curves."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ...kernels.directions import flat_parameters, output_changes, random_unit_directions, top_singular_directions
from ...models.zoo import build_model
from ...train.batches import EpochBatches, seeded_generator
from ...train.learners import SupervisedLearner
from ...train.optimisers import build_optimiser
from ...train.progress import Progress
from ...train.runtime import choose_device, seed_everything
from ...train.session import Session, checkpoint_for
from ...train.tasks import classification_metrics, load_task

# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and its alignment with the labels over training (alignment) ---

# --- end of alignment ---

# --- Figs 6.4, B.7: alignment on easy vs difficult examples (easy_difficult) ---

# --- end of easy_difficult ---

# --- Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task (disk) ---

# --- end of disk ---

# --- Fig B.2: spectral bias of a random MLP's tangent kernel (spectral_bias) ---

# --- end of spectral_bias ---

# --- Fig 6.5: SuperNat vs gradient descent on noisy linear regression (supernat) ---

# --- end of supernat ---

# --- Fig B.3: which norm measures capacity (random RBF features) (rbf_capacity) ---

# --- end of rbf_capacity ---

# --- Fig B.1: output change along the Jacobian's top singular directions (perturbation) ---

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
    model.eval()
    metrics = {f"{split}_{name}": value for split in ("train", "test") for name, value in zip(
        ("accuracy", "loss"), classification_metrics(model, task[f"x_{split}"], task[f"y_{split}"]))}

    x_test = task["x_test"]
    probe, evaluation = x_test[:spec["n_probe"]], x_test[:spec.get("n_eval") or len(x_test)]
    k, epsilon = spec["directions"], spec["epsilon"]
    top = top_singular_directions(model, probe, k)
    n_params = flat_parameters(model).numel()
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


# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

# --- end of complexity ---
