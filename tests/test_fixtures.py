"""The generated fixtures of the paper configuration's datasets and artefacts (the rehearsal's data):
each is read by its real reader and preparation and gives the paper's shapes and classes; the fixture
mode trusts the fixtures' own manifest while the paper mode's published checks still run; damaged
fixture files fail with one line naming them; the fixture-mode DAG plans no download."""

import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import openml  # noqa: F401  (imported here, not under the socket block: urllib3 probes IPv6 on import)
import pandas as pd
import pytest

from linearlens.config import load_scale
from linearlens.data import fixtures, spurious
from linearlens.data.cifar import read_cifar10_archive
from linearlens.data.damaged import DamagedFileError
from linearlens.data.download import DatasetUnavailableError
from linearlens.data.prepare import load_source, prepare_dataset
from linearlens.data.registry import RESNET18_IMAGENET, SOURCES
from linearlens.data.source import RAW_DIR
from linearlens.data.svhn import read_svhn_mat
from linearlens.data.text import text_file_tokens
from linearlens.data.weights import read_state_dict

ROOT = Path(__file__).resolve().parents[1]
PAPER = load_scale("paper")
MANIFEST = fixtures.MANIFEST
FILE_DATASETS = sorted(fixtures.file_datasets(PAPER["datasets"]))


@pytest.fixture(scope="module")
def fixture_root(tmp_path_factory):
    """Every file the paper configuration downloads or reads as text, generated (the Karp ch. 5
    checkpoints have their own test), in a working directory of their own."""
    root = tmp_path_factory.mktemp("rehearsal")
    manifest = fixtures.write_fixtures(MANIFEST, fixtures.sources_to_write(PAPER["datasets"]),
                                       fixtures.corpora_to_write(PAPER["datasets"]), {}, root=root)
    return root, manifest


@pytest.fixture
def in_fixture_root(fixture_root, monkeypatch):
    root, manifest = fixture_root
    monkeypatch.chdir(root)  # RAW_DIR and the corpus paths are relative to the working directory
    return manifest


def prepare_from_fixture(name, manifest):
    spec = PAPER["datasets"][name]
    source = fixtures.trusted_source(SOURCES[spec["source"]], manifest)
    return prepare_dataset(fixtures.trusted_spec(spec, manifest), source)


# --- every paper dataset, prepared from its fixture -------------------------------------------

@pytest.mark.parametrize("name", FILE_DATASETS)
def test_every_paper_dataset_prepares_from_its_fixture(in_fixture_root, name):
    spec = PAPER["datasets"][name]
    arrays, provenance = prepare_from_fixture(name, in_fixture_root)

    for filename, record in provenance.get("files", {}).items():  # checked against the manifest
        assert record["checksum"] == in_fixture_root["files"][f"{RAW_DIR / spec['source']}/{filename}"]
    for split in ("train", "test"):
        if f"n_{split}" in spec:
            assert len(arrays[f"y_{split}"]) == spec[f"n_{split}"]
        if "classes" in spec:  # every selected class present, relabelled 0..k-1
            assert set(np.unique(arrays[f"y_{split}"])) == set(range(len(spec["classes"])))
        if "class_groups" in spec:
            assert set(np.unique(arrays[f"y_{split}"])) == set(range(len(spec["class_groups"])))
    if SOURCES[spec["source"]].kind == "image_index":  # every (label, group) cell in every split
        for split in ("train", "valid", "test"):
            counts = spurious.group_counts(arrays[f"y_{split}"], arrays[f"group_{split}"])
            assert min(counts.values()) > 0, (split, counts)


@pytest.mark.parametrize("name, x_shape, classes", [
    ("mnist", (1, 28, 28), 10), ("fashion_mnist", (1, 28, 28), 10), ("kmnist", (1, 28, 28), 10),
    ("cifar10", (3, 32, 32), 10), ("svhn", (3, 32, 32), 10), ("tinyimagenet", (3, 64, 64), 200),
])
def test_image_fixtures_have_the_published_shapes_and_every_class(in_fixture_root, name, x_shape, classes):
    arrays, _ = load_source(fixtures.trusted_source(SOURCES[name], in_fixture_root), {})
    for split in ("train", "test"):
        assert arrays[f"x_{split}"].shape[1:] == x_shape and arrays[f"x_{split}"].dtype == np.uint8
        assert set(np.unique(arrays[f"y_{split}"])) == set(range(classes))


def test_paper_selections_have_room(in_fixture_root):
    """CIFAR-10's last 10,000 training images as a test split, SVHN's random 10,000 test images."""
    assert len(prepare_from_fixture("cifar10_40k_10k", in_fixture_root)[0]["y_test"]) == 10_000
    assert len(prepare_from_fixture("svhn_test10k", in_fixture_root)[0]["y_test"]) == 10_000


def test_cscores_follow_the_cifar10_fixture(in_fixture_root):
    scores = load_source(fixtures.trusted_source(SOURCES["cifar10_cscores"], in_fixture_root), {})[0]
    cifar = read_cifar10_archive(RAW_DIR / "cifar10" / "cifar-10-python.tar.gz")
    assert scores["scores"].shape == (50_000,)
    np.testing.assert_array_equal(scores["labels"][:len(cifar["y_train"])], cifar["y_train"])


def test_spurious_fixtures_decode_at_their_published_sizes(in_fixture_root):
    celeba = load_source(fixtures.trusted_source(SOURCES["celeba"], in_fixture_root), {})[0]
    waterbirds = load_source(fixtures.trusted_source(SOURCES["waterbirds"], in_fixture_root), {})[0]
    face, = spurious.read_archive_images(RAW_DIR / "celeba" / "img_align_celeba.zip", celeba["image_test"][:1])
    bird, = spurious.read_archive_images(RAW_DIR / "waterbirds" / spurious.WATERBIRDS_ARCHIVE,
                                         waterbirds["image_valid"][:1])
    assert face.shape == (3, 218, 178) and bird.shape == (3, 300, 400)
    attributes = spurious.read_celeba_attributes(RAW_DIR / "celeba" / "list_attr_celeba.txt")
    assert list(attributes.columns) == list(fixtures.CELEBA_ATTRIBUTES) and len(attributes.columns) == 40


def test_weights_fixture_is_torchvision_resnet18(in_fixture_root):
    from linearlens.data.weights import load_except_head
    from linearlens.models.resnet import imagenet_resnet18

    state = read_state_dict(RAW_DIR / "resnet18_imagenet" / RESNET18_IMAGENET)
    reference = {k: v for k, v in imagenet_resnet18(num_classes=1000).state_dict().items()
                 if not k.endswith("num_batches_tracked")}
    assert {k: v.shape for k, v in state.items()} == {k: tuple(v.shape) for k, v in reference.items()}
    assert sum(v.size for k, v in state.items() if "running" not in k) == 11_689_512  # torchvision's count
    load_except_head(imagenet_resnet18(num_classes=2), state)  # the Waterbirds runs' start


def test_background_bank_fixture(in_fixture_root):
    arrays = SOURCES["imagenet_plants"].read(RAW_DIR / "imagenet_plants", {})
    assert arrays["x"].shape == (fixtures.BACKGROUND_BANK_SIZE, 3, 32, 32) and 0 <= arrays["x"].min() <= arrays["x"].max() <= 1


def test_openml_fixture_has_the_published_size(in_fixture_root):
    arrays, provenance = load_source(fixtures.trusted_source(SOURCES["openml_44148"], in_fixture_root), {})
    assert arrays["x"].shape == (21_263, 79) and provenance["openml"]["target"] == "criticaltemp"


def test_corpus_fixture_is_checked_by_its_manifest_digest(in_fixture_root):
    spec = fixtures.trusted_spec(PAPER["datasets"]["books_wikipedia"], in_fixture_root)
    assert spec["source_options"]["sha256"] and PAPER["datasets"]["books_wikipedia"]["source_options"]["sha256"] is None
    tokens = text_file_tokens(**spec["source_options"])
    assert tokens["train_tokens"].dtype == np.uint8 and len(tokens["validation_tokens"]) == 4_000
    with pytest.raises(ValueError, match="not the configured"):
        text_file_tokens(**{**spec["source_options"], "sha256": "0" * 64})


# --- the paper mode's published checks still run on the same files ---------------------------

@pytest.mark.parametrize("source, problem", [
    ("mnist", "Checksum mismatch"),
    ("cifar10", "Checksum mismatch"),
    ("resnet18_imagenet", "Checksum mismatch"),
])
def test_paper_mode_refuses_fixtures_by_their_published_checksums(in_fixture_root, source, problem):
    with pytest.raises(DatasetUnavailableError, match=problem):
        load_source(SOURCES[source], {})


def test_paper_mode_refuses_fixtures_by_their_published_counts(in_fixture_root):
    with pytest.raises(ValueError, match="is not the Waterbirds dataset"):
        load_source(SOURCES["waterbirds"], {})  # no checksum is published: the counts are the check
    checksums_only = {**in_fixture_root, "reader_arguments": {}}  # past CelebA's md5s, to its counts
    with pytest.raises(ValueError, match="expected the 202599 CelebA images"):
        load_source(fixtures.trusted_source(SOURCES["celeba"], checksums_only), {})


def test_fixture_counts_are_checked_too(in_fixture_root, tmp_path):
    """The manifest's counts are a check, not a pass: other counts than the file's fail."""
    arguments = in_fixture_root["reader_arguments"]["waterbirds"]
    wrong = [[label, group, count + 1] for label, group, count in arguments["train_groups"]]
    with pytest.raises(ValueError, match="is not the Waterbirds dataset"):
        spurious.load_waterbirds(RAW_DIR / "waterbirds", train_groups=wrong)
    counts = in_fixture_root["reader_arguments"]["celeba"]
    with pytest.raises(ValueError, match="differ from the published ones"):
        spurious.load_celeba(RAW_DIR / "celeba", "Blond_Hair", "Male", counts["size"],
                             {"test": [[0, 0, 1], [0, 1, 5], [1, 0, 5], [1, 1, 5]]})


# --- damaged fixture files: one line naming the file -------------------------------------------

def one_line_naming(error, path):
    message = str(error.value)
    assert message.startswith(f"{path}: ") and "\n" not in message, message
    assert f"snakemake --cores 1 {path}" in message


def test_cifar10_archive_with_a_member_missing_names_the_file(fixture_root, tmp_path):
    root, _ = fixture_root
    damaged = tmp_path / "cifar-10-python.tar.gz"
    with tarfile.open(root / RAW_DIR / "cifar10" / "cifar-10-python.tar.gz") as source, \
            tarfile.open(damaged, "w:gz") as copy:
        for member in source.getmembers():
            if not member.name.endswith("data_batch_3"):
                copy.addfile(member, source.extractfile(member))
    with pytest.raises(DamagedFileError, match="has no member data_batch_3") as error:
        read_cifar10_archive(damaged)
    one_line_naming(error, damaged)


@pytest.mark.parametrize("keep", [0.5, 0.99, 0.02], ids=["half", "end", "header"])
def test_truncated_svhn_mat_names_the_file(fixture_root, tmp_path, keep):
    root, _ = fixture_root
    data = (root / RAW_DIR / "svhn" / "train_32x32.mat").read_bytes()
    damaged = tmp_path / "train_32x32.mat"
    damaged.write_bytes(data[:int(len(data) * keep)])
    with pytest.raises(DamagedFileError, match="not a complete MATLAB 5 file") as error:
        read_svhn_mat(damaged)
    one_line_naming(error, damaged)


# --- the same bytes every time -------------------------------------------------------------------

def test_fixtures_are_the_same_bytes_every_time(fixture_root, tmp_path):
    _, manifest = fixture_root
    again = fixtures.write_fixtures(MANIFEST, fixtures.sources_to_write(PAPER["datasets"]),
                                    fixtures.corpora_to_write(PAPER["datasets"]), {}, root=tmp_path)
    assert again == manifest
    assert (tmp_path / MANIFEST).read_text() == (fixture_root[0] / MANIFEST).read_text()


# --- Karp ch. 5's checkpoints ---------------------------------------------------------------------

def test_karp_ch5_checkpoint_fixture_loads_as_a_growing_checkpoint(tmp_path):
    from linearlens.analysis.karp_thesis.ch5 import pretraining_setting
    from linearlens.data.text import split_tokens
    from linearlens.experiments.karp_thesis.ch5 import Corpus, Trainer, grown_losses, growth_operators, read_pretrained

    setting = PAPER["karp_thesis"]["ch5"]["growing"]["bert"]
    corpus = fixtures.write_text_fixture(tmp_path / "corpus.txt")
    path = fixtures.write_karp_ch5_checkpoint(tmp_path / "bert.pt", pretraining_setting(setting), corpus, 0.001)

    again = fixtures.write_karp_ch5_checkpoint(tmp_path / "again" / "bert.pt", pretraining_setting(setting), corpus, 0.001)
    assert again.read_bytes() == path.read_bytes()  # the same bytes every time (torch.save names members by file)

    state = read_pretrained(path, setting)  # the loader the growing rule uses
    assert state["model_spec"]["layers"] == setting["layers"] == 12
    assert state["model_spec"]["context"] == setting["model"]["context"] == 512
    assert state["model_spec"]["width"] == fixtures.KARP_CH5_FIXTURE_MODEL["width"]
    assert state["optimiser_state"] and state["step"] == 1
    trainer = Trainer.from_checkpoint(state, setting)
    assert trainer.global_step == 1 and len(trainer.optimiser.state) == len(state["optimiser_state"])

    # and it grows: one operator, two steps, at a cut batch
    cut = {**setting, "batch_size": 2, "micro_batch_size": 2, "validation_batches": 1, "train_steps": 2, "window_end": 1,
           "smoothing": 1, "lag": 1, "lag_k": 2}
    tokens = Corpus(split_tokens(corpus.read_bytes(), 0.001), cut)
    losses = grown_losses(state, growth_operators(cut)[0], cut, tokens, seed=0)
    assert losses.shape == (3,) and np.isfinite(losses).all()


# --- the fixture mode's DAG ----------------------------------------------------------------------

PAPER_DATA_TARGETS = [f"results/data/{name}.npz" for name in PAPER["datasets"]]
CH5_CHECKPOINTS = sorted(fixtures.checkpoints_to_write(PAPER))


def dry_run(workdir, *config):
    result = subprocess.run(
        [str(Path(sys.executable).with_name("snakemake")), *PAPER_DATA_TARGETS, *CH5_CHECKPOINTS, "-n",
         "--directory", str(workdir), "--configfile", "config/paper.yaml", *config],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr + result.stdout
    table = result.stdout.split("Job stats:", 1)[1].split("total", 1)[0]
    return {line.split()[0]: int(line.split()[1]) for line in table.strip().splitlines()[2:]}


def repository_files():
    return {path for folder in ("resources", "results") for path in (ROOT / folder).rglob("*")}


@pytest.mark.workflow
def test_fixture_mode_plans_fixtures_and_no_download(tmp_path):
    before = repository_files()
    jobs = dry_run(tmp_path / "rehearsal", "--config", "fixture_data=True")
    assert jobs == {"write_fixtures": 1, "prepare_fixture_dataset": len(FILE_DATASETS),
                    "prepare_dataset": len(PAPER["datasets"]) - len(FILE_DATASETS)}  # offline ones as ever
    assert repository_files() == before  # nothing written outside the working directory
    assert not (tmp_path / "rehearsal" / "resources").exists()  # a dry run writes no fixture either

    paper = dry_run(tmp_path / "paper")  # the paper mode still downloads, and never writes fixtures
    assert {"download_file", "fetch_openml", "prepare_dataset", "karp_thesis_ch5_missing_checkpoint"} <= set(paper)
    assert "write_fixtures" not in paper and "prepare_fixture_dataset" not in paper



def test_a_rewritten_openml_fixture_is_not_shadowed_by_the_clients_earlier_parse(tmp_path):
    """The openml client keeps its parse (dataset.pkl.py3) beside the ARFF and reads that first: a
    fixture written again over an earlier one (a rehearsal directory kept between versions) must be
    read as written."""
    from linearlens.data.openml_source import load_openml

    first = pd.DataFrame({"x0": [1.0, 2.0, 3.0], "old": [0.0, 1.0, 0.5]})
    fixtures.write_openml_cache(tmp_path, 990002, first, "old")
    load_openml(990002, tmp_path)
    second = pd.DataFrame({"x0": [1.0, 2.0], "x1": [3.0, 4.0], "new": [0.5, 0.25]})
    fixtures.write_openml_cache(tmp_path, 990002, second, "new")
    arrays, _ = load_openml(990002, tmp_path)
    assert arrays["x"].shape == (2, 2) and arrays["y"].tolist() == [0.5, 0.25]
