"""What rules/manifests.smk generates from a document's manifest, given the document's config: one
plot rule per figure this configuration builds, named so `grep` leads from the figure to its rule,
and one claims rule running the configured claim sets. Torch-free: the workflow reads it when it
builds the DAG; no job imports it."""

from __future__ import annotations

import re
from types import ModuleType

from .entries import BUILT, ClaimSet, Entry


def built_entries(manifest: ModuleType, document_config: dict) -> list[Entry]:
    """The entries of a document this configuration builds."""
    return [entry for entry in manifest.ENTRIES
            if entry.status == BUILT and entry.plot and entry.configured(document_config)]


def entry_rule_name(document: str, entry: Entry) -> str:
    """<document>_<chapter>_<verb>_<figure> for the theses (the chapter from the plot module), and
    <document>_<verb>_<figure> for the papers; the verb is draw (no data) or plot."""
    chapter = [entry_chapter(entry)] if entry_chapter(entry) else []
    return "_".join([document, *chapter, "plot" if entry.inputs else "draw", entry.id])


def configured_claim_sets(manifest: ModuleType, document_config: dict) -> list[ClaimSet]:
    return [claim_set for claim_set in getattr(manifest, "CLAIM_SETS", []) if claim_set.configured(document_config)]


def claim_set_files(manifest: ModuleType, document_config: dict) -> dict[tuple[int, str], tuple[str, list[str]]]:
    """{(set, input name): (input key, files)} of the document's configured claim sets. The files
    are the claims job's inputs, named by position (set<i>_<j>), and never its params; so which
    files, not the order the config lists them in, decides whether the claims rerun."""
    return {(i, name): (f"set{i}_{j}", files)
            for i, claim_set in enumerate(configured_claim_sets(manifest, document_config))
            for j, (name, files) in enumerate(claim_set.inputs(document_config).items())}


def claim_set_params(manifest: ModuleType, document_config: dict) -> list[dict]:
    """Each configured claim set's function, params and {input name: input key}."""
    files = claim_set_files(manifest, document_config)
    return [{"function": claim_set.function, "params": claim_set.params(document_config),
             "inputs": {name: key for (i_set, name), (key, _) in files.items() if i_set == i}}
            for i, claim_set in enumerate(configured_claim_sets(manifest, document_config))]


def claims_environment(manifest: ModuleType, document_config: dict) -> str:
    """torch when any claim set needs it, else the lighter report environment."""
    environments = {claim_set.environment for claim_set in configured_claim_sets(manifest, document_config)}
    return "torch" if "torch" in environments else "report"


def entry_chapter(entry: Entry) -> str | None:
    """The thesis chapter an entry belongs to, its appendix figures included: the module of its plot
    function ("ch4" for George's appendix A); None in a paper."""
    module = entry.plot.split(":")[0].rsplit(".", 1)[-1] if entry.plot else ""
    return module if re.fullmatch(r"ch\d+", module) else None


def chapters(manifest: ModuleType) -> list[str]:
    """A thesis's chapters with a figure or table to build, in order (each gets a target rule)."""
    found = {entry_chapter(entry) for entry in manifest.ENTRIES} - {None}
    return sorted(found, key=lambda chapter: int(chapter[2:]))
