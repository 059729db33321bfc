"""Kernel extraction from a checkpoint and a prepared probe set."""

import json

import numpy as np
import pytest
import torch

from linearlens.data import save_prepared
from linearlens.kernels import empirical_ntk
from linearlens.kernels.extraction import extract_ntk
from linearlens.models import build_model, save_model


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
