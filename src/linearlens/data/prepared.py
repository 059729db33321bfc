"""A prepared dataset on disk: arrays in ``.npz`` beside a provenance record, and the label a figure
gives it. Kept apart from ``prepare`` so that code reading prepared data does not import the
source registry and its readers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .damaged import damaged_artefact, zip_damage


def save_prepared(arrays: dict[str, np.ndarray], provenance: dict, npz_path: str | Path,
                  provenance_path: str | Path) -> None:
    np.savez_compressed(npz_path, **arrays)
    Path(provenance_path).write_text(json.dumps(provenance, indent=2, default=_json_default) + "\n")


def load_prepared(npz_path: str | Path) -> dict[str, np.ndarray]:
    """The arrays of a prepared dataset; a damaged file fails with the command that rebuilds it."""
    try:
        with np.load(npz_path) as contents:
            return {key: contents[key] for key in contents.files}
    except FileNotFoundError:
        raise
    except Exception as error:
        problem = zip_damage(npz_path)
        if problem is None:  # a sound archive that is no prepared dataset: the reader's own error
            raise
        raise damaged_artefact(npz_path, problem) from error


def data_label(provenance: dict) -> str:
    """The data source as a figure should name it: the source, what preparation kept of it, and
    what it stands in for."""
    label = f"{provenance['source_description']}: {preparation_summary(provenance)}"
    if provenance.get("standin_for"):
        label = f"{label} — stand-in for {provenance['standin_for']}"
    return label


def preparation_summary(provenance: dict) -> str:
    """The preparation steps that change what the data is (classes, resolution, label noise) and
    the split sizes, e.g. "classes 3 vs 5, downsampled to 4×4, 20% label noise, 200 train / 161 test"."""
    parts = []
    for step in provenance["transforms"]:
        if step["step"] == "select_classes":
            parts.append("classes " + " vs ".join(str(c) for c in step["classes"]))
        elif step["step"] == "group_classes":
            parts.append(f"{len(step['groups'])} class groups")
        elif step["step"] == "area_downsample":
            parts.append("downsampled to " + "×".join(str(side) for side in step["size"]))
        elif step["step"] == "label_noise":
            parts.append(f"{step['rate']:.0%} label noise")
    shapes = provenance["arrays"]
    if "train_tokens" in shapes:  # a text corpus
        return f"{shapes['train_tokens']['shape'][0]:,} training / {shapes['validation_tokens']['shape'][0]:,} validation bytes"
    parts.append(f"{shapes['y_train']['shape'][0]:,} train / {shapes['y_test']['shape'][0]:,} test")
    return ", ".join(parts)


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value)}")
