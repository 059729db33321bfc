"""Each dataset loader read from tiny files in its real format, written by the library's fixture
writers (linearlens.data.fixtures). Sockets are blocked for the whole suite, so every pass is offline."""

import dataclasses
import gzip
import logging
import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import openml  # imported here, not under the socket block: urllib3 probes IPv6 on import
import pandas as pd
import pooch
import pytest
import scipy.io

from linearlens.data import spurious
from linearlens.data.cifar import read_cifar10_archive
from linearlens.data.cscores import read_cscores
from linearlens.data.damaged import DamagedFileError
from linearlens.data.download import DatasetUnavailableError
from linearlens.data.fixtures import (
    idx_bytes,
    write_celeba_files,
    write_cifar10_archive,
    write_cscores,
    write_idx,
    write_openml_cache,
    write_svhn_mat,
    write_tinyimagenet_zip,
    write_waterbirds_tar,
)
from linearlens.data.idx import read_idx
from linearlens.data.openml_source import load_openml
from linearlens.data.prepare import prepare_dataset
from linearlens.data.prepared import load_prepared, save_prepared
from linearlens.data.registry import IDX_FILES, RAW_DIR, SOURCES
from linearlens.data.source import Source
from linearlens.data.svhn import read_svhn_mat
from linearlens.data.tinyimagenet import read_tinyimagenet_zip
from linearlens.workflow import logged_job


def random_images(rng, n, channels, size):
    return rng.integers(0, 256, size=(n, channels, size, size), dtype=np.uint8)


# --- IDX --------------------------------------------------------------------------------------

@pytest.mark.parametrize("gz", [True, False])
@pytest.mark.parametrize("shape, dtype", [
    ((5, 28, 28), np.uint8),  # images
    ((5,), np.uint8),  # labels
    ((2, 3), np.int32),  # a multi-byte type: stored big-endian, read back native
])
def test_idx_round_trip(tmp_path, gz, shape, dtype):
    array = np.random.default_rng(0).integers(0, 250, size=shape).astype(dtype)
    path = write_idx(tmp_path / ("data.idx.gz" if gz else "data.idx"), array, gz=gz)
    read = read_idx(path)
    assert read.shape == shape and read.dtype == dtype
    np.testing.assert_array_equal(read, array)


# Three 28x28 uint8 images: a 16-byte header and 2,352 bytes of data.
IDX_ZEROS = idx_bytes(np.zeros((3, 28, 28), dtype=np.uint8))


def _flip_middle(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes(b ^ 0xFF for b in data[middle:middle + 16]) + data[middle + 16:]


@pytest.mark.parametrize("stored, problem", [
    (lambda raw: raw, "not a gzip file"),  # named .gz but never compressed
    (lambda raw: gzip.compress(raw)[:-12], "gzip stream cut off"),
    (lambda raw: gzip.compress(raw)[:-4], "gzip stream cut off"),  # inside the trailer
    (lambda raw: _flip_middle(gzip.compress(np.arange(4000).tobytes())), "corrupt gzip stream"),
    (lambda raw: gzip.compress(b"\x01" + raw[1:]), "bad magic number"),
    (lambda raw: gzip.compress(raw[:2]), "bad magic number"),
    (lambda raw: gzip.compress(raw[:2] + b"\x07" + raw[3:]), "unknown IDX element type"),
    (lambda raw: gzip.compress(raw[:9]), "header of 3 dimensions cut short"),
    (lambda raw: gzip.compress(raw[:-1]), "header says 2352 bytes of data but the file has 2351: cut off"),
    (lambda raw: gzip.compress(raw + b"\x00"),
     "header says 2352 bytes of data but the file has 2353: longer than its header says"),
], ids=["not-gzip", "gzip-cut", "gzip-trailer-cut", "gzip-corrupt", "magic", "two-bytes", "type",
        "header-cut", "data-short", "data-long"])
def test_idx_malformed_file_named_in_one_line(tmp_path, stored, problem):
    path = tmp_path / "train-images-idx3-ubyte.gz"
    path.write_bytes(stored(IDX_ZEROS))
    with pytest.raises(DamagedFileError, match=problem) as error:
        read_idx(path)
    message = str(error.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert f"delete it and download it again with `snakemake --cores 1 {path}`" in message


def test_idx_file_gzipped_under_a_plain_name_is_said_to_be_gzipped(tmp_path):
    path = tmp_path / "train-images-idx3-ubyte"
    path.write_bytes(gzip.compress(IDX_ZEROS))
    with pytest.raises(DamagedFileError, match="bad magic number.*gzip"):
        read_idx(path)


# --- MNIST through prepare_dataset ------------------------------------------------------------

MNIST_SPEC = {"source": "mnist", "classes": [3, 5], "downsample": [8, 8], "n_train": 4,
              "n_test": 2, "papers": ["telescoping"]}


def flat_digit_images(labels):
    """One flat image per label, its grey level 10 * index + label, so pixels name their source."""
    levels = 10 * np.arange(len(labels)) + labels
    return np.broadcast_to(levels[:, None, None], (len(labels), 28, 28)).astype(np.uint8)


def write_mnist_raw(raw_dir):
    """The four gzipped IDX files, with three examples each of 3 and 5 among other digits."""
    raw_dir.mkdir(parents=True)
    y_train = np.array([3, 5, 1, 3, 5, 3, 5, 7, 0], dtype=np.uint8)
    y_test = np.array([5, 3, 2, 3, 5], dtype=np.uint8)
    arrays = (flat_digit_images(y_train), y_train, flat_digit_images(y_test), y_test)
    for name, array in zip(IDX_FILES, arrays):
        write_idx(raw_dir / name, array)
    return arrays


def md5_of(path):
    return f"md5:{pooch.file_hash(str(path), alg='md5')}"


@pytest.fixture
def mnist_raw(tmp_path, monkeypatch):
    """Fixture MNIST files under ./resources/raw/mnist, RAW_DIR being relative to the cwd."""
    monkeypatch.chdir(tmp_path)
    return write_mnist_raw(RAW_DIR / "mnist")


def test_mnist_prepared_from_idx_files(mnist_raw, monkeypatch):
    raw_dir = RAW_DIR / "mnist"
    # Published checksums cannot match fixture files; verify against the fixture's own md5s.
    files = tuple(dataclasses.replace(remote, checksum=md5_of(raw_dir / remote.filename))
                  for remote in SOURCES["mnist"].files)
    arrays, provenance = prepare_dataset(MNIST_SPEC, dataclasses.replace(SOURCES["mnist"], files=files))

    x_train_raw, y_train_raw, x_test_raw, y_test_raw = mnist_raw
    for split, n, x_raw, y_raw in [("train", 4, x_train_raw, y_train_raw),
                                   ("test", 2, x_test_raw, y_test_raw)]:
        x, y, index = arrays[f"x_{split}"], arrays[f"y_{split}"], arrays[f"{split}_index"]
        assert x.shape == (n, 1, 8, 8) and x.dtype == np.float32
        assert x.min() >= 0 and x.max() <= 1
        assert sorted(y.tolist()) == [0] * (n // 2) + [1] * (n // 2)  # balanced, 3 -> 0, 5 -> 1
        np.testing.assert_array_equal(y, (y_raw[index] == 5).astype(int))
        # Flat images stay flat under area averaging: each pixel is its source's grey level.
        np.testing.assert_allclose(x, np.broadcast_to(
            x_raw[index, None, :8, :8] / 255.0, x.shape), rtol=1e-6)
    for remote in files:
        assert provenance["files"][remote.filename] == {"url": remote.url, "checksum": remote.checksum}


def test_every_source_travels_to_its_job_as_a_record():
    """A preparation job gets its source as plain data (its params) and rebuilds it exactly."""
    for source in SOURCES.values():
        assert Source.from_record(source.record()) == source
        assert source.reader or source.openml_id is not None, source.name


def test_mnist_checksum_mismatch_names_file_url_and_checksum(mnist_raw):
    # The real registry's checksums against the fixture files: the first file checked fails.
    first = SOURCES["mnist"].files_needed()[0]
    with pytest.raises(DatasetUnavailableError, match="Checksum mismatch") as error:
        prepare_dataset(MNIST_SPEC, SOURCES["mnist"])
    message = str(error.value)
    for part in (first.filename, first.url, first.checksum):
        assert part in message


# --- prepared datasets (results/data/*.npz) ----------------------------------------------------

PREPARED = Path("results/data/mnist_3v5.npz")


@pytest.fixture
def prepared_npz(tmp_path, monkeypatch):
    """A prepared dataset where the workflow writes one, the cwd being the workflow's directory."""
    monkeypatch.chdir(tmp_path)
    PREPARED.parent.mkdir(parents=True)
    arrays = {"x_train": np.random.default_rng(0).uniform(size=(40, 1, 8, 8)), "y_train": np.arange(40) % 2}
    save_prepared(arrays, {}, PREPARED, PREPARED.with_suffix(".json"))
    return arrays


def test_prepared_round_trip(prepared_npz):
    loaded = load_prepared(PREPARED)
    for key, array in prepared_npz.items():
        np.testing.assert_array_equal(loaded[key], array)


@pytest.mark.parametrize("damage", [
    lambda data: data[: len(data) // 2],  # cut off
    lambda data: data[:-10],  # cut off inside the zip's central directory
    _flip_middle,  # corrupted in place
    lambda data: b"this is not an npz archive\n" * 20,
    lambda data: b"",
], ids=["half", "end", "flipped", "garbage", "empty"])
def test_damaged_prepared_dataset_names_file_and_rebuild_command(prepared_npz, damage):
    PREPARED.write_bytes(damage(PREPARED.read_bytes()))
    with pytest.raises(DamagedFileError) as error:
        load_prepared(PREPARED)
    message = str(error.value)
    assert message.startswith(f"{PREPARED} is damaged (") and "\n" not in message
    assert message.endswith(f"delete it and rebuild it with `snakemake --cores 1 {PREPARED}`")


def test_missing_prepared_dataset_is_not_called_damaged(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_prepared(tmp_path / "absent.npz")


def test_a_damaged_file_fails_its_job_with_one_line_and_no_traceback(tmp_path):
    log = tmp_path / "job.log"
    root_handlers = logging.getLogger().handlers[:]
    try:
        with pytest.raises(SystemExit):
            with logged_job(SimpleNamespace(log=[str(log)], rule="prepare_dataset")):
                raise DamagedFileError("results/data/x.npz is damaged (cut off): delete it and rebuild it")
    finally:
        for handler in logging.getLogger().handlers:
            handler.close()
        logging.getLogger().handlers[:] = root_handlers
    lines = log.read_text().splitlines()
    assert len(lines) == 1 and lines[0].endswith("ERROR results/data/x.npz is damaged (cut off): delete it and rebuild it")


# --- CIFAR-10 ---------------------------------------------------------------------------------

def test_cifar10_archive_round_trip(tmp_path):
    rng = np.random.default_rng(1)
    x_train, x_test = random_images(rng, 12, 3, 32), random_images(rng, 3, 3, 32)
    y_train, y_test = rng.integers(0, 10, 12), rng.integers(0, 10, 3)
    x_train[0] = 0
    x_train[0, 0] = 255  # a pure red image: channel 0 must be the red plane
    path = write_cifar10_archive(tmp_path / "cifar-10-python.tar.gz", x_train, y_train, x_test, y_test)

    arrays = read_cifar10_archive(path)

    assert arrays["x_train"].shape == (12, 3, 32, 32) and arrays["x_test"].shape == (3, 3, 32, 32)
    assert arrays["x_train"].dtype == np.uint8
    np.testing.assert_array_equal(arrays["x_train"], x_train)  # batches 1..5 in order
    np.testing.assert_array_equal(arrays["x_test"], x_test)
    np.testing.assert_array_equal(arrays["y_train"], y_train)
    np.testing.assert_array_equal(arrays["y_test"], y_test)
    assert arrays["x_train"][0, 0].min() == 255 and arrays["x_train"][0, 1:].max() == 0


# --- SVHN -------------------------------------------------------------------------------------

def test_svhn_mat_round_trip_maps_label_10_to_0(tmp_path):
    rng = np.random.default_rng(2)
    x = random_images(rng, 6, 3, 32)
    digits = np.array([0, 1, 9, 0, 5, 3])
    path = write_svhn_mat(tmp_path / "train_32x32.mat", x, digits)
    stored = scipy.io.loadmat(str(path))
    assert stored["X"].shape == (32, 32, 3, 6) and stored["y"].shape == (6, 1)
    assert stored["y"].ravel().tolist() == [10, 1, 9, 10, 5, 3]  # the file's convention

    images, labels = read_svhn_mat(path)

    assert images.shape == (6, 3, 32, 32) and images.dtype == np.uint8
    np.testing.assert_array_equal(images, x)
    np.testing.assert_array_equal(labels, digits)


# --- C-scores ---------------------------------------------------------------------------------

def cscores_arrays(n=50_000):
    rng = np.random.default_rng(3)
    return rng.uniform(0, 1, n), rng.integers(0, 10, n)


def test_cscores_read_back(tmp_path):
    scores, labels = cscores_arrays()
    path = write_cscores(tmp_path / "cifar10-cscores-orig-order.npz", scores, labels)
    read_scores, read_labels = read_cscores(path)
    np.testing.assert_array_equal(read_scores, scores)
    np.testing.assert_array_equal(read_labels, labels)


@pytest.mark.parametrize("alter, problem", [
    (lambda s, y: (s[:10], y[:10]), "expected 50000 scores and labels"),
    (lambda s, y: (s + 0.5, y), r"scores outside \[0, 1\]"),
    (lambda s, y: (s, y + 1), "labels outside 0..9"),
])
def test_cscores_rejects_wrong_contents(tmp_path, alter, problem):
    path = write_cscores(tmp_path / "cscores.npz", *alter(*cscores_arrays()))
    with pytest.raises(ValueError, match=problem):
        read_cscores(path)


def test_cscores_rejects_missing_array(tmp_path):
    path = tmp_path / "cscores.npz"
    np.savez(path, scores=np.zeros(50_000))
    with pytest.raises(ValueError, match=r"lacks arrays \['labels'\]"):
        read_cscores(path)


# --- Tiny ImageNet ----------------------------------------------------------------------------

def flat_colour(rgb):
    return np.broadcast_to(np.array(rgb, dtype=np.uint8)[:, None, None], (3, 64, 64)).copy()


def test_tinyimagenet_zip(tmp_path):
    # wnids.txt in unsorted order: labels must follow the sorted ids, not the file's order.
    train_colours = {
        "n09999999": [(200, 30, 40), (20, 180, 60), (90, 90, 220)],
        "n01443537": [(250, 250, 10), (10, 240, 240), (120, 10, 130)],
    }
    val_colours = [("n09999999", (60, 70, 80)), ("n01443537", (230, 120, 20))]
    train = {wnid: [flat_colour(c) for c in colours] for wnid, colours in train_colours.items()}
    train["n09999999"][2] = np.full((64, 64), 90, dtype=np.uint8)  # grayscale, as some real ones
    path = write_tinyimagenet_zip(tmp_path / "tiny-imagenet-200.zip", train,
                                  [(wnid, flat_colour(c)) for wnid, c in val_colours])

    arrays = read_tinyimagenet_zip(path)

    assert arrays["x_train"].shape == (6, 3, 64, 64) and arrays["x_test"].shape == (2, 3, 64, 64)
    assert arrays["x_train"].dtype == np.uint8
    assert arrays["y_train"].tolist() == [0, 0, 0, 1, 1, 1]  # n01443537 is 0, n09999999 is 1
    assert arrays["y_test"].tolist() == [1, 0]
    expected_train = train_colours["n01443537"] + [(200, 30, 40), (20, 180, 60), (90, 90, 90)]
    for images, colours in [(arrays["x_train"], expected_train),
                            (arrays["x_test"], [c for _, c in val_colours])]:
        for image, colour in zip(images, colours):
            # JPEG is lossy, but flat colours survive to within rounding.
            np.testing.assert_allclose(image, flat_colour(colour), atol=3)


def test_tinyimagenet_image_of_another_size_names_the_member(tmp_path):
    train = {"n01443537": [flat_colour((10, 20, 30)), flat_colour((40, 50, 60))[:, :32, :32]]}
    path = write_tinyimagenet_zip(tmp_path / "tiny-imagenet-200.zip", train,
                                  [("n01443537", flat_colour((1, 2, 3)))])
    with pytest.raises(ValueError, match="n01443537_1.JPEG is 3x32x32, not 3x64x64"):
        read_tinyimagenet_zip(path)


# --- OpenML -----------------------------------------------------------------------------------

FIXTURE_OPENML_ID = 990001


@pytest.fixture
def offline_openml(monkeypatch):
    """Restore openml's global settings after the test, and make any request a loud failure."""
    for setting in ("_root_cache_directory", "connection_n_retries", "retry_policy"):
        monkeypatch.setattr(openml.config, setting, getattr(openml.config, setting))

    def no_network(*args, **kwargs):
        raise AssertionError(f"openml tried the network: {kwargs.get('url', args)}")

    monkeypatch.setattr(openml._api_calls, "_send_request", no_network)
    monkeypatch.setattr(openml._api_calls, "_download_minio_file", no_network)


def regression_frame(n=20):
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(rng.normal(size=(n, 3)), columns=["area", "rooms", "age"])
    frame["price"] = frame @ np.array([2.0, -1.0, 0.5]) + rng.normal(scale=0.1, size=n)
    return frame


def test_openml_dataset_read_from_cache_offline(tmp_path, offline_openml):
    frame = regression_frame()
    directory = write_openml_cache(tmp_path, FIXTURE_OPENML_ID, frame, "price")

    arrays, provenance = load_openml(FIXTURE_OPENML_ID, tmp_path)

    assert arrays["x"].shape == (20, 3) and arrays["x"].dtype == np.float64
    np.testing.assert_array_equal(arrays["x"], frame[["area", "rooms", "age"]].to_numpy())
    np.testing.assert_array_equal(arrays["y"], frame["price"].to_numpy())
    assert provenance["feature_names"] == ["area", "rooms", "age"]
    assert provenance["target"] == "price" and provenance["openml_id"] == FIXTURE_OPENML_ID
    assert provenance["md5"] == md5_of(directory / "dataset.arff").split(":", 1)[1]


REGRESSION_EXPECTED = {"task": "regression", "rows": 20, "features": 3, "target": "price"}


def test_openml_dataset_of_the_expected_task_size_and_target_is_accepted(tmp_path, offline_openml):
    write_openml_cache(tmp_path, FIXTURE_OPENML_ID, regression_frame(), "price")
    arrays, _ = load_openml(FIXTURE_OPENML_ID, tmp_path, REGRESSION_EXPECTED)
    assert arrays["x"].shape == (20, 3)


def test_openml_classification_copy_is_refused_in_one_line(tmp_path, offline_openml):
    # The defect of issue 42: OpenML 44090 is GOV22's binarised *classification* california; its
    # target was read as floats and trained on as a regression.
    frame = regression_frame()
    frame["price"] = (frame["price"] > frame["price"].median()).astype(int)
    write_openml_cache(tmp_path, FIXTURE_OPENML_ID, frame.rename(columns={"price": "above_median"}),
                       "above_median", classification=True)
    with pytest.raises(DatasetUnavailableError) as error:
        load_openml(FIXTURE_OPENML_ID, tmp_path, REGRESSION_EXPECTED)
    message = str(error.value)
    assert "\n" not in message and f"OpenML {FIXTURE_OPENML_ID} " in message
    assert "task 'classification' (expected 'regression')" in message
    assert "target 'above_median' (expected 'price')" in message


def test_openml_dataset_of_another_size_is_refused(tmp_path, offline_openml):
    write_openml_cache(tmp_path, FIXTURE_OPENML_ID, regression_frame(n=25), "price")
    with pytest.raises(DatasetUnavailableError, match=r"used: rows 25 \(expected 20\); check"):
        load_openml(FIXTURE_OPENML_ID, tmp_path, REGRESSION_EXPECTED)


def test_openml_preparation_checks_the_registry_expectations(tmp_path, offline_openml, monkeypatch):
    # Every registered OpenML source carries what the document used, and preparation checks it.
    import linearlens.data.prepare as prepare
    from linearlens.data.registry import OPENML_DATASETS, get_source

    for dataset_id in OPENML_DATASETS:
        expected = get_source(f"openml_{dataset_id}").openml_expected
        assert expected["task"] == "regression" and set(expected) == {"task", "rows", "features", "target"}
    source = get_source("openml_44025")
    frame = regression_frame()
    frame["price"] = (frame["price"] > 0).astype(int)
    write_openml_cache(tmp_path, 44025, frame, "price", classification=True)
    monkeypatch.setattr(prepare, "OPENML_CACHE_DIR", tmp_path)
    with pytest.raises(DatasetUnavailableError, match="OpenML 44025 is not the dataset the document used"):
        prepare.prepare_dataset({"source": source.name, "test_fraction": 0.3}, source)


def test_openml_incomplete_cache_fails_with_placement_help(tmp_path, offline_openml):
    directory = write_openml_cache(tmp_path, FIXTURE_OPENML_ID, regression_frame(), "price")
    (directory / "dataset.arff").unlink()  # the client would have to download it
    with pytest.raises(DatasetUnavailableError, match="tried the network") as error:
        load_openml(FIXTURE_OPENML_ID, tmp_path)
    assert str(directory) in str(error.value)


def test_openml_cached_arff_with_wrong_md5_is_refused(tmp_path, offline_openml):
    # openml checks the md5 only while downloading; a hand-placed file must be checked by us.
    directory = write_openml_cache(tmp_path, FIXTURE_OPENML_ID, regression_frame(), "price")
    arff = directory / "dataset.arff"
    arff.write_text(arff.read_text() + "0.0,0.0,0.0,0.0\n")  # one row more than published
    with pytest.raises(DatasetUnavailableError, match="Checksum mismatch") as error:
        load_openml(FIXTURE_OPENML_ID, tmp_path)
    assert str(arff) in str(error.value)
    assert arff.exists()  # refused, not deleted: the user decides


def test_openml_failure_keeps_a_partly_placed_copy(tmp_path, offline_openml):
    # The client deletes a dataset's cache folder when anything fails; we put it back.
    directory = write_openml_cache(tmp_path, FIXTURE_OPENML_ID, regression_frame(), "price")
    (directory / "dataset.arff").unlink()
    with pytest.raises(DatasetUnavailableError):
        load_openml(FIXTURE_OPENML_ID, tmp_path)
    assert sorted(p.name for p in directory.iterdir()) == ["description.xml", "features.xml"]


def test_openml_settings_restored_after_load(tmp_path, offline_openml, monkeypatch):
    monkeypatch.delenv("OPENML_SKIP_PARQUET", raising=False)
    write_openml_cache(tmp_path, FIXTURE_OPENML_ID, regression_frame(), "price")
    before = (openml.config._root_cache_directory, openml.config.connection_n_retries)
    load_openml(FIXTURE_OPENML_ID, tmp_path)
    assert (openml.config._root_cache_directory, openml.config.connection_n_retries) == before
    assert "OPENML_SKIP_PARQUET" not in os.environ


def test_unknown_source_option_refused_before_openml_is_called(monkeypatch):
    import linearlens.data.openml_source as openml_source

    def must_not_run(*args, **kwargs):
        raise AssertionError("load_openml ran despite an unknown option")

    monkeypatch.setattr(openml_source, "load_openml", must_not_run)
    source = next(name for name, s in SOURCES.items() if s.openml_id is not None)
    with pytest.raises(ValueError, match="takes no options"):
        prepare_dataset({"source": source, "source_options": {"include_extra": True}}, SOURCES[source])


# --- CelebA and Waterbirds --------------------------------------------------------------------

def celeba_fixture(directory, n=12):
    """n faces with three attributes; partition codes cycle train, train, valid, test."""
    rng = np.random.default_rng(5)
    names = [f"{i:06d}.jpg" for i in range(1, n + 1)]
    attributes = pd.DataFrame(rng.integers(0, 2, size=(n, 3)), index=names,
                              columns=["Blond_Hair", "Male", "Smiling"])
    partition = [(0, 0, 1, 2)[i % 4] for i in range(n)]
    images = [flat_colour((20 * i, 100, 200)) for i in range(n)]
    write_celeba_files(directory, attributes, partition, images)
    return attributes, np.array(partition), images


def test_celeba_index_and_images(tmp_path, monkeypatch):
    monkeypatch.setattr(spurious, "CELEBA_SIZE", 12)
    attributes, partition, images = celeba_fixture(tmp_path)

    arrays = spurious.read_celeba(tmp_path / "list_attr_celeba.txt",
                                  tmp_path / "list_eval_partition.txt", "Blond_Hair", "Male")

    for split, code in spurious.CELEBA_SPLITS.items():
        chosen = attributes[partition == code]
        np.testing.assert_array_equal(arrays[f"y_{split}"], chosen["Blond_Hair"])
        np.testing.assert_array_equal(arrays[f"group_{split}"], chosen["Male"])
        assert arrays[f"image_{split}"].tolist() == [f"img_align_celeba/{n}" for n in chosen.index]
    read = spurious.read_archive_images(tmp_path / "img_align_celeba.zip", arrays["image_test"][::-1])
    expected = [images[i] for i in np.flatnonzero(partition == 2)][::-1]
    for image, original in zip(read, expected):
        np.testing.assert_allclose(image, original, atol=3)  # JPEG, flat colours


def test_celeba_rejects_a_wrong_count_and_unknown_attribute(tmp_path, monkeypatch):
    celeba_fixture(tmp_path)
    files = (tmp_path / "list_attr_celeba.txt", tmp_path / "list_eval_partition.txt")
    with pytest.raises(ValueError, match="expected the 202599 CelebA images"):
        spurious.read_celeba(*files)  # the fixture's 12 images are not the published set
    monkeypatch.setattr(spurious, "CELEBA_SIZE", 12)
    with pytest.raises(ValueError, match="no attribute 'Wavy_Hair'"):
        spurious.read_celeba(*files, target="Wavy_Hair")


def waterbirds_fixture(path):
    groups = [(0, 0), (0, 0), (0, 1), (1, 0), (1, 1), (1, 1)]  # training (y, place)
    rows = [(y, 0, place) for y, place in groups] + [(1, 1, 0), (0, 2, 1), (1, 2, 1)]
    names = [f"{'200.Mallard' if y else '001.Sparrow'}/bird_{i}.jpg" for i, (y, _, _) in enumerate(rows)]
    metadata = pd.DataFrame({
        "img_id": range(1, len(rows) + 1), "img_filename": names,
        "y": [r[0] for r in rows], "split": [r[1] for r in rows], "place": [r[2] for r in rows],
        "place_filename": [f"/l/lake/{i}.jpg" for i in range(len(rows))],
    })
    images = {name: flat_colour((10 * i, 50, 90)) for i, name in enumerate(names)}
    write_waterbirds_tar(path, metadata, images)
    return metadata, images


def test_waterbirds_index_and_images(tmp_path, monkeypatch):
    monkeypatch.setattr(spurious, "WATERBIRDS_TRAIN_GROUPS", {(0, 0): 2, (0, 1): 1, (1, 0): 1, (1, 1): 2})
    path = tmp_path / "waterbird_complete95_forest2water2.tar.gz"
    metadata, images = waterbirds_fixture(path)

    arrays = spurious.read_waterbirds(path)

    assert arrays["y_train"].tolist() == [0, 0, 0, 1, 1, 1]
    assert arrays["group_train"].tolist() == [0, 0, 1, 0, 1, 1]
    assert arrays["y_test"].tolist() == [0, 1] and arrays["group_test"].tolist() == [1, 1]
    assert arrays["image_valid"].tolist() == [f"{spurious.WATERBIRDS_DIR}/200.Mallard/bird_6.jpg"]
    wanted = arrays["image_test"][::-1]
    for image, name in zip(spurious.read_archive_images(path, wanted), wanted):
        np.testing.assert_allclose(image, images[name.split("/", 1)[1]], atol=3)
    with pytest.raises(KeyError, match="lacks 1 requested images"):
        spurious.read_archive_images(path, [f"{spurious.WATERBIRDS_DIR}/missing.jpg"])


def test_waterbirds_group_counts_stand_in_for_a_checksum(tmp_path):
    path = tmp_path / "waterbird_complete95_forest2water2.tar.gz"
    waterbirds_fixture(path)  # six training images, not the published 4,795
    with pytest.raises(ValueError, match="is not the Waterbirds dataset"):
        spurious.read_waterbirds(path)
