"""Parameters in a canonical form. Snakemake decides whether a job's params changed by comparing
their ``repr``; a dict's repr follows its key order, so a config with the same content in another
order (a YAML tool's rewrite, a merged user config) would rerun every job. Standard library only:
jobs unpickle these objects in every environment."""

from __future__ import annotations


class CanonicalDict(dict):
    """A dict whose repr lists its keys sorted; iteration keeps the config's order, so a figure
    still draws its settings in the order the config gives them."""

    def __repr__(self) -> str:
        items = sorted(self.items(), key=lambda item: repr(item[0]))
        return "{" + ", ".join(f"{key!r}: {value!r}" for key, value in items) + "}"


def canonical(value):
    """``value`` with every dict inside it (at any depth) a CanonicalDict."""
    if isinstance(value, dict):
        return CanonicalDict((key, canonical(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(canonical(item) for item in value)
    return value
