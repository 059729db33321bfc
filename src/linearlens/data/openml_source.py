"""OpenML datasets by id, through the ``openml`` package, cached under ``resources/openml``.

Integrity: OpenML publishes an md5 only for a dataset's ARFF file (its parquet copies carry
none), so we make the client fetch the ARFF file, and we compare the cached file with the md5 of
the dataset's description on every load. The client checks it only while downloading, which
leaves a hand-placed or damaged file unchecked.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pooch

from .download import DatasetUnavailableError

OPENML_SITE = "https://www.openml.org"


@contextlib.contextmanager
def openml_configured(cache_dir: Path) -> Iterator[None]:
    """openml's global settings pointed at our cache, for the duration of one call only."""
    import openml

    config = openml.config
    saved = (config._root_cache_directory, config.retry_policy, config.connection_n_retries)
    saved_skip = os.environ.get(config.OPENML_SKIP_PARQUET_ENV_VAR)
    config.set_root_cache_directory(str(cache_dir))
    config.set_retry_policy("human", n_retries=1)  # fail fast when offline, no long back-off
    os.environ[config.OPENML_SKIP_PARQUET_ENV_VAR] = "true"  # the ARFF file has an md5
    try:
        yield
    finally:
        config._root_cache_directory = saved[0]
        config.retry_policy, config.connection_n_retries = saved[1], saved[2]
        if saved_skip is None:
            os.environ.pop(config.OPENML_SKIP_PARQUET_ENV_VAR, None)
        else:
            os.environ[config.OPENML_SKIP_PARQUET_ENV_VAR] = saved_skip


def dataset_cache_dir(cache_dir: str | Path, dataset_id: int) -> Path:
    """Where the openml client keeps one dataset's files under the root cache directory."""
    import openml

    with openml_configured(Path(cache_dir)):
        return Path(openml.config.get_cache_directory()) / "datasets" / str(dataset_id)


def _placement_help(dataset_id: int, cache_dir: Path, reason: str) -> str:
    target = dataset_cache_dir(cache_dir, dataset_id)
    return (
        f"{reason}\n"
        f"  dataset:  OpenML {dataset_id}\n"
        f"  URL:      {OPENML_SITE}/d/{dataset_id} (description: {OPENML_SITE}/api/v1/xml/data/{dataset_id})\n"
        "  checksum: the md5_checksum in that description, of the dataset's ARFF file\n"
        "To place it by hand, run `OPENML_SKIP_PARQUET=true python -c \"import openml; "
        f"openml.datasets.get_dataset({dataset_id}, download_data=True, "
        "download_features_meta_data=True)\"` on a machine with network access and copy the "
        f"client's cache folder for this dataset (datasets/{dataset_id}/ under its cache "
        "directory: description.xml, features.xml and dataset.arff) to:\n"
        f"  {target}"
    )


@contextlib.contextmanager
def _kept_on_failure(directory: Path) -> Iterator[None]:
    """Put a dataset folder back as it was if the call inside fails: the openml client deletes
    the whole folder on any error, which would lose a partly hand-placed copy."""
    if not directory.exists():
        yield
        return
    with tempfile.TemporaryDirectory(dir=directory.parent) as backup_root:
        backup = Path(backup_root) / directory.name
        shutil.copytree(directory, backup)
        try:
            yield
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            shutil.move(backup, directory)
            raise


def get_openml_dataset(dataset_id: int, cache_dir: str | Path):
    """The openml dataset object, from the cache or downloaded into it, with its ARFF file."""
    import openml

    cache_dir = Path(cache_dir)
    directory = dataset_cache_dir(cache_dir, dataset_id)
    try:
        with openml_configured(cache_dir), _kept_on_failure(directory):
            return openml.datasets.get_dataset(
                dataset_id,
                download_data=True,
                download_qualities=False,
                download_features_meta_data=True,
            )
    except Exception as error:
        raise DatasetUnavailableError(
            _placement_help(dataset_id, cache_dir, f"Could not get OpenML dataset {dataset_id}: {error}")
        ) from error


def _verified_data_file(dataset, dataset_id: int, cache_dir: Path) -> tuple[Path, str]:
    """The cached ARFF file and its md5, refused unless it matches the published md5."""
    data_file = Path(dataset.data_file) if dataset.data_file else None
    if data_file is None or not data_file.is_file():
        raise DatasetUnavailableError(_placement_help(
            dataset_id, cache_dir, f"OpenML dataset {dataset_id} has no ARFF file in the cache"))
    actual = pooch.file_hash(str(data_file), alg="md5")
    if actual != dataset.md5_checksum:
        raise DatasetUnavailableError(_placement_help(
            dataset_id, cache_dir,
            f"Checksum mismatch for OpenML dataset {dataset_id}: {data_file} has md5 {actual}, "
            f"its description publishes {dataset.md5_checksum}. Delete the file and run again."))
    return data_file, actual


class OpenMLDatasetMismatch(DatasetUnavailableError):
    """An OpenML dataset that is not the one the document used (another task, size or target): the
    data the figure needs is not at this id. A job prints its one-line message, no traceback."""


def _found(dataset, frame) -> dict:
    """Task, size and target of a dataset as read: a nominal target makes it a classification."""
    target = dataset.default_target_attribute
    nominal = any(feature.name == target and feature.data_type == "nominal"
                  for feature in dataset.features.values())
    return {"task": "classification" if nominal else "regression", "rows": len(frame),
            "features": frame.shape[1] - 1, "target": target}


def check_openml_dataset(dataset_id: int, found: dict, expected: dict) -> None:
    """Refuse, in one line, a dataset whose task, size or target differs from the expected ones."""
    differences = [f"{key} {found[key]!r} (expected {value!r})"
                   for key, value in expected.items() if found[key] != value]
    if differences:
        raise OpenMLDatasetMismatch(
            f"OpenML {dataset_id} is not the dataset the document used: {', '.join(differences)}; "
            "check the id in the dataset's source (linearlens.data.registry.OPENML_DATASETS)")


def load_openml(dataset_id: int, cache_dir: str | Path,
                expected: dict | None = None) -> tuple[dict[str, np.ndarray], dict]:
    """Features (float64), target and a provenance record for one OpenML dataset, refused
    (``check_openml_dataset``) unless it has the ``expected`` task, rows, features and target."""
    dataset = get_openml_dataset(dataset_id, cache_dir)
    data_file, md5 = _verified_data_file(dataset, dataset_id, Path(cache_dir))
    frame, _, _, _ = dataset.get_data(dataset_format="dataframe")
    check_openml_dataset(dataset_id, _found(dataset, frame), expected or {})
    target = dataset.default_target_attribute
    features = frame.drop(columns=[target])
    arrays = {
        "x": features.to_numpy(dtype=np.float64),
        "y": frame[target].to_numpy(dtype=np.float64),
    }
    provenance = {
        "openml_id": dataset_id,
        "openml_name": dataset.name,
        "openml_version": dataset.version,
        "target": target,
        "feature_names": list(features.columns),
        "data_file": data_file.name,
        "md5": md5,
        "url": f"{OPENML_SITE}/d/{dataset_id}",
    }
    return arrays, provenance
