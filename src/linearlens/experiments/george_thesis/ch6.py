"""Experiments for Chapter 6 (NTK alignment) and appendix B. The runs behind Figs 6.1-6.6 and B.1-B.8
(tangent-kernel spectrum, alignment with the labels, SuperNat, complexity measures); Fig 6.5's left half is
an algorithm box, drawn with its curves."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from ...kernels.eigenfunctions import eigenvalue_ratios, tangent_eigenfunctions
from ...models.mlp import mlp
from ...train.batches import EpochBatches
from ...train.learners import SupervisedLearner
from ...train.progress import Progress
from ...train.runtime import choose_device, seed_everything
from ...train.schedules import AtSteps, log_spaced
from ...train.session import Session
from ...train.tasks import load_task

# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and its alignment with the labels over training (alignment) ---

# --- end of alignment ---

# --- Figs 6.4, B.7: alignment on easy vs difficult examples (easy_difficult) ---

# --- end of easy_difficult ---

# --- Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task (disk) ---

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

# --- end of disk ---

# --- Fig B.2: spectral bias of a random MLP's tangent kernel (spectral_bias) ---

# --- end of spectral_bias ---

# --- Fig 6.5: SuperNat vs gradient descent on noisy linear regression (supernat) ---

# --- end of supernat ---

# --- Fig B.3: which norm measures capacity (random RBF features) (rbf_capacity) ---

# --- end of rbf_capacity ---

# --- Fig B.1: output change along the Jacobian's top singular directions (perturbation) ---

# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

# --- end of complexity ---
