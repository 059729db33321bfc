"""The papers' claims as checks over measured numbers, and the claims file each paper writes.

``results/<paper>/claims.json`` holds one verdict per check for the scale that produced it; the
report reads it. A check that fails is written as failing, with its measured value.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd


@dataclass(frozen=True)
class ClaimCheck:
    claim_id: str  # e.g. "C3", as numbered in the paper's spec
    figure: str  # the figure target it belongs to, e.g. "fig_3"
    statement: str  # what the paper says
    check: str  # the test applied, with its threshold
    measured: float | str | None  # the number the verdict rests on
    passed: bool | None  # None when the check could not be evaluated at this scale


def write_claims(path: str | Path, paper: str, scale: str, checks: list[ClaimCheck]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"paper": paper, "scale": scale, "checks": [asdict(check) for check in checks]}
    path.write_text(json.dumps(record, indent=2) + "\n")


def read_claims(path: str | Path) -> dict:
    record = json.loads(Path(path).read_text())
    record["checks"] = [ClaimCheck(**check) for check in record["checks"]]
    return record


def rank_correlation(curve: pd.Series) -> float:
    """Spearman ρ between a curve's index and its values: how monotone the trend is."""
    return float(pd.Series(curve.index.to_numpy()).corr(pd.Series(curve.to_numpy()), method="spearman"))
