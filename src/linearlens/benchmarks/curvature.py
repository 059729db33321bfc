"""Benchmark of the curvature package: building KFAC, EKFAC and the diagonal Fisher, and one KFAC
matrix-vector product, against NNGeometry 0.4 and curvlinops 3.0.1 on the same model, data and
matrix (the exact Fisher of the categorical likelihood, curvlinops' "type-2"). Every case runs in
a fresh process (``isolation``); ``check`` is ‖M v‖ for one fixed v, equal across methods when
they compute the same matrix."""

from __future__ import annotations

import importlib.util
import itertools

import pandas as pd
import torch
from torch import nn

from ..curvature import fisher
from ..models.cnn import small_cnn
from ..models.resnet import resnet
from ..train.runtime import choose_device, dtype_from_name, seed_everything, set_threads
from .isolation import fastest_run, run_isolated

# name -> (constructor, input shape): no BatchNorm, since neither peer gives it a KFAC block.
CURVATURE_MODELS = {
    "digits_cnn": (lambda: small_cnn(1, 10, width=8), (1, 8, 8)),
    "resnet20_no_bn": (lambda: resnet((16, 32, 64), (3, 3, 3), 10, batch_norm=False), (3, 32, 32)),
}
OPERATIONS = ("kfac", "ekfac", "diag", "kfac_mv")
METHODS = ("linearlens", "nngeometry", "curvlinops")
UNSUPPORTED = {("curvlinops", "diag"): "curvlinops has no exact diagonal (only stochastic estimates)"}


def _ours(model, x, y, operation):
    representation = "kfac" if operation == "kfac_mv" else operation
    return fisher(model, x, representation=representation)


def _nngeometry(model, x, y, operation):
    from nngeometry.metrics import FIM
    from nngeometry.object import PMatDiag, PMatEKFAC, PMatKFAC
    from torch.utils.data import DataLoader, TensorDataset

    loader = DataLoader(TensorDataset(x, y), batch_size=len(x))
    representation = {"kfac": PMatKFAC, "kfac_mv": PMatKFAC, "ekfac": PMatEKFAC, "diag": PMatDiag}[operation]
    matrix = FIM(model, loader, representation)
    if operation == "ekfac":
        matrix.update_diag(loader)
    return matrix


def _curvlinops(model, x, y, operation):
    from curvlinops import EKFACLinearOperator, KFACLinearOperator

    operator = EKFACLinearOperator if operation == "ekfac" else KFACLinearOperator
    # factors computed at construction (check_deterministic runs products); none added after
    return operator(model, nn.CrossEntropyLoss(), list(model.parameters()), [(x, y)],
                    fisher_type="type-2", separate_weight_and_bias=False, check_deterministic=False)


BUILDERS = {"linearlens": _ours, "nngeometry": _nngeometry, "curvlinops": _curvlinops}


def _product(method, matrix, model, v):
    if method == "linearlens":
        return matrix.mv(v)
    if method == "nngeometry":
        from nngeometry.layercollection import LayerCollection
        from nngeometry.object.vector import PVector

        return matrix.mv(PVector(LayerCollection.from_model(model), vector_repr=v)).to_torch()
    return matrix @ v


def curvature_case(case: dict) -> dict:
    """One (model, operation, method) measurement; runs inside the isolated process."""
    set_threads(case["threads"])
    seed_everything(case["seed"])
    device = choose_device(case["device"])
    dtype = dtype_from_name(case["dtype"])
    torch.set_default_dtype(dtype)  # NNGeometry allocates in the default dtype
    build_model, shape = CURVATURE_MODELS[case["model"]]
    model = build_model().to(device=device, dtype=dtype).eval()
    x = torch.randn(case["n"], *shape, device=device, dtype=dtype)
    y = torch.randint(0, 10, (case["n"],), device=device)
    v = torch.randn(sum(p.numel() for p in model.parameters()), device=device, dtype=dtype)
    build, method, operation = BUILDERS[case["method"]], case["method"], case["operation"]
    build(model, x[:2], y[:2], operation)  # warm-up: lazy initialisation is not measured
    if operation == "kfac_mv":
        matrix = build(model, x, y, operation)
        _product(method, matrix, model, v)  # curvlinops computes its factors at the first product
        product, stats = fastest_run(lambda: _product(method, matrix, model, v), device, case["repeats"])
    else:
        def build_fully():
            built = build(model, x, y, operation)
            if method == "curvlinops":
                built @ v  # its factors (and EKFAC's corrections) are computed lazily
            return built
        matrix, stats = fastest_run(build_fully, device, case["repeats"])
        product = _product(method, matrix, model, v) if operation != "diag" else \
            (matrix.diag() if method == "linearlens" else matrix.get_diag()) * v
    return {**stats, "check": float(product.double().norm())}


def _unavailable(method: str, operation: str) -> str | None:
    if (method, operation) in UNSUPPORTED:
        return f"not supported: {UNSUPPORTED[(method, operation)]}"
    if method != "linearlens" and importlib.util.find_spec(method) is None:
        return f"skipped: {method} not installed (make installs it: see ORACLES in the Makefile)"
    return None


def run_curvature_benchmark(settings: dict, device: str, threads: int, log) -> pd.DataFrame:
    rows = []
    for model, n, operation, method in itertools.product(
            settings["models"], sorted(settings["n"]), settings["operations"], settings["methods"]):
        case = {"model": model, "n": n, "operation": operation, "method": method, "device": device,
                "dtype": settings["dtype"], "threads": threads, "seed": 0,
                "repeats": settings.get("repeats", 1)}
        result = {"status": _unavailable(method, operation)} if _unavailable(method, operation) \
            else run_isolated(curvature_case, case, settings["timeout_s"])
        log.info("curvature %s n=%d %s %s: %s", model, n, operation, method, result)
        rows.append({"benchmark": "curvature", **{k: case[k] for k in ("model", "n", "operation", "method", "dtype")},
                     "device": device, "threads": threads, "timeout_s": settings["timeout_s"], **result})
    frame = pd.DataFrame(rows)
    if "seconds" not in frame:
        frame["seconds"] = float("nan")
    ours = frame[frame["method"] == "linearlens"].set_index(["model", "n", "operation"])["seconds"]
    frame["time_vs_ours"] = [row.seconds / ours.get((row.model, row.n, row.operation), float("nan"))
                             for row in frame.itertuples()]
    return frame
