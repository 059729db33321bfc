"""Peak memory of preparing a dataset, per image, on a generated Tiny-ImageNet-format zip.

At paper size Tiny ImageNet is 110,000 images of 3x64x64 = 12,288 pixel values; preparation must
stay inside its rule's 8,000 MB request (rules/datasets.smk). A child process prepares and saves
the dataset as the rule's job does (tests/memory_probe.py measures it).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pooch
import pytest

from linearlens.cluster import BUDGETS
from linearlens.data.fixtures import write_tinyimagenet_zip
from memory_probe import AVAILABLE, UNAVAILABLE_REASON, peak_above_baseline

PIXELS = 3 * 64 * 64
PAPER_IMAGES = 110_000
ROOT = Path(__file__).resolve().parents[1]
REQUEST_BYTES = 8000 * 1e6  # prepare_dataset's mem_mb at the first attempt (rules/datasets.smk)
INTERPRETER_BYTES = 300e6  # the job's interpreter and imports, generously (measured: ~115 MB)

# In a fresh interpreter under the fixture's folder (the registry's raw paths are relative).
SETUP = """
import dataclasses, json, sys
from linearlens.data import tinyimagenet  # noqa: F401  (the reader's imports, before the baseline)
from linearlens.data.prepare import prepare_dataset
from linearlens.data.prepared import save_prepared
from linearlens.data.registry import get_source

spec, checksum = json.loads(sys.argv[1]), sys.argv[2]
source = get_source("tinyimagenet")
source = dataclasses.replace(source, files=(dataclasses.replace(source.files[0], checksum=checksum),))
"""
PREPARE = """
arrays, provenance = prepare_dataset(spec, source)
save_prepared(arrays, provenance, "prepared.npz", "prepared.json")
"""


def noise_images(count: int, seed: int) -> list[np.ndarray]:
    """Random colour images: JPEG keeps them 64x64 colour, as the real set's photos."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, size=(3, 64, 64), dtype=np.uint8) for _ in range(count)]


def write_fixture(folder: Path, classes: int, per_class: int, val: int) -> Path:
    wnids = [f"n{index:08d}" for index in range(classes)]
    train = {wnid: noise_images(per_class, seed) for seed, wnid in enumerate(wnids)}
    val_items = [(wnids[i % classes], image) for i, image in enumerate(noise_images(val, classes))]
    raw = folder / "resources" / "raw" / "tinyimagenet"
    raw.mkdir(parents=True)
    return write_tinyimagenet_zip(raw / "tiny-imagenet-200.zip", train, val_items)


def measure_preparation(folder: Path, spec: dict) -> int:
    """Peak memory above the interpreter's baseline for one preparation and its saving."""
    zip_path = folder / "resources" / "raw" / "tinyimagenet" / "tiny-imagenet-200.zip"
    checksum = f"md5:{pooch.file_hash(str(zip_path), alg='md5')}"
    return peak_above_baseline(SETUP, PREPARE, [json.dumps(spec), checksum], folder)


def peak_bytes_per_image(folder: Path, spec: dict, classes: int, sizes: tuple[int, int]) -> tuple[float, float]:
    """Peak memory per image (the slope between two dataset sizes, so fixed costs such as one
    slice's temporaries do not count as per-image ones) and the fixed part."""
    peaks = []
    for per_class in sizes:
        run = folder / f"run_{per_class}"
        val = classes * per_class // 10  # Tiny ImageNet: 10 validation images per 100 training ones
        write_fixture(run, classes, per_class, val)
        peaks.append((classes * per_class + val, measure_preparation(run, spec)))
    (n_small, small), (n_large, large) = peaks
    per_image = (large - small) / (n_large - n_small)
    return per_image, large - per_image * n_large


@pytest.mark.skipif(not AVAILABLE, reason=UNAVAILABLE_REASON)
def test_tinyimagenet_preparation_peak_memory_per_image_fits_the_request(tmp_path):
    # The paper's entry (config/paper.yaml: tinyimagenet, standardise per_channel). Before the fix,
    # float64 intermediates took ~18 bytes per pixel value at the peak: ~25 GB at paper size.
    spec = {"source": "tinyimagenet", "standardise": "per_channel"}
    per_image, fixed = peak_bytes_per_image(tmp_path, spec, classes=8, sizes=(100, 300))

    # uint8 pixels plus their float32 copy are 5 bytes per training-image value, while the float32
    # result is written over itself: the bound leaves room for the labels and the allocator.
    assert per_image < 6 * PIXELS, f"{per_image / PIXELS:.1f} bytes per pixel value"
    paper_peak = INTERPRETER_BYTES + fixed + per_image * PAPER_IMAGES
    assert paper_peak < REQUEST_BYTES, f"paper-size peak {paper_peak / 1e9:.2f} GB"


def test_slurm_retries_of_a_preparation_ask_for_more_memory():
    # SLURM kills a job over its memory request; a retry with the same request fails the same way.
    request = BUDGETS["data"].resources()["mem_mb"]
    asked = [request(None, attempt) for attempt in (1, 2, 3)]  # as Snakemake evaluates it
    assert asked[0] * 1e6 == REQUEST_BYTES and asked[0] < asked[1] < asked[2]
    rule = (ROOT / "rules" / "datasets.smk").read_text().split("rule prepare_dataset:")[1].split("\nrule ")[0]
    assert '**job_resources("data")' in rule  # the rule asks for that budget
