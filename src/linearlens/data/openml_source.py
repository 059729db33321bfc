"""OpenML datasets by id, through the ``openml`` package, cached under ``resources/openml``.

The openml client checks the ARFF file against the md5 published in the dataset's description;
we record that md5 in the provenance, and the expected shape below guards against a silently
changed dataset.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pooch

from .download import DatasetUnavailableError

OPENML_SITE = "https://www.openml.org"


def _configure(cache_dir: Path) -> None:
    import openml

    openml.config.set_root_cache_directory(str(cache_dir))
    # Fail fast when offline: one attempt, no long back-off.
    openml.config.set_retry_policy("human", n_retries=1)


def dataset_cache_dir(cache_dir: str | Path, dataset_id: int) -> Path:
    """Where the openml client keeps one dataset's files under its root cache directory."""
    return Path(cache_dir) / "org" / "openml" / "www" / "datasets" / str(dataset_id)


def _placement_help(dataset_id: int, cache_dir: Path, reason: str) -> str:
    return (
        f"{reason}\n"
        f"  dataset:  OpenML {dataset_id}\n"
        f"  URL:      {OPENML_SITE}/d/{dataset_id} (description: {OPENML_SITE}/api/v1/xml/data/{dataset_id})\n"
        "  checksum: the md5_checksum in that description, verified by the openml client\n"
        "To place it by hand, run `python -c \"import openml; "
        f"openml.datasets.get_dataset({dataset_id}, download_data=True)\"` on a machine with "
        f"network access and copy its cache folder for this dataset "
        f"(org/openml/www/datasets/{dataset_id}/ under the openml cache) to:\n"
        f"  {dataset_cache_dir(cache_dir, dataset_id)}"
    )


def get_openml_dataset(dataset_id: int, cache_dir: str | Path):
    """The openml dataset object, from the cache or downloaded into it."""
    import openml

    cache_dir = Path(cache_dir)
    _configure(cache_dir)
    try:
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


def load_openml(dataset_id: int, cache_dir: str | Path) -> tuple[dict[str, np.ndarray], dict]:
    """Features (float64), target and a provenance record for one OpenML dataset."""
    dataset = get_openml_dataset(dataset_id, cache_dir)
    frame, _, _, _ = dataset.get_data(dataset_format="dataframe")
    target = dataset.default_target_attribute
    features = frame.drop(columns=[target])
    arrays = {
        "x": features.to_numpy(dtype=np.float64),
        "y": frame[target].to_numpy(dtype=np.float64),
    }
    data_file = Path(dataset.data_file) if dataset.data_file else None
    provenance = {
        "openml_id": dataset_id,
        "openml_name": dataset.name,
        "openml_version": dataset.version,
        "target": target,
        "feature_names": list(features.columns),
        "description_md5": dataset.md5_checksum,
        "data_file_md5": pooch.file_hash(str(data_file), alg="md5") if data_file and data_file.exists() else None,
        "url": f"{OPENML_SITE}/d/{dataset_id}",
    }
    return arrays, provenance

