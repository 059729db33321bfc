"""Reading run records: one CSV per run, many runs to a figure or a claim."""

from __future__ import annotations

import pandas as pd


def read_runs(paths, **read_csv_options) -> pd.DataFrame:
    """The records of every run in ``paths``, one frame with one index label per row (each file's
    labels start at 0, so kept labels would repeat and ``.loc`` would pick a row from every file)."""
    return pd.concat([pd.read_csv(path, **read_csv_options) for path in paths], ignore_index=True)


def last_records(records: pd.DataFrame, keys: list[str], order: str = "step") -> pd.DataFrame:
    """Each run's last record (largest ``order``), one row per ``keys``; chosen by position, so
    repeated index labels cannot pull in other runs' rows."""
    return records.sort_values(order, kind="stable").groupby(keys, sort=True).tail(1)
