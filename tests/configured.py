"""The claim thresholds each shipped scale configures, as the manifests hand them to the claims jobs."""

from linearlens.config import load_scale


def claim_thresholds(document: str, scale: str = "quick", name: str | None = None) -> dict:
    """``document``'s ``claim_thresholds`` at ``scale``; only the ``name`` mapping when given."""
    thresholds = load_scale(scale)[document]["claim_thresholds"]
    return thresholds if name is None else thresholds[name]
