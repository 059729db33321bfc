"""Benchmark of the kernel module: our empirical NTK against the torch.func route (vmap over
jacrev, then the Jacobian contraction) and NNGeometry; our tree-kernel replay against sparse and
dense per-tree kernel matrices. Every case runs in a fresh process (``isolation``)."""

from __future__ import annotations

import importlib.util
import itertools

import numpy as np
import pandas as pd
import torch

from ..kernels.ntk import empirical_ntk, ntk_by_jacobian
from ..kernels.trees import leaves_from_xgboost, telescoped_predictions, tree_kernel
from ..models.cnn import small_cnn
from ..models.mlp import mlp
from ..models.resnet import resnet20
from ..train.runtime import choose_device, dtype_from_name, seed_everything, set_threads
from .isolation import fastest_run, run_isolated, timed

# name -> (constructor, input shape); ten outputs each, so full Grams are (n, 10, n, 10).
NTK_MODELS = {
    "mlp": (lambda: mlp(784, [256, 256], 10), (1, 28, 28)),
    "small_cnn": (lambda: small_cnn(3, 10, width=32), (3, 32, 32)),
    "resnet20": (lambda: resnet20(10), (3, 32, 32)),
}


def jacrev_ntk(model, x, chunk_size):
    """The naive route: per-example Jacobians by vmap over jacrev, then J Jᵀ."""
    return ntk_by_jacobian(model, x, chunk_size=chunk_size)


def nngeometry_ntk(model, x, chunk_size):
    from nngeometry.backend import TorchHooksJacobianBackend
    from torch.utils.data import DataLoader, TensorDataset

    loader = DataLoader(TensorDataset(x), batch_size=chunk_size)
    return TorchHooksJacobianBackend(model).get_gram_matrix(loader).permute(1, 0, 3, 2)


def linearlens_ntk(model, x, chunk_size):
    """Ours as a user calls it: its passes sized by its own memory budget (the configured chunk
    size bounds the other routes' memory, which grows with it)."""
    return empirical_ntk(model, x)


NTK_METHODS = {"linearlens": linearlens_ntk, "torch_func_jacrev": jacrev_ntk,
               "nngeometry": nngeometry_ntk}


def ntk_case(case: dict) -> dict:
    """One (model, method, n, dtype) measurement; runs inside the isolated process."""
    set_threads(case["threads"])
    seed_everything(case["seed"])
    device = choose_device(case["device"])
    build, shape = NTK_MODELS[case["model"]]
    model = build().to(device=device, dtype=dtype_from_name(case["dtype"])).eval()
    x = torch.randn(case["n"], *shape, device=device, dtype=dtype_from_name(case["dtype"]))
    method = NTK_METHODS[case["method"]]
    method(model, x[:2], case["chunk_size"])  # warm-up: lazy initialisation is not measured
    check, stats = fastest_run(lambda: method(model, x, case["chunk_size"]), device, case["repeats"],
                               keep=lambda gram: float(gram.double().norm()))  # equal across methods when right
    rate = matmul_rate(device, dtype_from_name(case["dtype"]))
    parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)
    rows = case["n"] * gram_outputs(model, x)
    # The Gram's contraction alone: (n·c)²·P/2 multiply-adds over the blocks on or above its diagonal.
    floor = rows ** 2 * parameters / rate
    return {**stats, "check": check, "matmul_gflops": rate / 1e9, "floor_seconds": floor,
            "time_vs_floor": stats["seconds"] / floor}


def gram_outputs(model, x) -> int:
    with torch.no_grad():
        return model(x[:1]).reshape(1, -1).shape[1]


def matmul_rate(device: torch.device, dtype: torch.dtype, size: int = 2048, repeats: int = 3) -> float:
    """FLOP/s of this process's square matrix product: the hardware's floor for a contraction."""
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    a @ b  # warm-up
    best = min(timed(lambda: a @ b, device)[1]["seconds"] for _ in range(repeats))
    return 2 * size ** 3 / best


# --- tree kernels -----------------------------------------------------------------------------

def _replay_with_kernels(leaves, test_ids, y_train, as_dense: bool) -> np.ndarray:
    """Telescoped predictions through each tree's kernel matrices, sparse or made dense."""
    train_ids = leaves.train_leaves
    residuals = np.asarray(y_train, dtype=np.float64) - leaves.init
    predictions = np.full(len(test_ids), leaves.init)
    for t in range(leaves.n_trees):
        on_train, on_test = tree_kernel(leaves, train_ids, t), tree_kernel(leaves, test_ids, t)
        if as_dense:
            on_train, on_test = on_train.toarray(), on_test.toarray()
        predictions += leaves.learning_rate * (on_test @ residuals)
        residuals = residuals - leaves.learning_rate * (on_train @ residuals)
    return predictions


TREE_METHODS = {
    "leaf_replay": lambda leaves, test_ids, y: telescoped_predictions(leaves, test_ids, y),
    "sparse_kernels": lambda leaves, test_ids, y: _replay_with_kernels(leaves, test_ids, y, False),
    "dense_kernels": lambda leaves, test_ids, y: _replay_with_kernels(leaves, test_ids, y, True),
}


def fitted_boosting(rows: int, trees: int, threads: int, seed: int):
    """A seeded regression task and an XGBoost model of ``trees`` depth-6 trees on it."""
    import xgboost

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows + rows // 4, 8))
    y = np.sin(x[:, 0]) + x[:, 1] * x[:, 2] + 0.1 * rng.normal(size=len(x))
    model = xgboost.XGBRegressor(n_estimators=trees, max_depth=6, learning_rate=0.1,
                                 tree_method="hist", n_jobs=threads, random_state=seed)
    model.fit(x[:rows], y[:rows])
    leaves = leaves_from_xgboost(model, x[:rows])
    return leaves, leaves.leaf_ids(model, x[rows:]), y[:rows], model.predict(x[rows:])


def tree_case(case: dict) -> dict:
    leaves, test_ids, y_train, expected = case["fitted"]
    method = TREE_METHODS[case["method"]]
    predictions, stats = timed(lambda: method(leaves, test_ids, y_train), torch.device("cpu"))
    return {**stats, "check": float(np.max(np.abs(predictions - expected)))}


# --- the whole run ----------------------------------------------------------------------------

def _with_ratios(frame: pd.DataFrame, keys: list[str], reference: str) -> pd.DataFrame:
    """seconds / our seconds, within each case: above 1 means ours is faster. A case stopped at
    its time limit gets the lower bound timeout / our seconds instead."""
    if "seconds" not in frame:
        frame["seconds"] = np.nan
    ours = frame[frame["method"] == reference].set_index(keys)["seconds"]
    our_seconds = np.array([ours.get(tuple(row[k] for k in keys), np.nan) for _, row in frame.iterrows()])
    frame["time_vs_ours"] = frame["seconds"].to_numpy() / our_seconds
    timed_out = (frame["status"] == "timeout").to_numpy()
    frame["time_vs_ours_at_least"] = np.where(timed_out, frame["timeout_s"].to_numpy() / our_seconds, np.nan)
    return frame


def _unavailable(method: str) -> str | None:
    """Why a method cannot run here, if it cannot: NNGeometry is a benchmark-only extra."""
    if method == "nngeometry" and importlib.util.find_spec("nngeometry") is None:
        return "skipped: nngeometry not installed (make installs it: see ORACLES in the Makefile)"
    return None


def run_ntk_benchmark(settings: dict, device: str, threads: int, log) -> pd.DataFrame:
    rows, timed_out = [], set()
    for model, dtype, n, method in itertools.product(
            settings["models"], settings["dtypes"], sorted(settings["n"]), settings["methods"]):
        case = {"model": model, "dtype": dtype, "n": n, "method": method, "device": device,
                "threads": threads, "seed": 0, "chunk_size": settings["chunk_size"],
                "repeats": settings.get("repeats", 1)}
        if _unavailable(method):
            result = {"status": _unavailable(method)}
        elif (model, dtype, method) in timed_out:
            result = {"status": "skipped: timed out at a smaller n"}
        else:
            result = run_isolated(ntk_case, case, settings["timeout_s"])
            if result["status"] == "timeout":
                timed_out.add((model, dtype, method))
        log.info("ntk %s %s n=%d %s: %s", model, dtype, n, method, result)
        rows.append({"benchmark": "ntk", **{k: case[k] for k in ("model", "method", "n", "dtype")},
                     "device": device, "threads": threads, "timeout_s": settings["timeout_s"], **result})
    return _with_ratios(pd.DataFrame(rows), ["model", "n", "dtype"], "linearlens")


def run_tree_benchmark(settings: dict, threads: int, log) -> pd.DataFrame:
    fitted = fitted_boosting(settings["rows"], settings["trees"], threads, seed=0)
    rows = []
    for method in settings["methods"]:
        result = run_isolated(tree_case, {"method": method, "fitted": fitted}, settings["timeout_s"])
        log.info("trees %s: %s", method, result)
        rows.append({"benchmark": "tree_kernel", "model": f"xgboost_{settings['trees']}_trees",
                     "method": method, "n": settings["rows"], "dtype": "float64", "device": "cpu",
                     "threads": threads, "timeout_s": settings["timeout_s"], **result})
    return _with_ratios(pd.DataFrame(rows), ["model", "n", "dtype"], "leaf_replay")


def run_kernel_benchmark(settings: dict, device: str, threads: int, log) -> pd.DataFrame:
    return pd.concat([run_ntk_benchmark(settings["ntk"], device, threads, log),
                      run_tree_benchmark(settings["trees"], threads, log)], ignore_index=True)
