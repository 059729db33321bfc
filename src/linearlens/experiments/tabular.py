"""Gradient boosting against a network on tabular data under test-time irregularity
(telescoping lens, Sec. 4.2 and App. C.2: Figs 5 and 14; spec recipes C, D, E).

The study uses every row of a prepared dataset: features are preprocessed (log of skewed
features, z-scores, z-scored target), the most irregular 10% of rows by a PCA score form the
irregular pool, the regular rest is split into training rows and a regular test reserve, and test
sets mix the two in proportions p. Both models are scored on every test set (MSE^p) and through
their kernels: the ratio of the largest kernel-row norm on a test set to the largest on the
training set, averaged over trees (boosting) or optimisation steps (network).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from scipy import stats

from ..data.prepared import load_prepared
from ..kernels.ntk import ntk_block
from ..kernels.trees import leaves_of, telescoped_predictions, tree_kernel_row_norms
from ..models.zoo import build_model
from ..train.batches import GeneratorBatches
from ..train.learners import SupervisedLearner
from ..train.losses import squared_loss_of
from ..train.optimisers import build_optimiser
from ..train.runtime import seed_everything
from ..train.session import Session
from ..train.trees import fit_tree_ensemble

PC1 = "pc1"            # App. C.2: |PC1 − median(PC1)|
CENTROID = "centroid"  # Sec. 4.2: distance from the centroid in a low-dimensional PCA space


def preprocess(x: np.ndarray, y: np.ndarray, train: np.ndarray, skew_threshold: float = 1.0) -> tuple:
    """GOV22-style preprocessing fitted on the rows ``train``: features whose training skewness
    exceeds ``skew_threshold`` in absolute value go through sign(x)·log(1 + |x|); then every
    feature and the target are z-scored. Returns (x, y, record of what was done)."""
    x = np.asarray(x, dtype=np.float64).copy()
    skewed = np.flatnonzero(np.abs(stats.skew(x[train], axis=0)) > skew_threshold)
    x[:, skewed] = np.sign(x[:, skewed]) * np.log1p(np.abs(x[:, skewed]))
    x = zscore(x, x[train])
    y_mean, y_scale = float(np.mean(y[train])), float(np.std(y[train]))
    record = {"log_features": skewed.tolist(), "skew_threshold": skew_threshold,
              "target_mean": y_mean, "target_scale": y_scale}
    return x, (np.asarray(y, dtype=np.float64) - y_mean) / y_scale, record


def zscore(x: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Each column centred and scaled by ``reference``'s mean and standard deviation (constant
    columns only centred)."""
    from sklearn.preprocessing import StandardScaler  # imported here: scikit-learn loads slowly

    return StandardScaler().fit(reference).transform(x)


def irregularity_scores(x: np.ndarray, definition: str = PC1, components: int = 2) -> np.ndarray:
    """How far each (standardised) row lies from the bulk: |PC1 − median(PC1)|, or the distance
    from the centroid in the space of the first ``components`` principal components."""
    from sklearn.decomposition import PCA  # imported here: scikit-learn loads slowly

    if definition == PC1:
        first = PCA(n_components=1).fit_transform(x)[:, 0]
        return np.abs(first - np.median(first))
    if definition == CENTROID:
        projected = PCA(n_components=components).fit_transform(x)
        return np.linalg.norm(projected - projected.mean(0), axis=1)
    raise ValueError(f"irregularity definition must be {PC1!r} or {CENTROID!r}, got {definition!r}")


def irregular_split(scores: np.ndarray, irregular_fraction: float, n_regular_test: int,
                    seed: int) -> dict[str, np.ndarray]:
    """Row indices: the ``irregular`` pool (the top ``irregular_fraction`` of scores), a random
    ``regular_test`` reserve of the other rows, and the ``train`` rows (the regular rest)."""
    n = len(scores)
    n_irregular = int(round(irregular_fraction * n))
    order = np.argsort(scores, kind="stable")
    irregular, regular = np.sort(order[n - n_irregular:]), order[:n - n_irregular]
    if n_regular_test >= len(regular):
        raise ValueError(f"a regular test reserve of {n_regular_test} leaves no training rows "
                         f"({len(regular)} regular rows)")
    shuffled = np.random.default_rng(seed).permutation(regular)
    return {"train": np.sort(shuffled[n_regular_test:]), "regular_test": np.sort(shuffled[:n_regular_test]),
            "irregular": irregular}


def mixed_test_sets(regular_test: np.ndarray, irregular: np.ndarray, proportions, n_test: int,
                    seed: int) -> dict[float, np.ndarray]:
    """For every proportion p, ``n_test`` row indices of which round(p · n_test) come from the
    irregular pool and the rest from the regular test reserve. The sets are nested draws from
    one shuffle of each pool, so a larger p only swaps regular rows for further irregular ones
    and the curves over p are not blurred by redrawing."""
    rng = np.random.default_rng(seed)
    irregular_order, regular_order = rng.permutation(irregular), rng.permutation(regular_test)
    sets = {}
    for p in proportions:
        k = int(round(p * n_test))
        if k > len(irregular) or n_test - k > len(regular_test):
            raise ValueError(f"p = {p}: {k} irregular and {n_test - k} regular rows requested, "
                             f"{len(irregular)} and {len(regular_test)} available")
        sets[float(p)] = np.concatenate([irregular_order[:k], regular_order[:n_test - k]])
    return sets


def kernel_ratio(train_norms: np.ndarray, test_norms: np.ndarray, test_rows=None) -> float:
    """R_k = mean_t max_{j ∈ test} ‖k_t(x_j)‖ / mean_t max_{i ∈ train} ‖k_t(x_i)‖, with the norms
    given as (points, T) arrays (T trees or logged steps); ``test_rows``: the rows of
    ``test_norms`` that are the test set, read a few at a time (no copy of their norms)."""
    rows = np.arange(len(test_norms)) if test_rows is None else np.asarray(test_rows)
    test_max = np.max([test_norms[rows[start:start + 1024]].max(axis=0)
                       for start in range(0, len(rows), 1024)], axis=0)
    return float(test_max.mean() / np.max(train_norms, axis=0).mean())


class KernelNormTracker:
    """Kernel-row norms of the network at θ_{t−1} for all tracked points (the training rows
    first): the batch-restricted row of Eq. 3, (1/|B|)·‖K_t(x, x_B)‖, every ``every`` steps, and
    the full training row ‖K_t(x, X_train)‖ / n every ``full_every`` steps (both
    are logged; the second costs n_train/|B| times more).

    The norms of all ``total_steps`` go into one array per variant, allocated at the start and
    never copied: at paper size (~20,000 points × 11,000 steps) they are the run's largest data.
    float32 holds them as exactly as they are known: the kernels come from a float32 network.
    """

    def __init__(self, model, x_all, n_train: int, every: int, full_every: int, total_steps: int):
        self.model, self.x_all, self.n_train = model, x_all, n_train
        self.every, self.full_every = every, full_every
        self.steps = 0
        # (logged steps, points): each log fills one contiguous row; norms() hands out the transpose
        self._logs = {variant: np.empty((sum(map(logs, range(total_steps))), len(x_all)), dtype=np.float32)
                      for variant, logs in (("batch", self._logs_batch), ("full_train", self._logs_full))}
        self._logged = {"batch": 0, "full_train": 0}

    def _logs_full(self, step_index: int) -> bool:
        return step_index % self.full_every == 0

    def _logs_batch(self, step_index: int) -> bool:
        return step_index % self.every == 0 or self._logs_full(step_index)

    def _log(self, variant: str, norms: torch.Tensor) -> None:
        self._logs[variant][self._logged[variant]] = norms.cpu().numpy()
        self._logged[variant] += 1

    def before_step(self, batch) -> None:
        index = self.steps
        self.steps += 1
        if self._logs_full(index):
            kernel = ntk_block(self.model, self.x_all, torch.arange(self.n_train), output=0).double()
            self._log("full_train", kernel.norm(dim=1) / self.n_train)
            batch_kernel = kernel[:, batch]
        elif self._logs_batch(index):
            batch_kernel = ntk_block(self.model, self.x_all, batch, output=0).double()
        else:
            return
        self._log("batch", batch_kernel.norm(dim=1) / len(batch))

    def after_step(self) -> None:
        pass

    def norms(self, variant: str) -> np.ndarray:
        """(points, logged steps) for ``batch`` or ``full_train``: a view, not a copy."""
        return self._logs[variant][:self._logged[variant]].T


def return_freed_blocks() -> None:
    """Have glibc hand large freed blocks back at once (a fixed 64 KiB mmap threshold; a no-op
    without glibc). Each tracked step allocates kernel temporaries while the session keeps one
    small loss tensor per step; under glibc's adaptive threshold those survivors pinned the freed
    temporaries' heap space, and resident memory grew by ~190 KB a step (a 512 + 8,000-point
    run; tests/test_tabular_memory.py) until it dwarfed the norms themselves."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    libc.mallopt(M_MMAP_THRESHOLD, 64 * 1024)


M_MMAP_THRESHOLD = -3  # glibc's malloc.h


def study_rows(data_npz, study: dict) -> tuple[np.ndarray, np.ndarray, dict, dict, dict]:
    """Every row of a prepared dataset, preprocessed, with the irregular split and the mixed test
    sets of ``study`` (irregularity, irregular_fraction, n_test, proportions, split_seed).
    Returns (x, y, split indices, {p: test indices}, the preprocessing record)."""
    arrays = load_prepared(data_npz)
    x = np.concatenate([arrays["x_train"], arrays["x_test"]]).reshape(-1, arrays["x_train"][0].size)
    y = np.concatenate([arrays["y_train"], arrays["y_test"]]).astype(np.float64)
    scores = irregularity_scores(zscore(x, x), study.get("irregularity", PC1))
    seed = study.get("split_seed", 0)
    split = irregular_split(scores, study["irregular_fraction"], study["n_test"], seed)
    x, y, preprocessing = preprocess(x, y, split["train"])
    sets = mixed_test_sets(split["regular_test"], split["irregular"], study["proportions"],
                           study["n_test"], seed)
    return x, y, split, sets, preprocessing


def boosting_scores(library: str, params: dict, x, y, split, sets, seed: int,
                    device: str | torch.device = "cpu") -> tuple[list[dict], object]:
    """MSE^p and the tree-kernel ratio R_k(p) of a boosted ensemble fitted on the training rows;
    the rows and the fitted ensemble."""
    train = split["train"]
    model = fit_tree_ensemble(library, x[train], y[train], params, seed, str(device))
    leaves = leaves_of(model, x[train])
    train_norms = tree_kernel_row_norms(leaves, leaves.leaf_ids(model, x[train]))
    rows = []
    for p, test in sets.items():
        test_norms = tree_kernel_row_norms(leaves, leaves.leaf_ids(model, x[test]))
        rows.append({"model": library, "kernel": "tree", "p": p,
                     "mse": float(np.mean((model.predict(x[test]) - y[test]) ** 2)),
                     "kernel_ratio": kernel_ratio(train_norms, test_norms)})
    return rows, model


def telescoped_sum_error(model, x_train: np.ndarray, y_train: np.ndarray, x: np.ndarray) -> float:
    """max |Σ_t tree-kernel terms − predict| / max |predict| on ``x``: how exactly the fitted
    ensemble is the kernel smoother the ratios are read from."""
    leaves = leaves_of(model, x_train)
    predictions = model.predict(x)
    telescoped = telescoped_predictions(leaves, leaves.leaf_ids(model, x), y_train)
    return float(np.max(np.abs(telescoped - predictions)) / np.max(np.abs(predictions)))


def new_network(run: dict, in_features: int, seed: int, device: str | torch.device = "cpu"):
    """The paper's MLP for ``run``, seeded (initialised on the CPU, then moved to ``device``)."""
    seed_everything(seed)
    return build_model({**run["model"], "in_features": in_features, "out_features": 1}).to(device)


def _on_device_of(model, array: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(array, dtype=torch.float32, device=next(model.parameters()).device)


def _batches(run: dict, n_train: int, seed: int) -> GeneratorBatches:
    return GeneratorBatches(n_train, run["batch_size"], torch.Generator().manual_seed(seed))


def training_steps(run: dict, n_train: int) -> int:
    """The steps of ``run["epochs"]`` epochs over ``n_train`` rows."""
    return run["epochs"] * _batches(run, n_train, seed=0).steps_per_epoch


def fit_network(model, run: dict, x_train: np.ndarray, y_train: np.ndarray, seed: int, trackers=()):
    """Train ``model`` on (x_train, y_train) for ``run["epochs"]`` epochs (float32, on the
    model's device)."""
    optimizer = build_optimiser(run["optimiser"], model.parameters())
    learner = SupervisedLearner(model, optimizer, squared_loss_of(run["loss"]),
                                _on_device_of(model, x_train), _on_device_of(model, y_train), trackers=trackers)
    Session(learner, _batches(run, len(x_train), seed), training_steps(run, len(x_train))).run()
    return model


def network_predictions(model, x: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return model(_on_device_of(model, x)).reshape(-1).double().cpu().numpy()


def network_scores(run: dict, x, y, split, sets, seed: int, device: str | torch.device = "cpu") -> list[dict]:
    """Train the MLP on the training rows while its kernel-row norms are tracked on the training
    rows and on every test row; MSE^p and R_k(p) for both kernel variants."""
    train = split["train"]
    tested = np.unique(np.concatenate(list(sets.values())))
    position = {row: len(train) + i for i, row in enumerate(tested)}
    x_all = np.concatenate([x[train], x[tested]])
    model = new_network(run, x.shape[1], seed, device)
    return_freed_blocks()
    tracker = KernelNormTracker(model, _on_device_of(model, x_all), len(train), run["kernel_every"],
                                run["full_kernel_every"], training_steps(run, len(train)))
    fit_network(model, run, x[train], y[train], seed, trackers=[tracker])
    predictions = network_predictions(model, x_all)
    rows = []
    for variant in ("batch", "full_train"):
        norms = tracker.norms(variant)
        for p, test in sets.items():
            at = [position[row] for row in test]
            rows.append({"model": "network", "kernel": variant, "p": p,
                         "mse": float(np.mean((predictions[at] - y[test]) ** 2)),
                         "kernel_ratio": kernel_ratio(norms[:len(train)], norms, at)})
    return rows


# GOV22's search spaces as the paper restricts them for Figs 5 and 14: squared loss and no subsampling,
# under which a tree's leaf value is the mean residual and the telescoping tree kernel is exact.
BOOSTING_DEPTHS = (None, 2, 3, 4, 5)
BOOSTING_DEPTH_WEIGHTS = (0.1, 0.1, 0.6, 0.1, 0.1)
SEARCHABLE = ("sklearn", "network")


def sample_hyperparameters(model: str, rng: np.random.Generator) -> dict:
    """One draw: boosting learning_rate ~ LogNormal(log 0.01, log 10), n_estimators ~
    LogUniformInt[10.5, 1000.5], max_depth from (None, 2, 3, 4, 5) with weights (.1, .1, .6, .1,
    .1); the network's learning rate ~ LogUniform[1e-5, 1e-2]."""
    if model == "sklearn":
        return {"learning_rate": float(np.exp(rng.normal(np.log(0.01), np.log(10)))),
                "n_estimators": int(round(np.exp(rng.uniform(np.log(10.5), np.log(1000.5))))),
                "max_depth": BOOSTING_DEPTHS[rng.choice(len(BOOSTING_DEPTHS), p=BOOSTING_DEPTH_WEIGHTS)]}
    if model == "network":
        return {"lr": float(np.exp(rng.uniform(np.log(1e-5), np.log(1e-2))))}
    raise ValueError(f"no search space for {model!r}; searchable: {SEARCHABLE}")


def with_hyperparameters(experiment: dict, model: str, params: dict) -> dict:
    """``experiment`` with one model's settings replaced by searched ones."""
    if model == "network":
        network = experiment["network"]
        return {**experiment, "network": {**network, "optimiser": {**network["optimiser"], **params}}}
    return {**experiment, "boosting": {**experiment["boosting"], model: {**experiment["boosting"][model], **params}}}


def random_search(data_npz, experiment: dict, model: str, iterations: int, n_validation: int,
                  seed: int = 0, device: str | torch.device = "cpu") -> dict:
    """The paper's random search for one model: ``iterations`` draws, each fitted on the training
    rows less a validation split of ``n_validation`` rows and scored by validation MSE.
    Returns {"best": params, "trials": [{**params, "validation_mse"}]}."""
    x, y, split, _, _ = study_rows(data_npz, experiment["study"])
    rng = np.random.default_rng(seed)
    shuffled = rng.permutation(split["train"])
    valid, fit = shuffled[:n_validation], shuffled[n_validation:]
    trials = []
    for _ in range(iterations):
        params = sample_hyperparameters(model, rng)
        trial = with_hyperparameters(experiment, model, params)
        if model == "network":
            run = trial["network"]
            network = fit_network(new_network(run, x.shape[1], seed, device), run, x[fit], y[fit], seed)
            predictions = network_predictions(network, x[valid])
        else:
            ensemble = fit_tree_ensemble(model, x[fit], y[fit], trial["boosting"][model], seed, str(device))
            predictions = ensemble.predict(x[valid])
        trials.append({**params, "validation_mse": float(np.mean((predictions - y[valid]) ** 2))})
    best = min(trials, key=lambda t: t["validation_mse"])
    return {"best": {k: v for k, v in best.items() if k != "validation_mse"}, "trials": trials}


@dataclass
class TabularRun:
    """One seed of the study: the score table, what was done to the data and with which
    settings (``provenance``), and the fitted ensembles with their training rows."""

    records: pd.DataFrame
    provenance: dict
    ensembles: dict[str, tuple[object, np.ndarray, np.ndarray]]


def tabular_run(data_npz, experiment: dict, seed: int, searched: dict | None = None,
                device: str | torch.device = "cpu") -> TabularRun:
    """One seed of the study on one dataset: the network and every configured boosting library,
    scored on every mixed test set. ``experiment`` holds study, network and boosting;
    ``searched`` maps a model to the hyper-parameters its search chose."""
    for model, params in (searched or {}).items():
        experiment = with_hyperparameters(experiment, model, params)
    x, y, split, sets, preprocessing = study_rows(data_npz, experiment["study"])
    rows = network_scores(experiment["network"], x, y, split, sets, seed, device)
    train, tested = split["train"], np.unique(np.concatenate(list(sets.values())))
    ensembles, identity = {}, {}
    for library, params in experiment["boosting"].items():
        scores, model = boosting_scores(library, params, x, y, split, sets, seed, device)
        rows += scores
        ensembles[library] = (model, x[train], y[train])
        identity[library] = telescoped_sum_error(model, x[train], y[train], x[tested])
    frame = pd.DataFrame.from_records(rows)
    frame["n_train"], frame["n_irregular"] = len(split["train"]), len(split["irregular"])
    provenance = {"data": str(data_npz), "seed": seed, "preprocessing": preprocessing,
                  "study": experiment["study"], "rows": {k: len(v) for k, v in split.items()},
                  "network": experiment["network"], "boosting": experiment["boosting"],
                  "searched": searched or {}, "telescoped_vs_predict_max_relative_error": identity}
    return TabularRun(frame, provenance, ensembles)
