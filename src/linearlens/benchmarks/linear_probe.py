"""The cost of iterative linearisation's Fig 6 probes at paper scale: one probe fit
(``train.linear_probe``) on random features of a layer's shape, timed on a device, beside the
scikit-learn pipeline it replaced (StandardScaler + LogisticRegression, CPU only), and the figure's
whole cost extrapolated from them (every checkpoint, layer and run the config probes)."""

from __future__ import annotations

import time
import warnings

import pandas as pd
import torch

from ..experiments.iterative_linearisation import pooled_features, sized_model_spec
from ..models.zoo import build_model
from ..train.linear_probe import fit_linear_probe

METHODS = ("torch", "sklearn")


def random_features(examples: int, features: int, classes: int, device, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Non-negative features (as after ReLU and max-pooling) with a weak class signal: a probe
    neither separates them at once nor stops early."""
    generator = torch.Generator().manual_seed(seed)
    y = torch.randint(0, classes, (examples,), generator=generator)
    centres = 0.1 * torch.randn(classes, features, generator=generator)
    x = (torch.randn(examples, features, generator=generator) + centres[y]).clamp_(min=0)
    return x.to(device), y.to(device)


def _fit(method: str, x: torch.Tensor, y: torch.Tensor, max_iter: int) -> int:
    """One fit to ``max_iter`` iterations (tolerance 0: the most the config allows); its iterations."""
    if method == "torch":
        return fit_linear_probe(x, y, 1.0, max_iter, tol=0.0).iterations
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # not converging is the point here
        probe = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=max_iter, tol=0.0))
        return int(probe.fit(x.cpu().numpy(), y.cpu().numpy())[-1].n_iter_[0])


def _timed_fit(method: str, x: torch.Tensor, y: torch.Tensor, max_iter: int) -> tuple[float, int]:
    if x.device.type == "cuda":
        torch.cuda.synchronize(x.device)
    start = time.perf_counter()
    iterations = _fit(method, x, y, max_iter)
    if x.device.type == "cuda":
        torch.cuda.synchronize(x.device)
    return time.perf_counter() - start, iterations


def fit_seconds(method: str, examples: int, features: int, classes: int, iterations: int, device) -> dict:
    """A fit's fixed seconds (standardising, copies) and seconds per L-BFGS iteration, from fits of
    ``iterations`` and twice as many iterations (the faster of two each) after a small warm-up fit
    (lazy initialisation). On a tiny problem timing noise can swamp the difference."""
    device = torch.device(device)
    _fit(method, *random_features(2 * classes, 4, classes, device), 2)
    x, y = random_features(examples, features, classes, device)
    (short, few), (long, many) = (min(_timed_fit(method, x, y, count) for _ in range(2))
                                  for count in (iterations, 2 * iterations))
    if many <= few:
        raise RuntimeError(f"a {method} probe stopped after {few} iterations: time it with more features or classes")
    per_iteration = (long - short) / (many - few)
    return {"method": method, "examples": examples, "features": features, "classes": classes,
            "iterations": many, "fixed_seconds": max(short - few * per_iteration, 0.0),
            "seconds_per_iteration": per_iteration,
            "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"}


def layer_widths(model: dict, input_shape: tuple[int, ...], classes: int, layers: list[int]) -> dict[int, int]:
    """Features of each probed layer (the flattened output of its pooling layer) for the model."""
    x = torch.zeros(1, *input_shape)
    network = build_model(sized_model_spec(model, x, classes))
    parameters = {**dict(network.named_parameters()), **dict(network.named_buffers())}
    return {layer: pooled_features(network, parameters, x, layer).shape[1] for layer in layers}


def figure_cost(experiment: dict, probes: dict, input_shape: tuple[int, ...], classes: int, train_size: int,
                method: str, device, fraction: float = 1.0, timed_iterations: int = 20) -> pd.DataFrame:
    """Per probed layer: a fit's fixed seconds and seconds per iteration, timed on ``fraction`` of
    the training examples (scaled up: both are linear in them), the fits the config asks for
    (checkpoints × runs × seeds) and their hours at ``max_iter`` iterations each, an upper bound (a
    fit may converge sooner)."""
    steps, every = experiment["steps"], experiment["checkpoint_every"]
    checkpoints = steps // every + 1 + (steps % every > 0)  # step 0, every ``every`` steps, the last
    fits = checkpoints * len(experiment["settings"]) * len(probes["seeds"])
    timed = max(int(probes.get("train_size") or train_size) * fraction, classes)
    rows = []
    for layer, features in layer_widths(experiment["model"], input_shape, classes, probes["layers"]).items():
        measured = fit_seconds(method, int(timed), features, classes, timed_iterations, device)
        fixed, per_iteration = measured["fixed_seconds"] / fraction, measured["seconds_per_iteration"] / fraction
        rows.append({"layer": layer, "features": features, "fits": fits, "timed_examples": int(timed),
                     "fixed_seconds": fixed, "seconds_per_iteration": per_iteration, "max_iter": probes["max_iter"],
                     "hours": fits * (fixed + probes["max_iter"] * per_iteration) / 3600, "method": method,
                     "device": measured["device"]})
    return pd.DataFrame(rows)
