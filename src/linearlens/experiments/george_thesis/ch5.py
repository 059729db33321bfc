"""Experiments for Chapter 5 (lazy vs hasty) and appendix C. The runs behind Figs 5.1-5.4 and C.1-C.9
(linearised vs non-linear training on easy and difficult examples; the quadratic model)."""

from __future__ import annotations

import numpy as np
import torch
from torch.func import functional_call, stack_module_state, vmap

from ...linearize.alpha_scaling import alpha_learning_rate, alpha_scaled
from ...linearize.quadratic_model import (
    REGIMES,
    AnalyticDataset,
    QuadraticModes,
    convergence_times,
    example_1,
    example_2,
    example_3,
    quadratic_modes,
    sequentialisation,
    squared_errors,
)
from ...models.deep_linear import DeepLinear

# --- Fig 5.1: the yin-yang toy, α = 1 vs α = 100, Δloss maps at loss thresholds ---


# --- Figs 5.4, C.9: the quadratic model in closed form, and a 2-layer linear MLP on its datasets ---

ANALYTIC_EXAMPLES = ("example_1", "example_2", "example_3")
SETTLED = 1e-3  # the claims' time grid runs until every label mode is this close to θ*, relatively
SETTLING_MARGIN = 2.0  # … times this


def analytic_dataset(name: str, spec: dict) -> AnalyticDataset:
    """Example 1, 2 or 3 of §5.4.4 from the ``analytic`` config (labels and flips from its seed)."""
    example = spec["examples"][name]
    if name == "example_1":
        return example_1(example["mu"])
    if name == "example_2":
        return example_2(example["n"], example["q"], example["eta"], example["d"], spec["seed"])
    if name == "example_3":
        return example_3(example["n"], example["q"], example["eta"], example["d"], example["spurious_scale"],
                         spec["seed"])
    raise ValueError(f"unknown analytic example {name!r}: expected one of {ANALYTIC_EXAMPLES}")


def _dataset_record(data: AnalyticDataset) -> dict[str, np.ndarray]:
    return {"x": data.x, "y": data.y, "group": data.group, "group_names": np.asarray(data.group_names),
            "kappa": data.kappa}


def settling_time(modes: QuadraticModes, regime: str) -> float:
    """When every label mode (θ* > θ⁰) of ``regime`` is within ``SETTLED``·θ* of θ* (exact times)."""
    times = convergence_times(modes.theta0, modes.theta_star, modes.mu, SETTLED * modes.theta_star)[regime]
    return float(np.nanmax(times))


def analytic_example(name: str, spec: dict) -> dict[str, np.ndarray]:
    """One example in both regimes: per-example squared errors on the figure's time window
    (``time_points`` from 0 to ``t_<regime>``) and, for the claims, on a log grid of
    ``claim_points`` times (and 0) up to ``SETTLING_MARGIN`` × the regime's settling time."""
    data = analytic_dataset(name, spec)
    modes = quadratic_modes(data.x, data.y, spec["sigma"], spec["degenerate_basis"], spec["seed"])
    r = modes.rank
    record = {**_dataset_record(data), "mu": modes.mu[:r], "y_tilde": modes.y_tilde[:r],
              "theta_star": modes.theta_star[:r], "theta0": modes.theta0[:r]}
    for regime in REGIMES:
        window = np.linspace(0.0, spec["examples"][name][f"t_{regime}"], spec["time_points"])
        horizon = SETTLING_MARGIN * settling_time(modes, regime)
        dense = np.concatenate([[0.0], np.geomspace(horizon * 1e-6, horizon, spec["claim_points"])])
        record |= {f"{regime}_times": window, f"{regime}_errors": squared_errors(modes, regime, window),
                   f"{regime}_dense_times": dense, f"{regime}_dense_errors": squared_errors(modes, regime, dense)}
    return record


def sequentialisation_record(spec: dict) -> dict[str, np.ndarray]:
    """Eq. 5.4.8 on Example 1's modes (mode i = example i) for each σ of the config: θ_λ'(t_λ)/θ*_λ'
    at the time t_λ mode λ gets ε-close, in the non-linear flow."""
    config = spec["sequentialisation"]
    data = example_1(spec["examples"]["example_1"]["mu"])
    mu = np.diag(data.x) ** 2
    theta_star = data.y / np.sqrt(mu)
    ratios = [sequentialisation(theta_star, mu, np.full(mu.size, sigma / 2), config["epsilon"])
              for sigma in config["sigmas"]]
    return {"sigmas": np.asarray(config["sigmas"], dtype=float), "epsilon": np.asarray(config["epsilon"]),
            "ratios": np.stack(ratios), "y_tilde": mu * theta_star, "theta_star": theta_star}


def analytic_run(spec: dict) -> dict[str, np.ndarray]:
    """Fig 5.4's closed forms for the three examples, and the sequentialisation of eq. 5.4.8: one
    flat record, keys ``<example>/<name>`` and ``sequentialisation/<name>``."""
    record = {f"{name}/{key}": value for name in ANALYTIC_EXAMPLES for key, value in analytic_example(name, spec).items()}
    return record | {f"sequentialisation/{key}": value for key, value in sequentialisation_record(spec).items()}


def deep_linear_networks(widths: list[int], init_scale: float, seeds: list[int]) -> list[DeepLinear]:
    """One float64 network per seed (PyTorch's default init from ``torch.manual_seed(seed)``)."""
    networks = []
    for seed in seeds:
        torch.manual_seed(seed)
        networks.append(DeepLinear(widths, init_scale).double())
    return networks


def alpha_scaled_gradient_descent(networks: list[torch.nn.Module], x: torch.Tensor, y: torch.Tensor, alpha: float,
                                  lr: float, iterations: int, keep_initial_output: bool = False) -> np.ndarray:
    """Full-batch GD on the mean squared error of f^α = α(f_θ − f_θ₀) (θ₀ each network's start;
    ``keep_initial_output`` adds f_θ₀ back, eq. 5.2.4) at the rate η/α², every network at once
    (``torch.func.vmap`` of the forward pass over their stacked parameters; one backward gives every
    network's gradient, as their losses are summed). Returns the per-example squared errors after
    0 … ``iterations`` steps: (iterations + 1, networks, n)."""
    stacked, _ = stack_module_state(networks)
    params = [value.detach().requires_grad_() for value in stacked.values()]
    names, template = list(stacked), networks[0]

    def outputs(*values):
        return functional_call(template, dict(zip(names, values)), (x,)).squeeze(-1)

    batched = vmap(outputs)
    with torch.no_grad():
        initial = batched(*params)  # f_θ₀ is fixed: computed once
    rate = alpha_learning_rate(lr, alpha)
    history = torch.empty(iterations + 1, len(networks), len(y), dtype=x.dtype)
    for step in range(iterations + 1):
        errors = (alpha_scaled(batched(*params), initial, alpha, keep_initial_output) - y) ** 2
        history[step] = errors.detach()
        if step == iterations:
            break
        gradients = torch.autograd.grad(errors.mean(dim=-1).sum(), params)
        with torch.no_grad():
            for value, gradient in zip(params, gradients):
                value.sub_(gradient, alpha=rate)
    return history.numpy()


def twolayer_run(name: str, spec: dict) -> dict[str, np.ndarray]:
    """Fig C.9 on one example: an unconstrained 2-layer linear MLP (d × d then d × 1, no bias,
    PyTorch's init × ``init_scale``) from each of ``inits`` initialisations (seeds seed·1000 + k),
    trained in both regimes from the same θ₀ (the α and iterations of each regime)."""
    data = analytic_dataset(name, spec)
    config = spec["twolayer"]
    d = data.x.shape[1]
    seeds = [1000 * spec["seed"] + k for k in range(config["inits"])]
    x, y = torch.as_tensor(data.x, dtype=torch.float64), torch.as_tensor(data.y, dtype=torch.float64)
    record = _dataset_record(data) | {"example": np.asarray(name), "init_seeds": np.asarray(seeds)}
    for regime in REGIMES:
        networks = deep_linear_networks([d, d, 1], config["init_scale"], seeds)
        alpha, iterations = config["alphas"][regime], config["iterations"][regime]
        record |= {f"{regime}_errors": alpha_scaled_gradient_descent(networks, x, y, alpha, config["lr"], iterations),
                   f"{regime}_alpha": np.asarray(alpha), f"{regime}_lr": np.asarray(alpha_learning_rate(config["lr"], alpha))}
    return record


# --- Figs 5.2, C.1-C.6: α-scaled runs on C-score groups and noisy labels, linearity metrics ---


# --- Figs 5.3, C.7, C.8: spurious correlations ---
