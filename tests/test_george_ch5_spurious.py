"""Spurious correlations (George thesis §5.3.3, Figs 5.3, C.7, C.8; claims H13, H14): torchvision's
ImageNet ResNet-18 and its pretrained weights, the datasets' group counts and balanced sets, the
spurious-digits stand-ins, the α runs from one θ₀, the stopping rule, figures and claims."""

import copy
import dataclasses
import hashlib
import json
import math
import pickle

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image
from torch import nn

from configured import claim_thresholds
from linearlens.analysis.george_thesis.ch5 import (
    SPURIOUS_SUBSETS,
    check_spurious_spec,
    matched_accuracy,
    spurious_params,
    spurious_run_settings,
)
from linearlens.claims.george_thesis.ch5 import spurious_claims
from linearlens.config import load_scale
from linearlens.data import spurious
from linearlens.data.download import DatasetUnavailableError, fetch
from linearlens.data.fixtures import write_celeba_files, write_waterbirds_tar
from linearlens.data.prepare import prepare_dataset
from linearlens.data.prepared import load_prepared, save_prepared
from linearlens.data.registry import get_source, raw_paths
from linearlens.data.weights import load_except_head, read_state_dict
from linearlens.experiments.george_thesis.ch5 import (
    Examples,
    LogisticLossWithAccuracy,
    PerfectBatchStop,
    SpuriousProbe,
    initial_network,
    loss_thresholds,
    spurious_seed_runs,
    spurious_session,
    spurious_task,
)
from linearlens.figures.george_thesis import ch5 as figures
from linearlens.linearize.linearity import relu_pattern
from linearlens.manifests.george_thesis import spurious_inputs
from linearlens.manifests.jobs import ClaimsJob, FigureJob
from linearlens.models.resnet import imagenet_resnet18

# --- torchvision's ImageNet ResNet-18 ---------------------------------------------------------------


def torchvision_resnet18_keys(batch_norm=True, conv_bias=False):
    """The state-dict names of torchvision's resnet18, written from its architecture."""
    def conv(name):
        return [f"{name}.weight"] + ([f"{name}.bias"] if conv_bias else [])

    def norm(name):
        return [f"{name}.{k}" for k in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")] \
            if batch_norm else []

    keys = conv("conv1") + norm("bn1")
    for stage in range(1, 5):
        for block in range(2):
            prefix = f"layer{stage}.{block}"
            keys += conv(f"{prefix}.conv1") + norm(f"{prefix}.bn1") + conv(f"{prefix}.conv2") + norm(f"{prefix}.bn2")
            if stage > 1 and block == 0:
                keys += conv(f"{prefix}.downsample.0") + norm(f"{prefix}.downsample.1")
    return keys + ["fc.weight", "fc.bias"]


def test_imagenet_resnet18_has_torchvision_parameters_and_names():
    model = imagenet_resnet18(num_classes=1000)
    assert sum(p.numel() for p in model.parameters()) == 11_689_512  # torchvision's resnet18
    assert list(model.state_dict()) == torchvision_resnet18_keys()
    model.eval()
    assert model(torch.randn(2, 3, 32, 32)).shape == (2, 1000)
    assert model(torch.randn(1, 3, 224, 224)).shape == (1, 1000)


def test_imagenet_resnet18_without_batch_norm_has_no_buffers_and_biased_convolutions():
    model = imagenet_resnet18(num_classes=1, batch_norm=False)
    assert not list(model.buffers())
    assert not any(isinstance(m, nn.BatchNorm2d) for m in model.modules())
    assert list(model.state_dict()) == torchvision_resnet18_keys(batch_norm=False, conv_bias=True)
    assert model(torch.randn(3, 3, 32, 32)).shape == (3, 1)
    # the author's resnet18(norm_layer=Identity): torchvision's convolutions keep no bias
    assert list(imagenet_resnet18(1, batch_norm=False, conv_bias=False).state_dict()) == \
        torchvision_resnet18_keys(batch_norm=False, conv_bias=False)


def test_imagenet_resnet18_init_and_relu_calls_counted_twice_per_block():
    torch.manual_seed(0)
    model = imagenet_resnet18(num_classes=1000)
    conv = model.layer3[0].conv1.weight  # fan_out = 256·3·3: He normal with std sqrt(2 / fan_out)
    assert abs(conv.std().item() - math.sqrt(2 / (256 * 9))) < 0.002
    assert torch.equal(model.layer1[0].bn1.weight, torch.ones(64)) and torch.equal(model.bn1.bias, torch.zeros(64))
    # torchvision's BasicBlock calls its one ReLU module twice, so a hook fires twice per block: every call is counted
    per_example = 64 * 16 * 16 + sum(4 * width * side * side for width, side in ((64, 8), (128, 4), (256, 2), (512, 1)))
    assert relu_pattern(model.eval(), torch.randn(2, 3, 32, 32)).numel() == 2 * per_example


# --- pretrained weights ------------------------------------------------------------------------------


def test_weights_source_is_checksummed_and_offline_failure_says_what_to_do(tmp_path):
    source = get_source("resnet18_imagenet")
    (remote,) = source.files
    assert remote.url == "https://download.pytorch.org/models/resnet18-f37072fd.pth"
    # torchvision's file name carries the sha256's first 8 hex digits
    assert remote.checksum.startswith("sha256:f37072fd") and len(remote.checksum) == len("sha256:") + 64
    assert str(raw_paths("resnet18_imagenet")[0]) == "resources/raw/resnet18_imagenet/resnet18-f37072fd.pth"
    with pytest.raises(DatasetUnavailableError) as error:
        fetch(remote, tmp_path / remote.filename)  # sockets are blocked in tests
    for part in (remote.filename, remote.url, "To place it by hand"):
        assert part in str(error.value)
    assert not (tmp_path / remote.filename).exists()


def test_state_dict_file_read_without_torch(tmp_path):
    path = tmp_path / "tiny.pth"
    state = {"conv.weight": torch.randn(2, 3, 1, 1), "strided": torch.arange(12.0).reshape(3, 4).t(),
             "offset": torch.arange(10, dtype=torch.int64)[4:7], "count": torch.tensor(7), "half": torch.ones(2).half()}
    torch.save(state, path)  # torch's zip format, as torchvision's .pth files
    read = read_state_dict(path)
    assert list(read) == list(state)
    for name, tensor in state.items():
        assert read[name].dtype == tensor.numpy().dtype and read[name].shape == tuple(tensor.shape), name
        np.testing.assert_array_equal(read[name], tensor.numpy())
    torch.save([torch.ones(1)], tmp_path / "list.pth")
    with pytest.raises(ValueError, match="no state dict"):
        read_state_dict(tmp_path / "list.pth")
    torch.save({"model": nn.Linear(2, 1)}, tmp_path / "module.pth")  # a pickled module: code, refused
    with pytest.raises(pickle.UnpicklingError, match="no place in a state dict"):
        read_state_dict(tmp_path / "module.pth")


def test_weights_are_prepared_with_their_checksum(tmp_path, monkeypatch):
    torch.manual_seed(2)
    raw = tmp_path / "resources" / "raw" / "resnet18_imagenet"
    raw.mkdir(parents=True)
    model = imagenet_resnet18(num_classes=1000)
    torch.save(model.state_dict(), raw / "resnet18-f37072fd.pth")
    monkeypatch.chdir(tmp_path)
    source = get_source("resnet18_imagenet")
    with pytest.raises(DatasetUnavailableError, match="Checksum mismatch"):  # not torchvision's file
        prepare_dataset({"source": "resnet18_imagenet"}, source)
    digest = hashlib.sha256((raw / "resnet18-f37072fd.pth").read_bytes()).hexdigest()
    fixture = dataclasses.replace(source, files=(dataclasses.replace(source.files[0], checksum=f"sha256:{digest}"),))
    arrays, provenance = prepare_dataset({"source": "resnet18_imagenet"}, fixture)
    assert provenance["files"]["resnet18-f37072fd.pth"]["checksum"] == f"sha256:{digest}"
    imagenet_resnet18(num_classes=1000).load_state_dict({k: torch.as_tensor(v) for k, v in arrays.items()},
                                                        strict=True)
    assert all(np.array_equal(arrays[k], v.numpy()) for k, v in model.state_dict().items())


def test_pretrained_body_loads_strictly_and_the_new_head_is_fresh(tmp_path):
    torch.manual_seed(1)
    imagenet = imagenet_resnet18(num_classes=1000)
    path = tmp_path / "resnet18_imagenet.npz"  # a prepared weights dataset
    save_prepared({k: v.numpy() for k, v in imagenet.state_dict().items()}, {}, path, tmp_path / "w.json")

    settings = {"model": {"name": "imagenet_resnet18", "num_classes": 1}}
    network = initial_network(settings, seed=3, weights=path)
    fresh = initial_network(settings, seed=3)  # the same seed draws the same new last layer
    for name, tensor in network.state_dict().items():
        expected = fresh.state_dict()[name] if name.startswith("fc.") else imagenet.state_dict()[name]
        assert torch.equal(tensor, expected), name
    assert network.fc.weight.shape == (1, 512)
    with pytest.raises(ValueError, match="do not fit"):
        load_except_head(imagenet_resnet18(1, batch_norm=False), imagenet.state_dict())


# --- the datasets: group counts, which examples are "with spurious", balanced sets, photos ------------


def test_celeba_blond_male_counts_are_checked_on_read(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    names = [f"{i:06d}.jpg" for i in range(1, 13)]
    attributes = pd.DataFrame({"Blond_Hair": rng.integers(0, 2, 12), "Male": rng.integers(0, 2, 12)}, index=names)
    partition = [(0, 0, 1, 2)[i % 4] for i in range(12)]
    write_celeba_files(tmp_path, attributes, partition, [np.zeros((3, 4, 4), np.uint8)] * 12)
    monkeypatch.setattr(spurious, "CELEBA_SIZE", 12)
    chosen = {split: attributes[np.array(partition) == code] for split, code in (("train", 0), ("test", 2))}
    counts = {split: spurious.group_counts(frame.Blond_Hair.to_numpy(), frame.Male.to_numpy())
              for split, frame in chosen.items()}
    monkeypatch.setattr(spurious, "CELEBA_BLOND_MALE_COUNTS", counts)
    arrays = spurious.load_celeba(tmp_path, "Blond_Hair", "Male")
    assert spurious.group_counts(arrays["y_train"], arrays["group_train"]) == counts["train"]
    wrong = {**counts, "test": {**counts["test"], (1, 1): counts["test"][(1, 1)] + 1}}
    monkeypatch.setattr(spurious, "CELEBA_BLOND_MALE_COUNTS", wrong)
    with pytest.raises(ValueError, match="test split's .* counts differ"):
        spurious.load_celeba(tmp_path, "Blond_Hair", "Male")
    spurious.load_celeba(tmp_path, "Male", "Blond_Hair")  # other tasks than blond vs male: not checked


def test_published_celeba_counts_match_the_thesis_shares():
    train, test = spurious.CELEBA_BLOND_MALE_COUNTS["train"], spurious.CELEBA_BLOND_MALE_COUNTS["test"]
    assert train[(0, 0)] + train[(1, 0)] == 94_509 and train[(0, 1)] + train[(1, 1)] == 68_261
    assert round(train[(1, 0)] / 94_509, 2) == 0.24 and round(train[(1, 1)] / 68_261, 2) == 0.02
    assert test[(1, 1)] == 180 and sum(test.values()) == 19_962 and sum(train.values()) == 162_770


def test_with_spurious_rules():
    y, group = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    assert spurious.with_spurious(y, group, "agreement").tolist() == [True, False, False, True]
    assert spurious.with_spurious(y, group, "attribute", 0).tolist() == [True, False, True, False]  # women
    with pytest.raises(ValueError):
        spurious.with_spurious(y, group, "attribute")


def test_balanced_cells_take_the_first_of_each_cell_and_cap_small_ones():
    y = np.array([0, 1, 0, 1, 0, 1, 1, 0, 0])
    group = np.array([0, 1, 1, 1, 0, 1, 0, 0, 1])
    index, counts = spurious.balanced_cells(y, group, 2)
    assert counts == {(0, 0): 2, (0, 1): 2, (1, 0): 1, (1, 1): 2}
    assert index.tolist() == [0, 4, 2, 8, 6, 1, 3]


def test_photo_pipelines_crop_and_resize_as_torchvision():
    image = np.arange(3 * 218 * 178, dtype=np.uint64).reshape(3, 218, 178).astype(np.uint8)  # CelebA's 178x218
    cropped = spurious.photo_pipeline([{"center_crop": 178}])(image)
    assert cropped.shape == (3, 178, 178)
    np.testing.assert_array_equal(cropped, image[:, 20:198, :])  # round((218 - 178) / 2) = 20
    assert spurious.photo_pipeline([{"center_crop": 178}, {"resize": 224}])(image).shape == (3, 224, 224)
    bird = np.zeros((3, 300, 500), np.uint8)
    assert spurious.photo_pipeline([{"resize": [256, 256]}, {"center_crop": 224}])(bird).shape == (3, 224, 224)
    shorter = spurious.resize(Image.fromarray(bird.transpose(1, 2, 0)), 256)
    assert shorter.size == (426, 256)  # width int(256 · 500 / 300): torchvision's rule
    with pytest.raises(ValueError):
        spurious.photo_pipeline([{"rotate": 3}])


# --- the quick stand-ins -------------------------------------------------------------------------


def test_spurious_digits_proportions_and_balanced_test_split():
    arrays = spurious.spurious_digits()  # the patch on 90% of y = 1, 10% of y = 0
    train = spurious.group_counts(arrays["y_train"], arrays["group_train"])
    for label, majority in ((0, 0), (1, 1)):
        in_class = train[(label, 0)] + train[(label, 1)]
        assert abs(train[(label, majority)] / in_class - 0.9) < 0.01
    test = spurious.group_counts(arrays["y_test"], arrays["group_test"])
    assert len(set(test.values())) == 1 and test[(0, 0)] > 50
    np.testing.assert_array_equal(arrays["y_train"], (arrays["digit_train"] >= 5).astype(int))
    patch = arrays["x_train"][:, 0, :2, :2]
    assert (patch[arrays["group_train"] == 1] == 1.0).all()
    assert arrays["x_train"].min() >= 0 and arrays["x_train"].max() <= 1


def test_spurious_digits_waterbirds_proportions_and_stripes():
    cells = [[3498, 184], [56, 1057]]
    arrays = spurious.spurious_digits(feature="stripes", train_cells=cells, level=0.3)
    train = spurious.group_counts(arrays["y_train"], arrays["group_train"])
    scale = train[(0, 0)] / 3498
    for (label, group), count in train.items():
        assert abs(count - scale * cells[label][group]) <= 1
    x, group = arrays["x_train"][:, 0], arrays["group_train"]
    # background pixels (no stroke) show horizontal stripes for group 1, vertical for group 0
    assert (x[group == 1][:, 0, :] >= 0.3).all() and (x[group == 0][:, :, 0] >= 0.3).all()


def test_spurious_digits_are_seeded():
    a, b = spurious.spurious_digits(seed=3), spurious.spurious_digits(seed=3)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["y_train"], spurious.spurious_digits(seed=4)["y_train"])


# --- the runs -------------------------------------------------------------------------------------


SETTINGS = {"batch_size": 50, "log_every": 3, "loss_floor": 0.01, "patience": 12, "max_epochs": 2,
            "keep_initial_output": False, "linearity_every": 2, "dataset": "toy",
            "model": {"name": "mlp", "in_features": 64, "hidden": [16], "out_features": 1},
            "optimiser": {"name": "sgd", "lr": 0.05, "momentum": 0.9}, "n_train": 200, "balanced_per_cell": 10,
            "with_spurious": "agreement", "frozen_batch_norm": False, "pretrained": None, "preprocessing": None}


@pytest.fixture(scope="module")
def toy_task(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "toy.npz"
    save_prepared(spurious.spurious_digits(level=0.5), {"source": "spurious_digits"}, path, path.with_suffix(".json"))
    return spurious_task(path, SETTINGS, "cpu")


def test_task_sets_and_counts(toy_task):
    assert len(toy_task.train.y) == 200
    assert toy_task.counts["balanced_test"] == {"y0_g0": 10, "y0_g1": 10, "y1_g0": 10, "y1_g1": 10}
    for examples in toy_task.balanced.values():
        masks = examples.subset_masks()
        assert set(masks) == set(SPURIOUS_SUBSETS)
        assert torch.equal(masks["with"], examples.y == examples.group)


def test_every_alpha_starts_from_the_same_theta0_and_batches(toy_task):
    initial = initial_network(SETTINGS, seed=5)
    sessions = [spurious_session(toy_task, SETTINGS, copy.deepcopy(initial), alpha, 5)[0] for alpha in (0.5, 100.0)]
    for a, b in zip(*(s.learner.model.initial.parameters() for s in sessions)):
        assert torch.equal(a, b)
    rebuilt = initial_network(SETTINGS, seed=5)  # θ₀ is the seed's alone
    assert all(torch.equal(a, b) for a, b in zip(initial.parameters(), rebuilt.parameters()))
    for step in range(1, 10):
        assert torch.equal(sessions[0].batches(step), sessions[1].batches(step))
    assert sessions[0].learner.optimizer.param_groups[0]["lr"] == pytest.approx(0.05 / 0.25)
    assert sessions[1].learner.optimizer.param_groups[0]["lr"] == pytest.approx(0.05 / 1e4)


def test_stop_after_twelve_consecutive_perfect_batches_or_nan():
    loss = LogisticLossWithAccuracy()
    stop = PerfectBatchStop(loss, patience=12)

    def batch(accuracy, value=0.1):
        loss.batch_accuracy, loss.batch_loss = accuracy, value
        return stop(None)

    assert not any(batch(1.0) for _ in range(11))
    assert not batch(0.99)  # an imperfect batch starts the count again
    assert not any(batch(1.0) for _ in range(11)) and batch(1.0)
    assert stop.reason == "12 consecutive perfect mini-batches"
    stop.streak = 0
    assert not any(batch(0.5, float("nan")) for _ in range(11)) and batch(0.5, float("nan"))
    assert stop.reason == "nan loss"


def test_minibatch_accuracy_is_of_the_logit_sign():
    loss = LogisticLossWithAccuracy()
    value = loss(torch.tensor([[2.0], [-1.0], [0.5], [-3.0]]), torch.tensor([1, 0, 0, 0]))
    assert loss.batch_accuracy == 0.75
    assert value.item() == pytest.approx(nn.functional.binary_cross_entropy_with_logits(
        torch.tensor([2.0, -1.0, 0.5, -3.0]), torch.tensor([1.0, 0.0, 0.0, 0.0])).item())


def test_probe_scores_each_subset():
    x = torch.tensor([[1.0], [-1.0], [1.0], [-1.0], [1.0], [-1.0]])
    y = torch.tensor([1, 0, 0, 1, 1, 0])
    group = torch.tensor([1, 0, 1, 0, 0, 1])
    examples = Examples(x, y, group, y == group)
    row = SpuriousProbe(nn.Identity(), {"balanced_test": examples}, lambda t: t)(None)  # the logit is x
    assert row["balanced_test_accuracy"] == pytest.approx(4 / 6)
    assert row["balanced_test_with_accuracy"] == 1.0 and row["balanced_test_without_accuracy"] == 0.5
    assert row["balanced_test_y1_g1_accuracy"] == 1.0 and row["balanced_test_y0_g1_accuracy"] == 0.5
    assert row["balanced_test_with_loss"] == pytest.approx(math.log1p(math.exp(-1)))


def test_loss_thresholds_follow_the_author_code():
    thresholds = loss_thresholds(0.1)
    assert thresholds[0] == pytest.approx(math.log(2) * 0.96)
    assert thresholds[-1] >= 0.1 > thresholds[-1] * 0.96
    assert np.allclose(np.diff(np.log(thresholds)), math.log(0.96))


def test_seed_runs_log_every_subset_and_resume_finished_alphas(toy_task, tmp_path):
    results = spurious_seed_runs(toy_task, SETTINGS, [1.0, 100.0], 0, "cpu", state_dir=tmp_path)
    for alpha, (rows, summary) in results.items():
        assert rows.step.iloc[0] == 0 and summary["steps"] == rows.step.iloc[-1] <= 8
        assert {"balanced_train_without_accuracy", "balanced_test_y1_g0_loss", "sign_similarity"} <= set(rows)
        assert rows.sign_similarity.dropna().iloc[0] == 1.0
        assert rows.balanced_test_accuracy.iloc[0] == 0.5  # the zero function predicts class 0
        assert (tmp_path / f"alpha{alpha:g}_finished.pt").exists()
    again = spurious_seed_runs(toy_task, SETTINGS, [1.0, 100.0], 0, "cpu", state_dir=tmp_path)
    pd.testing.assert_frame_equal(again[100.0][0], results[100.0][0])


def test_photo_task_trains_a_pretrained_network_with_frozen_batch_norm(tmp_path, monkeypatch):
    """The Waterbirds path end to end on a fixture in the real formats: an index over a tarball of
    JPEGs, photos decoded once through the crops and kept as uint8, ImageNet normalisation per batch,
    a prepared ResNet-18 body with a fresh head, BatchNorm statistics frozen."""
    rng = np.random.default_rng(0)
    rows = [(y, 0, place) for y, place in [(0, 0)] * 6 + [(0, 1)] * 2 + [(1, 0)] * 2 + [(1, 1)] * 6]
    rows += [(y, 2, place) for y in (0, 1) for place in (0, 1)]
    names = [f"{'200.Mallard' if y else '001.Sparrow'}/bird_{i}.jpg" for i, (y, _, _) in enumerate(rows)]
    metadata = pd.DataFrame({"img_id": range(len(rows)), "img_filename": names, "y": [r[0] for r in rows],
                             "split": [r[1] for r in rows], "place": [r[2] for r in rows],
                             "place_filename": ["x"] * len(rows)})
    images = {name: rng.integers(0, 256, (3, 30, 40), dtype=np.uint8) for name in names}
    archive = write_waterbirds_tar(tmp_path / spurious.WATERBIRDS_ARCHIVE, metadata, images)
    monkeypatch.setattr(spurious, "WATERBIRDS_TRAIN_GROUPS", {(0, 0): 6, (0, 1): 2, (1, 0): 2, (1, 1): 6})
    index = tmp_path / "waterbirds.npz"
    save_prepared(spurious.load_waterbirds(tmp_path), {}, index, tmp_path / "waterbirds.json")
    torch.manual_seed(0)
    weights = tmp_path / "weights.npz"
    save_prepared({k: v.numpy() for k, v in imagenet_resnet18(1000).state_dict().items()}, {}, weights,
                  tmp_path / "weights.json")
    settings = {**SETTINGS, "batch_size": 8, "n_train": None, "balanced_per_cell": 3, "linearity_every": None,
                "model": {"name": "imagenet_resnet18", "num_classes": 1}, "frozen_batch_norm": True,
                "preprocessing": [{"resize": [36, 36]}, {"center_crop": 32}], "max_epochs": 1}
    task = spurious_task(index, settings, "cpu", archive)
    assert task.train.x.dtype == torch.uint8 and task.train.x.shape == (16, 3, 32, 32)
    assert task.counts["balanced_train"] == {"y0_g0": 3, "y0_g1": 2, "y1_g0": 2, "y1_g1": 3}  # capped cells
    assert task.counts["balanced_test"] == {"y0_g0": 1, "y0_g1": 1, "y1_g0": 1, "y1_g1": 1}
    normalised = task.inputs(task.train.x[:1])
    assert normalised.dtype == torch.float32 and normalised.min() < 0
    session, _ = spurious_session(task, settings, initial_network(settings, 0, weights), 1.0, 0)
    record = session.run()
    assert record.steps == 2 and record.frame().balanced_test_accuracy.notna().all()
    trained, stored = session.learner.model.network, load_prepared(weights)
    assert np.array_equal(trained.layer3[1].bn2.running_var.numpy(), stored["layer3.1.bn2.running_var"])
    assert not np.array_equal(trained.layer3[1].bn2.weight.detach().numpy(), stored["layer3.1.bn2.weight"])


# --- figures and claims ---------------------------------------------------------------------------


def test_matched_accuracy_interpolates_at_the_first_crossing():
    run = pd.DataFrame({"step": [0, 1, 2, 3], "x": [0.5, 0.7, 0.6, 0.9], "y": [0.5, 0.3, 0.9, 0.1]})
    np.testing.assert_allclose(matched_accuracy(run, "x", "y", [0.5, 0.6, 0.8, 0.95]), [0.5, 0.4, 0.5, np.nan])


SPEC = {"seeds": [0, 1], "figure_seed": 0, "alphas": [1, 100],
        "families": {family: {"label": f"{family} stand-in", "dataset": f"{family}_data", "with_spurious": "agreement",
                              "model": {"name": "mlp", "in_features": 4, "hidden": [8], "out_features": 1}}
                     for family in ("celeba", "waterbirds")}}


def fake_run(linear: bool, steps=200) -> pd.DataFrame:
    """A run whose w/o-spurious accuracy lags the with-spurious one, less so when ``linear``."""
    t = np.arange(0, steps + 1, 5) / steps
    with_acc = 0.5 + 0.5 * np.minimum(1, 3 * t)
    without = 0.5 + 0.5 * np.clip(2 * t - 0.2, 0, 1) ** (0.5 if linear else 2)
    frame = pd.DataFrame({"step": t * steps})
    for subset in ("balanced_train", "balanced_test"):
        frame[f"{subset}_with_accuracy"], frame[f"{subset}_without_accuracy"] = with_acc, without
        frame[f"{subset}_accuracy"] = (with_acc + without) / 2
    return frame


def write_fake_runs(tmp_path, linear_alpha: float):
    inputs = {"runs": [], "summaries": [], "provenance": [], "data": []}
    params = spurious_params(SPEC, "claims")
    for run in params["runs"]:
        stem = tmp_path / f"{run['family']}_{run['seed']}_{run['alpha']}"
        fake_run(float(run["alpha"]) == linear_alpha).to_csv(f"{stem}.csv", index=False)
        summary_path = f"{stem}.json"
        with open(summary_path, "w") as handle:
            json.dump({"ended": "stopped", "stop_reason": "12 consecutive perfect mini-batches", "steps": 200,
                       "epochs": 10.0, "balanced_train": {"y0_g0": 5}, "balanced_train_trained_on": 5}, handle)
        inputs["runs"].append(f"{stem}.csv")
        inputs["summaries"].append(summary_path)
    for family in ("celeba", "waterbirds"):
        provenance = tmp_path / f"{family}.json"
        provenance.write_text(json.dumps({"source": "spurious_digits"}))
        inputs["provenance"].append(str(provenance))
        inputs["data"].append(str(tmp_path / f"{family}.npz"))
    return inputs, params


@pytest.mark.parametrize("linear_alpha, expected", [(100.0, True), (1.0, False)])
def test_h13_claims_follow_the_runs(tmp_path, linear_alpha, expected):
    inputs, params = write_fake_runs(tmp_path, linear_alpha)
    checks = spurious_claims(ClaimsJob(inputs, {"thresholds": claim_thresholds("george_thesis", "quick", "spurious"), **params}))
    matched = [c for c in checks if "equal with-spurious accuracy" in c.statement]
    assert len(matched) == 2 * 2 * 2 and all(c.passed is expected for c in matched)
    early = [c for c in checks if "first phase" in c.statement]
    assert all(c.passed is expected for c in early)
    assert {c.figure for c in checks} == {"fig_5_3", "fig_C_7", "fig_C_8"}
    converge = [c for c in checks if "converge" in c.statement]
    assert all(c.passed for c in converge)  # both fake runs end at the same accuracy


def test_figures_are_drawn_from_their_jobs(tmp_path):
    inputs, _ = write_fake_runs(tmp_path, 100.0)
    everything = {run_key(r): (c, s) for r, c, s in zip(spurious_params(SPEC, "claims")["runs"], inputs["runs"],
                                                          inputs["summaries"])}
    for figure in ("fig_5_3", "fig_C_7", "fig_C_8"):
        params = spurious_params(SPEC, figure)
        chosen = [everything[run_key(r)] for r in params["runs"]]
        assert len(spurious_inputs(SPEC, figure)["runs"]) == len(chosen)
        job = FigureJob(figure, {"runs": [c for c, _ in chosen], "summaries": [s for _, s in chosen]}, params,
                        str(tmp_path / f"{figure}.png"), "Caption.", "synthetic, a stand-in")
        getattr(figures, f"plot_{figure}")(job)
        sidecar = json.loads((tmp_path / f"{figure}.json").read_text())
        assert sidecar["data_source"].startswith("synthetic, a stand-in; network: ")
        assert "MLP 4-8-1 (stand-in for" in sidecar["data_source"] and "12 consecutive" in sidecar["caption"]


def run_key(run):
    return run["family"], run["alpha"], run["seed"]


def test_run_settings_leave_names_out_and_paths_are_per_seed():
    spec = {**SPEC, **{key: 1 for key in ("batch_size", "log_every", "loss_floor", "patience", "max_epochs",
                                          "keep_initial_output", "linearity_every")}}
    settings = spurious_run_settings(spec, "celeba")
    assert "label" not in settings and settings["dataset"] == "celeba_data"
    inputs = spurious_inputs(SPEC, "fig_5_3")
    assert inputs["runs"][0] == "results/george_thesis/runs/ch5/spurious/celeba/seed0/alpha1.csv"
    assert "data" not in inputs and spurious_inputs(SPEC, "claims")["data"] == [
        "results/data/celeba_data.npz", "results/data/waterbirds_data.npz"]


@pytest.mark.parametrize("name", ["quick", "smoke", "paper"])
def test_configs_name_their_datasets_and_weights(name):
    config = load_scale(name)
    spec = config["george_thesis"]["ch5"]["spurious"]
    check_spurious_spec(spec)
    for family in spec["families"].values():
        source = config["datasets"][family["dataset"]]["source"]
        assert (source in spurious.IMAGE_ARCHIVES) == (family["preprocessing"] is not None)
        if family["pretrained"]:
            assert config["datasets"][family["pretrained"]]["source"] == "resnet18_imagenet"
            assert family["frozen_batch_norm"]  # pretrained BatchNorm running statistics stay frozen (eval mode) while γ, β train
    with pytest.raises(ValueError, match="figure_seed"):
        check_spurious_spec({**spec, "figure_seed": max(spec["seeds"]) + 1})
