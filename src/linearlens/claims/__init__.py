"""The papers' claims as checks over measured numbers, and the claims file each paper writes.

Each paper's claims file (``paths.claims``) holds one verdict per check for the scale that produced it; the
report reads it. A check that fails is written as failing, with its measured value and one reason
from ``FAILURE_REASONS``; a check not evaluated at this scale says why in its note.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

# Why a check fails, when it does: one of these, shown beside the verdict.
FAILURE_REASONS = {
    "regime": "the run did not reach the regime the claim is about",
    "stand_in": "stand-in data or model",
    "disagrees": "disagrees with the document",
}
# The same, in a word or two: the fidelity table's column heads.
FAILURE_LABELS = {"regime": "regime not reached", "stand_in": "stand-in", "disagrees": "disagrees"}
VERDICTS = {True: "holds", False: "fails", None: "not evaluated"}


@dataclass(frozen=True)
class ClaimCheck:
    claim_id: str  # e.g. "C3", as numbered in the paper's spec
    figure: str  # the figure target it belongs to, e.g. "fig_3"
    statement: str  # what the paper says
    check: str  # the test applied, with its threshold
    measured: float | str | None  # the number the verdict rests on
    passed: bool | None  # None when the check could not be evaluated at this scale
    # A key of FAILURE_REASONS. A check may name the reason it would fail for at this scale (a
    # stand-in model, say) whatever its outcome; it is kept only when the check fails, and a failing
    # check that names none disagrees with the document.
    failure_reason: str | None = None
    # Why the check is not evaluated; or why this scale's threshold differs from the document's.
    note: str = ""
    # The document's own threshold, where the check applies another (shown beside it).
    document_threshold: str = ""

    def __post_init__(self):
        if self.failure_reason is not None and self.failure_reason not in FAILURE_REASONS:
            raise ValueError(f"claim {self.claim_id}: failure_reason {self.failure_reason!r} is not one of "
                             f"{sorted(FAILURE_REASONS)}")
        if self.passed is None and not self.note:
            raise ValueError(f"claim {self.claim_id} ({self.figure}): a check not evaluated must say why in its note")
        reason = (self.failure_reason or "disagrees") if self.passed is False else None
        object.__setattr__(self, "failure_reason", reason)

    @property
    def verdict(self) -> str:
        return VERDICTS[self.passed]

    @property
    def reason(self) -> str:
        """The failure reason in words; empty unless the check fails."""
        return FAILURE_REASONS[self.failure_reason] if self.failure_reason else ""


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
