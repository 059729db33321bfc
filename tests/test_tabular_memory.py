"""Peak memory of the network's kernel-norm tracking in the tabular study (telescoping Figs 5, 14).

At paper size the tracker logs ~20,000 points' kernel-row norms at each of ~11,000 steps (config
kernel_every 1, 100 epochs): 0.9 GB as float32, and the rule's job asks for 8 GB in all. The
norms must be held once, never stacked again into a second array.
"""

from __future__ import annotations

import pytest

from memory_probe import AVAILABLE, UNAVAILABLE_REASON, peak_above_baseline

TRAIN, TESTED, BATCH = 128, 8000, 4  # 32 steps an epoch
PAPER_ENTRIES = 20_000 * 11_000  # points x logged steps (houses: 100 epochs of ~110 steps)
REQUEST_BYTES = 8000 * 1e6  # the tabular run's mem_mb at the first attempt (profiles/slurm)

SETUP = """
import sys
import numpy as np
from linearlens.experiments import tabular

run = {{"model": {{"name": "mlp", "hidden": [4], "activation": "relu"}},
        "optimiser": {{"name": "sgd", "lr": 1e-3}}, "loss": "squared", "batch_size": {BATCH},
        "epochs": int(sys.argv[1]), "kernel_every": 1, "full_kernel_every": 2000}}
rng = np.random.default_rng(0)
x, y = rng.normal(size=({TRAIN} + {TESTED}, 2)), rng.normal(size={TRAIN} + {TESTED})
split, sets = {{"train": np.arange({TRAIN})}}, {{0.0: np.arange({TRAIN}, {TRAIN} + {TESTED})}}
# torch's first passes allocate their own buffers: warm up before the baseline
tabular.network_scores({{**run, "epochs": 1}}, x[:64], y[:64], {{"train": np.arange(32)}},
                       {{0.0: np.arange(32, 64)}}, seed=0)
""".format(TRAIN=TRAIN, TESTED=TESTED, BATCH=BATCH)
SCORES = "tabular.network_scores(run, x, y, split, sets, seed=0)"


def bytes_per_logged_norm(folder, epochs: tuple[int, int]) -> float:
    """Peak memory per logged batch-kernel norm: the slope between two run lengths, so that
    what does not grow with the steps (the step-0 full kernel, the model) is not counted."""
    peaks = [peak_above_baseline(SETUP, SCORES, [str(e)], folder) for e in epochs]
    entries = [(TRAIN + TESTED) * e * (TRAIN // BATCH) for e in epochs]
    return (peaks[1] - peaks[0]) / (entries[1] - entries[0])


@pytest.mark.skipif(not AVAILABLE, reason=UNAVAILABLE_REASON)
def test_kernel_norm_tracking_holds_each_norm_once_in_float32(tmp_path):
    per_norm = bytes_per_logged_norm(tmp_path, (12, 36))
    # 4 bytes a norm, and the allocator's share. Before: each norm kept as float64, stacked again
    # at the end, and the freed kernels of every step pinned by the session's loss tensors: ~30.
    assert per_norm < 8, f"{per_norm:.1f} bytes per logged norm"
    assert per_norm * PAPER_ENTRIES < REQUEST_BYTES / 2
