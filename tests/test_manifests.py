"""Every manifest spells its plot, draw and claims functions whole, so that grep leads from a figure
id to its entry and from the entry to its function: no name built from the id at run time."""

import importlib
import inspect
import re

import pytest

DOCUMENTS = ["telescoping", "iterative_linearisation", "george_thesis", "karp_thesis"]

# Entries that still leave their function's name to their id (plot_<id>, draw_<id>): George's
# chapters 4 and 5, with appendices A and C, until their entries name it. The list only shrinks.
NAMED_BY_ID_YET = {
    "george_thesis": {*(f"fig_4_{n}" for n in range(1, 7)), *(f"fig_5_{n}" for n in range(1, 5)),
                      *(f"fig_A_{n}" for n in range(1, 6)), *(f"fig_C_{n}" for n in range(1, 10))},
}


def spelt_whole(function: str, source: str) -> bool:
    """Whether the source has the function's name as a whole string, or as the end of one after
    its module ("module:name", f"{MODULE}:name")."""
    return re.search(rf'[":]{re.escape(function)}"', source) is not None


def test_spelt_whole_finds_named_functions_and_not_built_ones():
    assert spelt_whole("plot_fig_6_2", 'group_figure("fig_6_2", plot="plot_fig_6_2")')
    assert spelt_whole("plot_fig_6_2", 'Entry("fig_6_2", plot=f"{FIGURES_CH6}:plot_fig_6_2")')
    assert not spelt_whole("plot_fig_6_2", 'Entry("fig_6_2", plot=f"{FIGURES_CH6}:plot_{figure_id}")')
    assert not spelt_whole("plot_fig_6_2", "# plot_fig_6_2 draws it")


@pytest.mark.parametrize("document", DOCUMENTS)
def test_each_plot_and_claims_function_is_spelt_whole_in_its_manifest(document):
    manifest = importlib.import_module(f"linearlens.manifests.{document}")
    source = inspect.getsource(manifest)
    functions = {entry.id: entry.plot for entry in manifest.ENTRIES if entry.plot}
    functions |= {claim_set.function: claim_set.function for claim_set in manifest.CLAIM_SETS}
    unnamed = {key for key, function in functions.items() if not spelt_whole(function.split(":")[1], source)}
    named_by_id = NAMED_BY_ID_YET.get(document, set())
    assert unnamed - named_by_id == set(), "name these functions whole in the manifest"
    assert named_by_id - unnamed == set(), "named whole now: take these off NAMED_BY_ID_YET"
