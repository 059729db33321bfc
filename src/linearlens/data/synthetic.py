"""Seeded synthetic data generators the specs ask for. Each is a pure function of its options."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Generator:
    name: str
    description: str
    kind: str
    make: Callable[..., dict[str, np.ndarray]]
    defaults: dict


def quadratic_teacher(d: int = 100, n_train: int = 550, n_test: int = 500, seed: int = 0) -> dict[str, np.ndarray]:
    """KBGP24's polynomial task (telescoping Fig. 4): x ~ N(0, I_d / d), beta ~ N(0, I_d),
    y = (beta^T x)^2 / 2. Train and test inputs and beta come from independent streams of ``seed``."""
    x_stream, test_stream, beta_stream = np.random.default_rng(seed).spawn(3)
    x_train = x_stream.standard_normal((n_train, d)) / np.sqrt(d)
    x_test = test_stream.standard_normal((n_test, d)) / np.sqrt(d)
    beta = beta_stream.standard_normal(d)
    return {
        "x_train": x_train, "y_train": 0.5 * (x_train @ beta) ** 2,
        "x_test": x_test, "y_test": 0.5 * (x_test @ beta) ** 2,
        "beta": beta,
    }


def heavy_tailed_regression(n: int = 6000, noise: float = 0.5, seed: int = 0) -> dict[str, np.ndarray]:
    """Tabular regression with skewed and heavy-tailed features (telescoping spec, quick Figs 5/14):
    four log-normal and four Student-t(3) features; the target is Friedman-1's nonlinearity of the
    first five features and a step interaction of the next two, each feature robustly
    standardised and squashed by tanh, plus Gaussian noise.
    The squashing keeps the target bounded, so rows far out in feature space test how a model
    extrapolates rather than carrying extreme labels."""
    rng = np.random.default_rng(seed)
    x = np.column_stack([rng.lognormal(0.0, 1.0, size=(n, 4)), rng.standard_t(3, size=(n, 4))])
    z = np.tanh((x - np.median(x, axis=0)) / (np.percentile(x, 75, axis=0) - np.percentile(x, 25, axis=0)))
    # Friedman-1 plus a piecewise-constant interaction: real tabular targets are irregular in
    # ways that favour trees (Grinsztajn et al. 2022), which a smooth target alone would not show.
    y = (10 * np.sin(np.pi * z[:, 0] * z[:, 1]) + 20 * (z[:, 2] - 0.5) ** 2
         + 10 * z[:, 3] + 5 * z[:, 4] + 10 * np.sign(z[:, 5]) * (z[:, 6] > 0)
         + noise * rng.standard_normal(n))
    return {"x": x, "y": y}


def quintic_regression(n_train: int = 20, n_test: int = 1000, low: float = -4.0, high: float = 4.0) -> dict[str, np.ndarray]:
    """The 1-D regression of Goldwaser & Ge (App. C of the longer version): y = x⁵/32 − x³/2 + 2x − 1
    on uniformly spaced training and test inputs over [low, high] (no noise, no randomness)."""
    def target(x):
        return x ** 5 / 32 - x ** 3 / 2 + 2 * x - 1

    x_train, x_test = np.linspace(low, high, n_train), np.linspace(low, high, n_test)
    return {"x_train": x_train[:, None], "y_train": target(x_train),
            "x_test": x_test[:, None], "y_test": target(x_test)}


DISK_RADIUS = float(np.sqrt(2 / np.pi))  # the disk holds half of the square [-1, 1]²


def disk(n_train: int = 500, grid: int = 50, seed: int = 0) -> dict[str, np.ndarray]:
    """The Disk task of George's thesis (App. B.3.1, Figs 6.1 and B.4): x ~ U[-1, 1]², label 1 iff
    ‖x‖ ≤ sqrt(2/π), a disk of area 2, half the square, so the classes are balanced in expectation.
    The test inputs are the grid × grid points of [-1, 1]² in row-major order (y outer, x inner:
    test point r·grid + c sits at row r, column c of an image with y rising upwards), so any
    function on them reshapes to a grid × grid image."""
    x_train = np.random.default_rng(seed).uniform(-1.0, 1.0, size=(n_train, 2))
    x_test = square_grid(grid)
    return {"x_train": x_train, "y_train": disk_labels(x_train), "x_test": x_test, "y_test": disk_labels(x_test)}


def disk_labels(x: np.ndarray) -> np.ndarray:
    """1 inside the centred disk of radius sqrt(2/π), 0 outside (the thesis's ±1 as {1, 0})."""
    return (np.linalg.norm(x, axis=1) <= DISK_RADIUS).astype(np.int64)


# The binary yin-yang of George's thesis (Fig 5.1; the authors' own definition, in their toy code; not
# Kriener et al.'s 3-class Yin-Yang): the half-plane x₂ ≤ 0 is class 1, with the label flipped inside two
# small disks, one in each half. Every geometric reading of the task (labels, the figure's
# outlines, the claims' regions) uses these constants.
YIN_YANG_CENTRES = ((0.5, -0.5), (-0.5, 0.5))
YIN_YANG_RADIUS = 0.3


def yin_yang(n_train: int = 100, grid: int = 100, seed: int = 0) -> dict[str, np.ndarray]:
    """The binary yin-yang task: x ~ U[-1, 1]², label 1 (the thesis's +1) if x₂ ≤ 0 and 0 (−1)
    otherwise, flipped inside the disks of radius 0.3 around (0.5, −0.5) and (−0.5, 0.5). The
    classes are balanced in expectation (each disk moves the same area each way). Test inputs:
    the grid × grid points of [-1, 1]² in the row-major layout of ``disk``."""
    x_train = np.random.default_rng(seed).uniform(-1.0, 1.0, size=(n_train, 2))
    x_test = square_grid(grid)
    return {"x_train": x_train, "y_train": yin_yang_labels(x_train), "x_test": x_test,
            "y_test": yin_yang_labels(x_test)}


def yin_yang_labels(x: np.ndarray) -> np.ndarray:
    """1 where x₂ ≤ 0, 0 above, the other way round inside either disk."""
    lower = x[:, 1] <= 0
    return (lower ^ inside_yin_yang_disks(x)).astype(np.int64)


def inside_yin_yang_disks(x: np.ndarray) -> np.ndarray:
    return np.min(yin_yang_disk_distances(x), axis=1) <= YIN_YANG_RADIUS


def yin_yang_disk_distances(x: np.ndarray) -> np.ndarray:
    """(n, 2): each point's distance to the centre of each disk."""
    return np.linalg.norm(x[:, None, :] - np.asarray(YIN_YANG_CENTRES)[None], axis=2)


def square_grid(side: int) -> np.ndarray:
    """The side × side points of [-1, 1]², row-major: point r·side + c at row r (x₂ = s[r]),
    column c (x₁ = s[c]), with s = linspace(-1, 1, side), so a function on them reshapes to an
    image with x₂ rising upwards."""
    values = np.linspace(-1.0, 1.0, side)
    rows, columns = np.meshgrid(values, values, indexing="ij")
    return np.column_stack([columns.ravel(), rows.ravel()])


GENERATORS = {
    g.name: g
    for g in (
        Generator("quadratic_teacher", "synthetic quadratic-teacher regression (KBGP24 Sec. 5)",
                  "tabular", quadratic_teacher, {"d": 100, "n_train": 550, "n_test": 500, "seed": 0}),
        Generator("heavy_tailed_regression",
                  "synthetic heavy-tailed tabular regression (Friedman-1 target with a step interaction)", "tabular",
                  heavy_tailed_regression, {"n": 6000, "noise": 0.5, "seed": 0}),
        Generator("quintic_regression", "the quintic y = x^5/32 - x^3/2 + 2x - 1 on a uniform grid (Goldwaser & Ge, App. C)",
                  "tabular", quintic_regression, {"n_train": 20, "n_test": 1000, "low": -4.0, "high": 4.0}),
        Generator("disk", "the 2-D Disk task of George's thesis (App. B.3.1), x ~ U[-1,1]², label 1 "
                  "inside radius sqrt(2/π), test inputs a square grid", "tabular", disk, {"n_train": 500, "grid": 50, "seed": 0}),
        Generator("yin_yang", "the binary yin-yang of George's thesis (Fig 5.1): x ~ U[-1,1]², label 1 iff "
                  "x₂ ≤ 0, flipped inside two disks of radius 0.3, test inputs a square grid", "tabular", yin_yang,
                  {"n_train": 100, "grid": 100, "seed": 0}),
    )
}
