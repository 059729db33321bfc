"""Families of runs as the configs write them: keys shared by every run, and named settings that
override them."""

from __future__ import annotations


def family_runs(family: dict) -> dict[str, dict]:
    """{setting: full run spec} of a family of runs: the family's shared keys, each setting's keys
    on top (its ``model`` keys merged into the shared model). A family with ``widths`` instead of
    settings is a width sweep of a one-hidden-layer model."""
    shared = {k: v for k, v in family.items() if k not in ("settings", "seeds", "dataset", "main", "widths")}
    settings = family.get("settings") or {
        f"width{width}": {"label": f"{width} hidden units", "model": {"hidden": [width]}}
        for width in family["widths"]}  # a width sweep (double descent)
    runs = {}
    for name, setting in settings.items():
        run = {**shared, **{k: v for k, v in setting.items() if k != "model"}}
        run["model"] = {**shared["model"], **setting.get("model", {})}
        runs[name] = run
    return runs
