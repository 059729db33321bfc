"""Experiments for Chapter 2 (background). The run behind Fig 2.1: four normal distributions equally far apart
in their parameters (μ, σ²) but not as distributions, computed in closed form (no training). Fig 2.2
(tangent spaces and learning paths) is a drawing, in the figures module only."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

# Example 4 (§2.4.1), in (μ, σ²). f^D is garbled in the thesis text: C's variance, the
# opposite mean, which d_parameter(f^C, f^D) = 1 forces.
NARROW_VARIANCE = 1 - math.sqrt(3 / 4)
GAUSSIANS = {"A": (0.0, 1.0), "B": (0.0, 2.0), "C": (-0.5, NARROW_VARIANCE), "D": (0.5, NARROW_VARIANCE)}
PAIRS = (("A", "B"), ("C", "D"))  # the middle and the right panel


def normal(name: str) -> NormalDist:
    mean, variance = GAUSSIANS[name]
    return NormalDist(mean, math.sqrt(variance))


def density(x: np.ndarray, mean: float, variance: float) -> np.ndarray:
    """f_{μ,σ²}(x), eq. 2.4.1."""
    return np.exp(-(x - mean) ** 2 / (2 * variance)) / np.sqrt(2 * np.pi * variance)


def kl_divergence(p: NormalDist, q: NormalDist) -> float:
    """KL(p ‖ q) of two univariate normals, in nats."""
    ratio = (p.stdev / q.stdev) ** 2
    return 0.5 * (ratio - 1 - math.log(ratio) + (p.mean - q.mean) ** 2 / q.stdev ** 2)


def central_interval(p: NormalDist, mass: float) -> tuple[float, float]:
    """The interval around the mean holding ``mass`` of p: μ ± z σ with z the (1 + mass)/2 quantile."""
    half = (1 + mass) / 2
    return p.inv_cdf(1 - half), p.inv_cdf(half)


def interval_overlap(first: tuple[float, float], second: tuple[float, float]) -> float:
    """Length of the intersection over length of the union of two intervals (0: disjoint, 1: equal)."""
    inside = max(0.0, min(first[1], second[1]) - max(first[0], second[0]))
    return inside / (max(first[1], second[1]) - min(first[0], second[0]))


def pair_measures(first: str, second: str, mass: float) -> dict[str, float]:
    """How far apart two of the distributions are, in parameters and as distributions."""
    p, q = normal(first), normal(second)
    parameter_distance = math.dist(GAUSSIANS[first], GAUSSIANS[second])
    density_overlap = p.overlap(q)  # ∫ min(p, q): 1 − total variation
    return {
        "parameter_distance": parameter_distance,
        "kl_forward": kl_divergence(p, q),
        "kl_backward": kl_divergence(q, p),
        "interval_overlap": interval_overlap(central_interval(p, mass), central_interval(q, mass)),
        "density_overlap": density_overlap,
        # equal priors, the likelihood-ratio test: accuracy ½ (1 + total variation)
        "bayes_accuracy": 0.5 * (1 + (1 - density_overlap)),
    }


def gaussians_run(spec: dict) -> dict[str, np.ndarray]:
    """Fig 2.1's curves and numbers: the four pdfs on ``points`` equally spaced x in ``x_range``, their
    central ``interval_mass`` intervals, and per pair (A, B) and (C, D) the parameter distance, both KL
    divergences, the intervals' intersection over union, the densities' overlap and the accuracy of
    telling the two apart from one sample."""
    x = np.linspace(*spec["x_range"], spec["points"])
    names = list(GAUSSIANS)
    record = {
        "names": np.array(names),
        "parameters": np.array([GAUSSIANS[name] for name in names]),  # (μ, σ²)
        "x": x,
        "pdfs": np.array([density(x, *GAUSSIANS[name]) for name in names]),
        "intervals": np.array([central_interval(normal(name), spec["interval_mass"]) for name in names]),
        "interval_mass": np.float64(spec["interval_mass"]),
    }
    for first, second in PAIRS:
        for measure, value in pair_measures(first, second, spec["interval_mass"]).items():
            record[f"{first}{second}/{measure}"] = np.float64(value)
    return record
