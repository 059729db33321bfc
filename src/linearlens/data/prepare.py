"""Prepared datasets: a source after the transforms a figure asks for, saved as arrays beside a
provenance record (source, checksums, subset, preprocessing, stand-in status)."""

from __future__ import annotations

import numpy as np

from .. import __version__
from . import transforms
from .download import verify
from .source import OPENML_CACHE_DIR, RAW_DIR, Source

SPLIT_ARRAYS = ("x_train", "y_train", "x_test", "y_test")


def load_source(source: Source, options: dict) -> tuple[dict[str, np.ndarray], dict]:
    """Read a source's raw data after checking every raw file's checksum."""
    raw_dir = RAW_DIR / source.name
    record: dict = {"source": source.name, "source_description": source.description}
    if source.files:
        record["files"] = {
            remote.filename: {"url": remote.url, "checksum": verify(remote, raw_dir / remote.filename)}
            for remote in source.files_needed(options)
        }
    unknown = set(options) - set(source.options)
    if unknown:
        raise ValueError(f"source {source.name!r} takes no options {sorted(unknown)}; "
                         f"it takes {sorted(source.options)}")
    if source.openml_id is not None:
        from .openml_source import load_openml

        arrays, record["openml"] = load_openml(source.openml_id, OPENML_CACHE_DIR, source.openml_expected)
        return arrays, record
    resolved = {**source.options, **options}
    if resolved:
        record["source_options"] = resolved
    return source.read(raw_dir, resolved), record


def prepare_dataset(spec: dict, source: Source) -> tuple[dict[str, np.ndarray], dict]:
    """Apply the transforms of one ``datasets:`` entry of the config to its source (the registry's
    entry for ``spec["source"]``).

    Order: split (sources without one; or the test split cut from the training split), class
    selection or grouping, grayscale, downsampling, pixel rescaling to [0, 1], subsets,
    normalisation by fixed constants or standardisation, then label noise on the training labels only.
    """
    arrays, record = load_source(source, spec.get("source_options", {}))
    steps: list[dict] = []
    seed = int(spec.get("seed", 0))
    if source.kind in ("scores", "image_index", "weights"):  # no pixels here to transform
        return arrays, _finish(record, spec, steps, arrays)
    if source.kind == "text":
        from .text import corpus_provenance

        return arrays, _finish(record, spec, [corpus_provenance(arrays)], arrays)

    # train_index / test_index always point into the source (its own split, or its x and y).
    if "x_train" in arrays:
        source_index = {split: np.arange(len(arrays[f"y_{split}"])) for split in ("train", "test")}
    else:
        fraction = spec.get("test_fraction", 0.2)
        train, test = transforms.train_test_split_indices(len(arrays["y"]), fraction, seed)
        source_index = {"train": train, "test": test}
        arrays = {"x_train": arrays["x"][train], "y_train": arrays["y"][train],
                  "x_test": arrays["x"][test], "y_test": arrays["y"][test]}
        steps.append({"step": "train_test_split", "test_fraction": fraction, "seed": seed})
    if "test_from_train" in spec:
        arrays, source_index = _test_from_train(arrays, source_index, spec["test_from_train"])
        steps.append({"step": "test_from_train", "n_test": spec["test_from_train"],
                      "note": "the last n_test training examples (original order) are the test split; "
                              "test_index points into the source's training split"})
    extra = {k: v for k, v in arrays.items() if k not in SPLIT_ARRAYS}
    arrays = {k: arrays[k] for k in SPLIT_ARRAYS}
    arrays.update({f"{split}_index": index for split, index in source_index.items()})

    if "classes" in spec:
        arrays = _per_split(arrays, lambda x, y, i: _select(x, y, i, spec["classes"]))
        steps.append({"step": "select_classes", "classes": spec["classes"]})
    if "class_groups" in spec:
        for split in ("train", "test"):
            arrays[f"y_{split}"] = transforms.group_classes(arrays[f"y_{split}"], spec["class_groups"])
        steps.append({"step": "group_classes", "groups": spec["class_groups"]})
    if spec.get("grayscale"):
        for split in ("train", "test"):
            arrays[f"x_{split}"] = transforms.grayscale(arrays[f"x_{split}"])
        steps.append({"step": "grayscale", "weights": "ITU-R 601 luma"})
    if "downsample" in spec:
        for split in ("train", "test"):
            arrays[f"x_{split}"] = transforms.area_downsample(arrays[f"x_{split}"], spec["downsample"])
        steps.append({"step": "area_downsample", "size": spec["downsample"]})
    if source.pixel_max is not None:
        for split in ("train", "test"):
            arrays[f"x_{split}"] = transforms.rescale_pixels(arrays[f"x_{split}"], source.pixel_max)
        steps.append({"step": "rescale_pixels", "divided_by": source.pixel_max, "dtype": "float32"})
    for split in ("train", "test"):
        n = spec.get(f"n_{split}")
        if n is None:
            continue
        y = arrays[f"y_{split}"]
        # class balance needs classes: a regression target (float) is subsampled at random, else
        # "balanced" would keep the n smallest distinct targets
        balanced = spec.get("balanced", not np.issubdtype(y.dtype, np.floating))
        index = (transforms.balanced_subset(y, n, seed + (split == "test"))
                 if balanced else transforms.random_subset(len(y), n, seed + (split == "test")))
        for key in (f"x_{split}", f"y_{split}", f"{split}_index"):
            arrays[key] = arrays[key][index]
        steps.append({"step": "subset", "split": split, "n": n, "class_balanced": balanced, "seed": seed})
    if "normalise" in spec:
        if spec.get("standardise"):
            raise ValueError("a dataset takes either standardise or normalise, not both")
        for split in ("train", "test"):
            arrays[f"x_{split}"] = transforms.normalise_channels(arrays[f"x_{split}"], **spec["normalise"])
        steps.append({"step": "normalise", **spec["normalise"]})
    if spec.get("standardise") == "per_channel":
        # in place: these arrays are this function's own (read or copied above), never the caller's
        arrays["x_train"], arrays["x_test"] = transforms.standardise_channels(
            arrays["x_train"], arrays["x_test"], in_place=True)
        steps.append({"step": "standardise", "statistics": "training split, per channel"})
    elif spec.get("standardise"):
        arrays["x_train"], arrays["x_test"] = transforms.standardise(arrays["x_train"], arrays["x_test"])
        steps.append({"step": "standardise", "statistics": "training split, per feature"})
    if spec.get("label_noise", 0) > 0:
        num_classes = int(max(arrays["y_train"].max(), arrays["y_test"].max())) + 1
        arrays["y_train_clean"] = arrays["y_train"]
        arrays["y_train"], arrays["noisy_index"] = transforms.flip_labels(
            arrays["y_train"], spec["label_noise"], num_classes, seed)
        steps.append({"step": "label_noise", "rate": spec["label_noise"],
                      "flipped": int(len(arrays["noisy_index"])), "seed": seed})
    arrays.update(extra)
    return arrays, _finish(record, spec, steps, arrays)


def _test_from_train(arrays, source_index, n_test: int):
    """The source's training split cut in two, in its original order: the first examples train,
    the last ``n_test`` test (George ch. 5: CIFAR-10 train[:40000] / train[40000:], the images with
    published C-scores); the source's own test split is left out."""
    n = len(arrays["y_train"])
    if not 0 < n_test < n:
        raise ValueError(f"test_from_train: {n_test} test examples out of {n} training examples")
    cut = n - n_test
    split = {"x_train": arrays["x_train"][:cut], "y_train": arrays["y_train"][:cut],
             "x_test": arrays["x_train"][cut:], "y_test": arrays["y_train"][cut:]}
    kept = {k: v for k, v in arrays.items() if k not in SPLIT_ARRAYS}
    index = source_index["train"]
    return {**kept, **split}, {"train": index[:cut], "test": index[cut:]}


def _select(x, y, index, classes):
    keep = np.isin(y, classes)
    x_kept, y_kept = transforms.select_classes(x, y, classes)
    return x_kept, y_kept, index[keep]


def _per_split(arrays, fn):
    out = dict(arrays)
    for split in ("train", "test"):
        out[f"x_{split}"], out[f"y_{split}"], out[f"{split}_index"] = fn(
            arrays[f"x_{split}"], arrays[f"y_{split}"], arrays[f"{split}_index"])
    return out


def _finish(record: dict, spec: dict, steps: list[dict], arrays: dict[str, np.ndarray]) -> dict:
    record.update({
        "standin_for": spec.get("standin_for"),
        "note": spec.get("note"),
        "transforms": steps,
        "arrays": {k: {"shape": list(v.shape), "dtype": str(v.dtype)} for k, v in arrays.items()},
        "linearlens_version": __version__,
    })
    return record
