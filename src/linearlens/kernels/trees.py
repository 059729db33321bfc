"""Tree kernels of squared-loss gradient boosting (telescoping spec, Eq. 9 and section 7.7).

With squared loss, every leaf value is a shrunken mean of the training residuals in that leaf:
``eta * sum_{i in leaf} r_i / (n_leaf + lambda)``. So tree ``t`` is the kernel smoother

    K_t(x, x_i) = 1{l_t(x) = l_t(x_i)} / (n_leaf_t(x) + lambda)

applied to the residuals ``r_{t-1} = y - f_{t-1}(x_train)``, and the model telescopes as
``f_T(x) = h_0 + eta * sum_t K_t(x, .) r_{t-1}``. Here lambda = 0 for scikit-learn's
GradientBoostingRegressor and ``reg_lambda`` for XGBoost.

Everything works from leaf ids and per-leaf counts. No function builds a dense n x n matrix, and
only ``tree_kernel`` builds a sparse one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
from scipy import sparse


@dataclass(frozen=True)
class TreeEnsembleLeaves:
    """The training leaves of a fitted ensemble, plus the constants that turn them into kernels.

    Leaves are numbered ``0..L_t-1`` within each tree. Only leaves that hold training points are
    numbered, in ascending order of the library's node id. Counts and node ids are stored flat:
    tree ``t`` owns the entries ``leaf_offsets[t]:leaf_offsets[t+1]``.
    """

    train_leaves: np.ndarray   # (n_train, T) int32, Fortran order so each tree's column is contiguous
    leaf_node_ids: np.ndarray  # (sum_t L_t,) library node id of each numbered leaf
    leaf_counts: np.ndarray    # (sum_t L_t,) training points per leaf (n_leaf)
    leaf_offsets: np.ndarray   # (T + 1,)
    reg_lambda: float          # lambda in 1 / (n_leaf + lambda)
    learning_rate: float       # eta
    init: float                # h_0, the constant that boosting starts from
    library: str               # "sklearn" or "xgboost"

    @property
    def n_train(self) -> int:
        return self.train_leaves.shape[0]

    @property
    def n_trees(self) -> int:
        return self.train_leaves.shape[1]

    def counts(self, t: int) -> np.ndarray:
        """n_leaf of every numbered leaf of tree ``t``."""
        return self.leaf_counts[self.leaf_offsets[t]:self.leaf_offsets[t + 1]]

    def index_nodes(self, node_ids: np.ndarray) -> np.ndarray:
        """Map the library's node ids, shaped (n_x, T), to leaf numbers shaped like ``train_leaves``.
        A node that holds no training point maps to -1. Its kernel row is zero."""
        node_ids = _as_node_ids(node_ids, self.n_trees)
        leaf_ids = np.empty(node_ids.shape, dtype=np.int32, order="F")
        for t in range(self.n_trees):
            known = self.leaf_node_ids[self.leaf_offsets[t]:self.leaf_offsets[t + 1]]
            position = np.minimum(np.searchsorted(known, node_ids[:, t]), known.size - 1)
            leaf_ids[:, t] = np.where(known[position] == node_ids[:, t], position, -1)
        return leaf_ids

    def leaf_ids(self, model, x) -> np.ndarray:
        """Leaf numbers (n_x, T) of new points ``x`` under the same ``model``."""
        return self.index_nodes(_apply(model, x))


def leaves_from_sklearn(model, x_train) -> TreeEnsembleLeaves:
    """Build the leaves of a fitted ``sklearn.ensemble.GradientBoostingRegressor`` (lambda = 0).

    ``x_train`` must be the exact data that the model was fitted on, with unit sample weights.
    """
    from sklearn.dummy import DummyRegressor
    from sklearn.ensemble import GradientBoostingRegressor

    if not isinstance(model, GradientBoostingRegressor):
        # HistGradientBoostingRegressor has no apply(), so its leaves cannot be read.
        raise ValueError(f"expected a fitted GradientBoostingRegressor, got {type(model).__name__}")
    if not hasattr(model, "estimators_"):
        raise ValueError("the GradientBoostingRegressor is not fitted")
    if model.loss != "squared_error":
        # Other losses re-fit the leaf values by a line search, so they are no longer residual means.
        raise ValueError(f"loss={model.loss!r}: the tree kernel needs loss='squared_error'")
    if model.subsample < 1.0:
        # Each tree then sees an in-bag sample that sklearn does not expose, so n_leaf is unknown.
        raise ValueError(f"subsample={model.subsample}: the tree kernel needs subsample=1.0")
    if isinstance(model.init_, str) and model.init_ == "zero":
        init = 0.0
    elif isinstance(model.init_, DummyRegressor):
        # init=None fits DummyRegressor(strategy='mean'). Every DummyRegressor predicts a constant.
        init = float(np.ravel(model.init_.predict(np.asarray(x_train)[:1]))[0])
    else:
        raise ValueError(f"init={model.init!r}: only init=None (mean of y), 'zero' or a DummyRegressor "
                         "give a constant h_0")
    return _build_leaves(_apply(model, x_train), reg_lambda=0.0,
                         learning_rate=float(model.learning_rate), init=init, library="sklearn")


def leaves_from_xgboost(model, x_train) -> TreeEnsembleLeaves:
    """Build the leaves of a fitted ``xgboost.XGBRegressor`` (or a ``Booster``). lambda is ``reg_lambda``.

    This reads the settings the booster actually trained with from its saved config, because the
    sklearn-API attributes are None when left at their defaults. ``x_train`` must be the exact
    training data, with unit sample weights (the hessian is then 1 per point).
    """
    learner = json.loads(_booster(model).save_config())["learner"]
    objective = learner["objective"]["name"]
    if objective != "reg:squarederror":
        raise ValueError(f"objective={objective!r}: the tree kernel needs objective='reg:squarederror'")
    booster = learner["gradient_booster"]
    if booster["name"] != "gbtree":
        # DART drops and rescales trees, and gblinear has no trees.
        raise ValueError(f"booster={booster['name']!r}: the tree kernel needs booster='gbtree'")
    if int(booster["gbtree_model_param"]["num_parallel_tree"]) != 1:
        raise ValueError("num_parallel_tree>1: the tree kernel needs one tree per boosting round")
    if int(learner["learner_model_param"]["num_target"]) != 1:
        raise ValueError("num_target>1: the tree kernel handles a single target")
    params = booster["tree_train_param"]
    # Each of these changes the leaf weight away from sum(r) / (n_leaf + lambda).
    for name, key, allowed in [("subsample", "subsample", 1.0), ("reg_alpha", "alpha", 0.0),
                               ("max_delta_step", "max_delta_step", 0.0)]:
        if float(params[key]) != allowed:
            raise ValueError(f"{name}={float(params[key])}: the tree kernel needs {name}={allowed}")
    return _build_leaves(_apply(model, x_train), reg_lambda=float(params["lambda"]),
                         learning_rate=float(params["eta"]), init=_xgboost_base_score(learner),
                         library="xgboost")


def leaves_of(model, x_train) -> TreeEnsembleLeaves:
    """The leaves of a fitted scikit-learn or XGBoost booster, whichever ``model`` is."""
    if type(model).__module__.startswith("sklearn"):
        return leaves_from_sklearn(model, x_train)
    return leaves_from_xgboost(model, x_train)


def tree_kernel(leaves: TreeEnsembleLeaves, x_leaf_ids: np.ndarray, t: int) -> sparse.csr_array:
    """The kernel rows of tree ``t`` as a sparse (n_x, n_train) array with entries
    ``K_t(x, x_i) = 1{same leaf} / (n_leaf + lambda)``.

    The array is the x one-hot membership times the transposed train one-hot, so it stores
    ``sum_leaf n_x(leaf) * n_train(leaf)`` entries.
    """
    counts = leaves.counts(t)
    x_ids = np.asarray(x_leaf_ids)[:, t]
    rows = np.flatnonzero(x_ids >= 0)
    x_onehot = sparse.csr_array(
        (1.0 / (counts[x_ids[rows]] + leaves.reg_lambda), (rows, x_ids[rows])),
        shape=(x_ids.size, counts.size))
    train_ids = leaves.train_leaves[:, t]
    train_onehot = sparse.csr_array(
        (np.ones(leaves.n_train), (np.arange(leaves.n_train), train_ids)),
        shape=(leaves.n_train, counts.size))
    kernel = (x_onehot @ train_onehot.T).tocsr()
    kernel.sort_indices()
    return kernel


def tree_kernel_row_norms(leaves: TreeEnsembleLeaves, x_leaf_ids: np.ndarray) -> np.ndarray:
    """||k_t(x)||_2 = sqrt(n_leaf) / (n_leaf + lambda) for every x and tree, shape (n_x, T).

    For lambda = 0 this is n_leaf^{-1/2}. A point in a leaf that holds no training point gets 0.
    """
    x_leaf_ids = np.asarray(x_leaf_ids)
    norms = np.empty(x_leaf_ids.shape, order="F")
    for t in range(leaves.n_trees):
        counts = leaves.counts(t)  # always >= 1: only leaves with training points are numbered
        norms[:, t] = _values_at(np.sqrt(counts) / (counts + leaves.reg_lambda), x_leaf_ids[:, t])
    return norms


def tree_contributions(leaves: TreeEnsembleLeaves, x_leaf_ids: np.ndarray, y_train) -> np.ndarray:
    """The per-tree terms ``eta * K_t(x, .) r_{t-1}`` of the telescoping sum, shape (n_x, T).
    Their row sums plus ``leaves.init`` are the predictions."""
    x_leaf_ids = np.asarray(x_leaf_ids)
    contributions = np.empty(x_leaf_ids.shape, order="F")
    for t, values in _replayed_leaf_values(leaves, y_train):
        contributions[:, t] = _values_at(values, x_leaf_ids[:, t])
    return contributions


def telescoped_predictions(leaves: TreeEnsembleLeaves, x_leaf_ids: np.ndarray, y_train) -> np.ndarray:
    """``f_T(x) = h_0 + sum_t eta * K_t(x, .) r_{t-1}``, computed only from kernels and residuals.

    This replays the boosting on the training residuals in O(n T) time, without forming any
    kernel. It equals ``model.predict(x)``.
    """
    x_leaf_ids = np.asarray(x_leaf_ids)
    predictions = np.full(x_leaf_ids.shape[0], leaves.init, dtype=np.float64)
    for t, values in _replayed_leaf_values(leaves, y_train):
        predictions += _values_at(values, x_leaf_ids[:, t])
    return predictions


def _replayed_leaf_values(leaves: TreeEnsembleLeaves, y_train):
    """Yield ``(t, v_t)``, where ``v_t[leaf] = eta * sum_{i in leaf} r_i / (n_leaf + lambda)``.

    This is ``eta * K_t(x, .) r_{t-1}`` for any x in that leaf. The training residuals are updated
    after every tree, exactly as boosting does: ``r_t = r_{t-1} - eta * K_t(train, .) r_{t-1}``.
    """
    y_train = np.asarray(y_train, dtype=np.float64).ravel()
    if y_train.size != leaves.n_train:
        raise ValueError(f"y_train has {y_train.size} values but the leaves were built from "
                         f"{leaves.n_train} training points")
    residuals = y_train - leaves.init
    for t in range(leaves.n_trees):
        train_ids = leaves.train_leaves[:, t]
        counts = leaves.counts(t)
        leaf_sums = np.bincount(train_ids, weights=residuals, minlength=counts.size)
        values = leaves.learning_rate * leaf_sums / (counts + leaves.reg_lambda)
        residuals -= values[train_ids]
        yield t, values


def _values_at(values: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``values[ids]``, with 0 where ``ids == -1``. Id -1 picks the appended zero."""
    return np.append(values, 0.0)[ids]


def _build_leaves(node_ids, *, reg_lambda, learning_rate, init, library) -> TreeEnsembleLeaves:
    """Number the leaves of each tree by np.unique, because the library's node ids are not 0..L-1."""
    node_ids = _as_node_ids(node_ids, None)
    n_train, n_trees = node_ids.shape
    train_leaves = np.empty((n_train, n_trees), dtype=np.int32, order="F")
    per_tree_nodes, per_tree_counts = [], []
    for t in range(n_trees):
        nodes, leaf_numbers, counts = np.unique(node_ids[:, t], return_inverse=True,
                                                return_counts=True)
        train_leaves[:, t] = leaf_numbers
        per_tree_nodes.append(nodes)
        per_tree_counts.append(counts)
    offsets = np.concatenate([[0], np.cumsum([nodes.size for nodes in per_tree_nodes])])
    return TreeEnsembleLeaves(
        train_leaves=train_leaves, leaf_node_ids=np.concatenate(per_tree_nodes),
        leaf_counts=np.concatenate(per_tree_counts), leaf_offsets=offsets,
        reg_lambda=float(reg_lambda), learning_rate=float(learning_rate), init=float(init),
        library=library)


def _as_node_ids(node_ids, n_trees: int | None) -> np.ndarray:
    """Node ids as int64 (n, T). sklearn returns them as float64 and XGBoost as float32."""
    node_ids = np.asarray(node_ids)
    if node_ids.ndim != 2 or (n_trees is not None and node_ids.shape[1] != n_trees):
        raise ValueError(f"expected node ids of shape (n, {n_trees or 'T'}), got {node_ids.shape}")
    return np.asarray(node_ids, dtype=np.int64, order="F")


def _apply(model, x) -> np.ndarray:
    """Node ids (n, T) of the leaves that ``x`` falls into, one column per tree."""
    import xgboost

    if isinstance(model, xgboost.Booster):
        return model.predict(xgboost.DMatrix(x), pred_leaf=True)
    # sklearn's GradientBoostingRegressor and XGBoost's sklearn API both give (n, T) from apply().
    return model.apply(x)


def _booster(model):
    return model.get_booster() if hasattr(model, "get_booster") else model


def _xgboost_base_score(learner: dict) -> float:
    """The intercept h_0. XGBoost 3.x stores it as a bracketed vector string, e.g. '[7E-1]'.
    Older versions stored a plain number, e.g. '7E-1'."""
    values = learner["learner_model_param"]["base_score"].strip("[]").split(",")
    if len(values) != 1:
        raise ValueError(f"base_score has {len(values)} entries: the tree kernel handles one target")
    return float(values[0])
