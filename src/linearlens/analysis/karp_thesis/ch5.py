"""Chapter 5 and Appendix C, landscape-aware growing of language models: where the runs live, how
they are read, and the summaries behind Figs 5.2-5.4 and Tables 5.1, 5.2, C.2 (torch-free: numpy,
pandas, scipy). Fig 5.1 is a drawing, in figures.karp_thesis.ch5.

A **growth run** (one per growing setting and seed: ``growth_run_path``) is one pretrained model
grown by every operator of the setting's space, each grown model trained the same number of steps
on the same batches. Its arrays:

- ``operator`` (G,) str: the operator's id, ``start{s}-b{b}-{init}`` (start 0-indexed, trap C5-2)
- ``start`` (G,) int, ``block_size`` (G,) int, ``init`` (G,) str in {"random", "duplicate"}
- ``steps`` (S,) int: the steps after growing at which the validation loss was measured (sorted:
  the window 0..window_end every ``window_every`` steps, the lag step and the final step)
- ``loss`` (G, S) float: validation loss of each grown model at each of those steps
- ``pre_growth_loss`` (): the pretrained model's validation loss at the moment of growing
- ``settings`` (): a JSON string: the setting as configured (name, objective, layers, grown layers,
  window_end, window_every, lag, lag_k, smoothing, final step, ...) and the data it was made from

A **stacking run** (``stacking_run_path``) trains the same deep model in stages by last stacking
and by adaptive stacking (LAG@k per stage). Its arrays:

- ``strategy`` (2,) str: "adaptive", "last"
- ``stage_layers`` (n,) int: the depth of each stage
- ``chosen`` (2, n) str: the operator each strategy grew with at the start of each stage ("" for
  the first stage's freshly initialised model)
- ``candidates`` (n,) int: how many operators adaptive stacking probed at each stage
- ``stage_end_loss`` (2, n) float: validation loss at the end of each stage; the last is the final
- ``settings`` (): a JSON string, as above
"""

from __future__ import annotations

import json

import numpy as np

RUNS = "results/karp_thesis/runs/ch5"


def growth_run_path(setting: str, seed: int | str) -> str:
    return f"{RUNS}/growth/{setting}/seed{seed}.npz"


def pretrained_path(setting: str, seed: int | str) -> str:
    """The pretrained model (and its optimiser state) every operator of a growth run starts from."""
    return f"{RUNS}/pretrained/{setting}/seed{seed}.pt"


def stacking_run_path(seed: int | str) -> str:
    return f"{RUNS}/stacking/seed{seed}.npz"


def read_run(path: str) -> dict:
    """A growth or stacking run's arrays by name, with its settings decoded under ``settings``."""
    with np.load(path, allow_pickle=False) as contents:
        record = {key: contents[key] for key in contents.files}
    record["settings"] = json.loads(str(record["settings"]))
    return record
