"""Kernel extraction from a checkpoint and a prepared probe set."""

import json

import numpy as np
import pytest
import torch

from linearlens.data.prepared import save_prepared
from linearlens.kernels.extraction import extract_ntk, extract_tree_kernel
from linearlens.kernels.ntk import empirical_ntk
from linearlens.models.zoo import build_model, save_model
from linearlens.train.trees import load_tree_ensemble, train_tree_ensemble


@pytest.fixture
def checkpoint_and_probe(tmp_path):
    torch.manual_seed(0)
    spec = {"name": "small_cnn", "in_channels": 1, "num_classes": 3, "width": 2, "batch_norm": True}
    save_model(tmp_path / "model.pt", build_model(spec), spec, step=0)
    rng = np.random.default_rng(0)
    arrays = {"x_train": rng.random((5, 1, 8, 8), dtype=np.float32), "y_train": rng.integers(0, 3, 5),
              "x_test": rng.random((20, 1, 8, 8), dtype=np.float32), "y_test": rng.integers(0, 3, 20)}
    save_prepared(arrays, {"source": "fixture"}, tmp_path / "probe.npz", tmp_path / "probe.json")
    return tmp_path / "model.pt", tmp_path / "probe.npz", arrays


def test_extracted_gram_is_the_ntk_of_the_checkpoint(checkpoint_and_probe, tmp_path):
    checkpoint, probe, arrays = checkpoint_and_probe
    settings = {"probe": {"dataset": "fixture", "split": "test", "n": 6, "seed": 3}}
    summary = extract_ntk(checkpoint, probe, settings, "cpu", 1, tmp_path / "ntk.npz")

    saved = np.load(tmp_path / "ntk.npz")
    index = saved["probe_index"]
    assert len(index) == 6 and np.array_equal(saved["labels"], arrays["y_test"][index])
    model = build_model({"name": "small_cnn", "in_channels": 1, "num_classes": 3, "width": 2,
                         "batch_norm": True})
    model.load_state_dict(torch.load(checkpoint)["state_dict"])
    expected = empirical_ntk(model.eval().double(), torch.as_tensor(arrays["x_test"][index]).double())
    np.testing.assert_allclose(saved["gram"], expected.numpy(), rtol=1e-10)
    layers = [k for k in saved.files if k.startswith("layer:")]
    np.testing.assert_allclose(sum(saved[k] for k in layers), saved["gram"], rtol=1e-10)
    assert set(summary["per_layer_label_cka"]) == {k.removeprefix("layer:") for k in layers}
    assert summary["shape"] == [6, 3, 6, 3] and summary["dtype"] == "float64"
    json.dumps(summary)  # the rule writes it as JSON


def test_probe_larger_than_the_split_is_refused(checkpoint_and_probe, tmp_path):
    checkpoint, probe, _ = checkpoint_and_probe
    settings = {"probe": {"dataset": "fixture", "split": "train", "n": 6}}
    with pytest.raises(ValueError, match="has 5"):
        extract_ntk(checkpoint, probe, settings, "cpu", 1, tmp_path / "ntk.npz")


@pytest.fixture
def tabular_probe(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.standard_t(3, size=(160, 4))
    y = x[:, 0] - np.abs(x[:, 1]) + 0.1 * rng.normal(size=160)
    arrays = {"x_train": x[:120], "y_train": y[:120], "x_test": x[120:], "y_test": y[120:]}
    save_prepared(arrays, {"source": "fixture"}, tmp_path / "tab.npz", tmp_path / "tab.json")
    return tmp_path / "tab.npz", arrays


@pytest.mark.parametrize("library, params", [
    ("sklearn", {"n_estimators": 15, "max_depth": 3}),
    ("xgboost", {"n_estimators": 15, "max_depth": 3, "reg_lambda": 2.0}),
])
def test_extracted_tree_kernel_reproduces_the_saved_ensemble(tabular_probe, tmp_path, library, params):
    data, arrays = tabular_probe
    spec = {"library": library, "params": params, "seed": 0}
    train_tree_ensemble(data, spec, tmp_path / "trees.joblib")
    settings = {"probe": {"dataset": "fixture", "split": "test", "n": 30, "seed": 2}}
    summary = extract_tree_kernel(tmp_path / "trees.joblib", data, settings, tmp_path / "k.npz")

    saved = np.load(tmp_path / "k.npz")
    model, _ = load_tree_ensemble(tmp_path / "trees.joblib")
    x_probe = arrays["x_test"][saved["probe_index"]]
    np.testing.assert_allclose(saved["predicted"], model.predict(x_probe))
    tolerance = 1e-10 if library == "sklearn" else 1e-5
    assert summary["telescoped_vs_predict_max_relative_error"] < tolerance
    assert saved["row_norms"].shape == (30, 15) and summary["n_train"] == 120
    # Each tree's kernel row sums to n_leaf / (n_leaf + lambda): the mean kernel's rows too.
    row_sums = saved["mean_kernel"].sum(1)
    assert np.all(row_sums <= 1 + 1e-12) and np.all(row_sums > 0)
    if library == "sklearn":
        np.testing.assert_allclose(row_sums, 1.0)
    json.dumps(summary)


def test_settings_that_break_the_tree_kernel_identity_are_refused(tabular_probe, tmp_path):
    data, _ = tabular_probe
    with pytest.raises(ValueError, match="subsample"):
        train_tree_ensemble(data, {"library": "sklearn", "params": {"subsample": 0.5}}, tmp_path / "t.joblib")
