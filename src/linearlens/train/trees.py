"""Squared-loss gradient boosting, fitted and saved so its tree kernels can be read back.

Only the settings under which boosting is a telescoping kernel smoother of the residuals are
accepted: squared error, every training row in every tree (no row subsampling), so the leaf
values are shrunken leaf means of the residuals (telescoping spec, section 7.7).
"""

from __future__ import annotations

from pathlib import Path

import joblib
import numpy as np

LIBRARIES = ("sklearn", "xgboost")

# Settings that would break the kernel identity: fixed here, refused in the config.
_FIXED = {"sklearn": {"loss": "squared_error", "subsample": 1.0},
          "xgboost": {"objective": "reg:squarederror", "subsample": 1.0}}


def fit_tree_ensemble(library: str, x: np.ndarray, y: np.ndarray, params: dict, seed: int,
                      device: str = "cpu", threads: int = 1):
    """A fitted ``GradientBoostingRegressor`` or ``XGBRegressor`` with ``params`` on (x, y)."""
    if library not in LIBRARIES:
        raise ValueError(f"library must be one of {LIBRARIES}, got {library!r}")
    clash = sorted(set(params) & set(_FIXED[library]))
    if clash:
        raise ValueError(f"{', '.join(clash)} cannot be set: the tree-kernel identity needs "
                         f"{_FIXED[library]}")
    if library == "sklearn":
        from sklearn.ensemble import GradientBoostingRegressor
        model = GradientBoostingRegressor(**_FIXED[library], random_state=seed, **params)
    else:
        from xgboost import XGBRegressor
        model = XGBRegressor(**_FIXED[library], random_state=seed, n_jobs=threads,
                             device="cuda" if device.startswith("cuda") else "cpu", **params)
    return model.fit(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64).ravel())


def save_tree_ensemble(path, model, metadata: dict) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    joblib.dump({"model": model, "metadata": metadata}, path)


def load_tree_ensemble(path) -> tuple[object, dict]:
    bundle = joblib.load(path)
    return bundle["model"], bundle["metadata"]


def train_tree_ensemble(prepared_npz, spec: dict, path, device: str = "cpu", threads: int = 1) -> dict:
    """Fit ``spec`` (library, params, seed) on the train split of a prepared dataset and save it
    with its training data, which its tree kernels are defined against. Returns the metadata."""
    from ..data.prepared import load_prepared

    arrays = load_prepared(prepared_npz)
    x = arrays["x_train"].reshape(len(arrays["x_train"]), -1).astype(np.float64)
    y = arrays["y_train"].astype(np.float64)
    seed = spec.get("seed", 0)
    model = fit_tree_ensemble(spec["library"], x, y, spec.get("params", {}), seed, device, threads)
    metadata = {"library": spec["library"], "params": spec.get("params", {}), "seed": seed,
                "dataset": str(prepared_npz), "train_mse": float(np.mean((model.predict(x) - y) ** 2))}
    save_tree_ensemble(path, model, {**metadata, "x_train": x, "y_train": y})
    return metadata
