"""Reading run records: one CSV per run, many runs to a figure or a claim."""

from __future__ import annotations

import pandas as pd


def read_runs(paths, **read_csv_options) -> pd.DataFrame:
    """The records of every run in ``paths``, one frame."""
    return pd.concat([pd.read_csv(path, **read_csv_options) for path in paths])
