"""Tree kernels of squared-loss gradient boosting: replaying the kernels and residuals reproduces
sklearn and XGBoost predictions. Also checks kernel row sums and norms, the sparse kernel against a
dense reference, and that settings which break the identity are refused."""

import numpy as np
import pytest
import xgboost as xgb
from sklearn.dummy import DummyRegressor
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression

from linearlens.kernels.trees import (
    leaves_from_sklearn,
    leaves_from_xgboost,
    telescoped_predictions,
    tree_contributions,
    tree_kernel,
    tree_kernel_row_norms,
)

# XGBoost runs single-threaded (n_jobs=1) throughout. On shared cores, its OpenMP threads made a
# 3-tree fit take over a second, against 0.03 s with one thread.


def make_data(n_train=300, n_test=100, d=5, seed=0):
    """Seeded nonlinear regression with a standardised target (so tolerances are absolute)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_train + n_test, d))
    y = 2.0 * np.sin(x[:, 0]) + x[:, 1] ** 2 - x[:, 2] * x[:, 3] + 0.3 * rng.standard_normal(len(x))
    y = (y - y[:n_train].mean()) / y[:n_train].std() + 0.5  # non-zero mean so h_0 matters
    return x[:n_train], y[:n_train], x[n_train:]


@pytest.fixture(scope="module")
def data():
    return make_data()


@pytest.fixture(scope="module")
def sklearn_model(data):
    x_train, y_train, _ = data
    return GradientBoostingRegressor(n_estimators=60, max_depth=3, random_state=0).fit(x_train, y_train)


def dense_reference(node_x, node_train, reg_lambda):
    """The kernel of one tree written straight from its definition, from the library's node ids."""
    same_leaf = node_x[:, None] == node_train[None, :]
    n_leaf = np.array([(node_train == node).sum() for node in node_x])
    return same_leaf / (n_leaf + reg_lambda)[:, None]


@pytest.mark.parametrize("settings, expected_init", [
    ({"max_depth": 3}, np.mean),  # init=None fits DummyRegressor(strategy='mean')
    ({"max_depth": None, "max_leaf_nodes": 6}, np.mean),
    ({"max_depth": 3, "init": "zero"}, lambda y: 0.0),
    ({"max_depth": 2, "init": DummyRegressor(strategy="median")}, np.median),
], ids=["depth3", "max_leaf_nodes6", "init_zero", "init_median"])
def test_sklearn_replay_reproduces_predict(data, settings, expected_init):
    x_train, y_train, x_test = data
    model = GradientBoostingRegressor(n_estimators=80, learning_rate=0.2, random_state=0, **settings)
    model.fit(x_train, y_train)
    leaves = leaves_from_sklearn(model, x_train)
    assert leaves.init == pytest.approx(expected_init(y_train), abs=1e-12)
    assert (leaves.reg_lambda, leaves.learning_rate, leaves.n_trees) == (0.0, 0.2, 80)
    for x in (x_train, x_test):
        replayed = telescoped_predictions(leaves, leaves.leaf_ids(model, x), y_train)
        np.testing.assert_allclose(replayed, model.predict(x), rtol=0, atol=1e-10)


def test_training_leaf_ids_are_the_stored_ones(data, sklearn_model):
    x_train, _, _ = data
    leaves = leaves_from_sklearn(sklearn_model, x_train)
    np.testing.assert_array_equal(leaves.leaf_ids(sklearn_model, x_train), leaves.train_leaves)


@pytest.mark.parametrize("tree_method, reg_lambda, base_score", [
    ("hist", 1.0, None), ("hist", 3.0, 0.25), ("exact", 1.0, 0.25), ("exact", 3.0, None),
])
def test_xgboost_replay_reproduces_predict(data, tree_method, reg_lambda, base_score):
    x_train, y_train, x_test = data
    model = xgb.XGBRegressor(n_estimators=50, learning_rate=0.3, max_depth=4, reg_lambda=reg_lambda,
                             base_score=base_score, tree_method=tree_method, n_jobs=1)
    model.fit(x_train, y_train)
    leaves = leaves_from_xgboost(model, x_train)
    # XGBoost estimates base_score as mean(y) for squared error when it is left unset.
    expected_init = y_train.mean() if base_score is None else base_score
    assert leaves.init == pytest.approx(expected_init, abs=1e-6)
    assert leaves.reg_lambda == reg_lambda
    assert leaves.learning_rate == pytest.approx(0.3, rel=1e-7)  # stored as float32
    for x in (x_train, x_test):
        replayed = telescoped_predictions(leaves, leaves.leaf_ids(model, x), y_train)
        np.testing.assert_allclose(replayed, model.predict(x), rtol=0, atol=1e-5)
    from_booster = leaves_from_xgboost(model.get_booster(), x_train)
    np.testing.assert_array_equal(from_booster.train_leaves, leaves.train_leaves)
    np.testing.assert_array_equal(from_booster.leaf_ids(model.get_booster(), x_test),
                                  leaves.leaf_ids(model, x_test))


def test_each_tree_contribution_is_its_staged_increment(data, sklearn_model):
    """Check each tree separately against sklearn's staged predictions:
    f_t(x) - f_{t-1}(x) = eta K_t(x, .) r_{t-1}, with r_{t-1} = y - f_{t-1}(x_train) taken from sklearn."""
    x_train, y_train, x_test = data
    leaves = leaves_from_sklearn(sklearn_model, x_train)
    test_ids = leaves.leaf_ids(sklearn_model, x_test)
    train_stages = np.vstack([np.full(len(x_train), leaves.init),
                              *sklearn_model.staged_predict(x_train)])
    test_stages = np.vstack([np.full(len(x_test), leaves.init), *sklearn_model.staged_predict(x_test)])
    contributions = tree_contributions(leaves, test_ids, y_train)
    for t in range(leaves.n_trees):
        increment = leaves.learning_rate * (tree_kernel(leaves, test_ids, t) @ (y_train - train_stages[t]))
        np.testing.assert_allclose(increment, test_stages[t + 1] - test_stages[t], atol=1e-10)
        np.testing.assert_allclose(contributions[:, t], increment, atol=1e-10)


def test_lambda_zero_rows_sum_to_one_with_norm_inverse_sqrt_n_leaf(data, sklearn_model):
    x_train, _, x_test = data
    leaves = leaves_from_sklearn(sklearn_model, x_train)
    for x in (x_train, x_test):
        ids = leaves.leaf_ids(sklearn_model, x)
        norms = tree_kernel_row_norms(leaves, ids)
        for t in (0, 17, leaves.n_trees - 1):
            kernel = tree_kernel(leaves, ids, t)
            n_leaf = leaves.counts(t)[ids[:, t]]
            np.testing.assert_allclose(kernel.sum(axis=1), 1.0, atol=1e-12)
            np.testing.assert_allclose(np.sqrt((kernel.toarray() ** 2).sum(axis=1)), norms[:, t], atol=1e-12)
            np.testing.assert_allclose(norms[:, t], n_leaf ** -0.5, atol=1e-12)


def test_lambda_positive_rows_sum_to_n_leaf_over_n_leaf_plus_lambda(data):
    x_train, y_train, x_test = data
    model = xgb.XGBRegressor(n_estimators=10, learning_rate=0.3, max_depth=3, reg_lambda=3.0,
                             tree_method="hist", n_jobs=1).fit(x_train, y_train)
    leaves = leaves_from_xgboost(model, x_train)
    ids = leaves.leaf_ids(model, x_test)
    norms = tree_kernel_row_norms(leaves, ids)
    for t in range(leaves.n_trees):
        kernel = tree_kernel(leaves, ids, t)
        n_leaf = leaves.counts(t)[ids[:, t]]
        np.testing.assert_allclose(kernel.sum(axis=1), n_leaf / (n_leaf + 3.0), atol=1e-12)
        np.testing.assert_allclose(np.sqrt((kernel.toarray() ** 2).sum(axis=1)), norms[:, t], atol=1e-12)
        np.testing.assert_allclose(norms[:, t], np.sqrt(n_leaf) / (n_leaf + 3.0), atol=1e-12)


@pytest.mark.parametrize("library", ["sklearn", "xgboost"])
def test_sparse_kernel_equals_dense_reference(library):
    x_train, y_train, x_test = make_data(n_train=30, n_test=12, seed=1)
    if library == "sklearn":
        model = GradientBoostingRegressor(n_estimators=15, max_depth=2, random_state=0).fit(x_train, y_train)
        leaves, reg_lambda = leaves_from_sklearn(model, x_train), 0.0
    else:
        model = xgb.XGBRegressor(n_estimators=15, max_depth=2, reg_lambda=2.0, n_jobs=1).fit(x_train, y_train)
        leaves, reg_lambda = leaves_from_xgboost(model, x_train), 2.0
    node_train, node_test = model.apply(x_train), model.apply(x_test)
    for x, node_x in ((x_train, node_train), (x_test, node_test)):
        ids = leaves.leaf_ids(model, x)
        for t in range(leaves.n_trees):
            kernel = tree_kernel(leaves, ids, t)
            assert kernel.shape == (len(x), len(x_train))
            reference = dense_reference(node_x[:, t], node_train[:, t], reg_lambda)
            np.testing.assert_allclose(kernel.toarray(), reference, rtol=1e-14, atol=0)


def test_leaf_without_training_points_has_a_zero_kernel_row(data, sklearn_model):
    x_train, y_train, x_test = data
    leaves = leaves_from_sklearn(sklearn_model, x_train)
    node_ids = sklearn_model.apply(x_test[:4])
    node_ids[0, 5] = 10**6  # a node that no training point reached
    ids = leaves.index_nodes(node_ids)
    assert ids[0, 5] == -1 and (np.delete(ids, 5, axis=1) >= 0).all()
    assert tree_kernel(leaves, ids, 5)[[0], :].nnz == 0
    assert tree_kernel_row_norms(leaves, ids)[0, 5] == 0.0
    assert tree_contributions(leaves, ids, y_train)[0, 5] == 0.0


@pytest.mark.parametrize("model, parameter", [
    (GradientBoostingRegressor(n_estimators=3, subsample=0.5), "subsample"),
    (GradientBoostingRegressor(n_estimators=3, loss="absolute_error"), "loss"),
    (GradientBoostingRegressor(n_estimators=3, loss="huber"), "loss"),
    (GradientBoostingRegressor(n_estimators=3, init=LinearRegression()), "init"),
    (xgb.XGBRegressor(n_jobs=1, n_estimators=3, subsample=0.5), "subsample"),
    (xgb.XGBRegressor(n_jobs=1, n_estimators=3, reg_alpha=0.1), "reg_alpha"),
    (xgb.XGBRegressor(n_jobs=1, n_estimators=3, max_delta_step=1.0), "max_delta_step"),
    (xgb.XGBRegressor(n_jobs=1, n_estimators=3, objective="reg:absoluteerror"), "objective"),
    (xgb.XGBRegressor(n_jobs=1, n_estimators=3, booster="dart"), "booster"),
    (xgb.XGBRegressor(n_jobs=1, n_estimators=3, num_parallel_tree=2), "num_parallel_tree"),
], ids=lambda value: value if isinstance(value, str) else type(value).__name__)
def test_settings_that_break_the_identity_are_refused(data, model, parameter):
    x_train, y_train, _ = data
    model.fit(x_train, y_train)
    build = leaves_from_xgboost if isinstance(model, xgb.XGBModel) else leaves_from_sklearn
    with pytest.raises(ValueError, match=parameter):
        build(model, x_train)


def test_hist_gradient_boosting_is_refused():
    # It has no apply(), so its leaves cannot be read. It is refused before any fitted state is read.
    with pytest.raises(ValueError, match="expected a fitted GradientBoostingRegressor"):
        leaves_from_sklearn(HistGradientBoostingRegressor(), np.zeros((3, 2)))


def test_mismatched_inputs_are_refused(data, sklearn_model):
    x_train, y_train, x_test = data
    leaves = leaves_from_sklearn(sklearn_model, x_train)
    with pytest.raises(ValueError, match="y_train has 299 values"):
        telescoped_predictions(leaves, leaves.train_leaves, y_train[:-1])
    with pytest.raises(ValueError, match="shape"):
        leaves.index_nodes(sklearn_model.apply(x_test)[:, :-1])


def test_scale_smoke_sparse_kernel_size():
    """5,000 training rows and 200 trees: a sparse tree kernel stores exactly
    sum_leaf n_train(leaf) * n_x(leaf) entries, and the replay still reproduces predict."""
    x_train, y_train, x_test = make_data(n_train=5000, n_test=1000, d=8, seed=2)
    model = xgb.XGBRegressor(n_estimators=200, learning_rate=0.1, max_depth=4, tree_method="hist",
                             n_jobs=1).fit(x_train, y_train)
    leaves = leaves_from_xgboost(model, x_train)
    test_ids = leaves.leaf_ids(model, x_test)
    for t in (0, 199):
        n_x = np.bincount(test_ids[:, t], minlength=leaves.counts(t).size)
        assert tree_kernel(leaves, test_ids, t).nnz == int((leaves.counts(t) * n_x).sum())
        assert tree_kernel(leaves, leaves.train_leaves, t).nnz == int((leaves.counts(t) ** 2).sum())
    np.testing.assert_allclose(telescoped_predictions(leaves, test_ids, y_train), model.predict(x_test),
                               rtol=0, atol=1e-5)
    assert tree_kernel_row_norms(leaves, test_ids).shape == (1000, 200)
