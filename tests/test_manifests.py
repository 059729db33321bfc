"""Every manifest spells its plot, draw and claims functions whole, so that grep leads from a figure
id to its entry and from the entry to its function: no name built from the id at run time."""

import importlib
import inspect
import re

import pytest

from linearlens.manifests.entries import ClaimSet, Entry

DOCUMENTS = ["telescoping", "iterative_linearisation", "george_thesis", "karp_thesis"]


def spelt_whole(function: str, source: str, entry_id: str = "") -> bool:
    """Whether the source has the function's name as a whole string, or as the end of one after
    its module ("module:name", f"{MODULE}:name"). Where the function is named as its figure id
    (telescoping's fig_2), the id's own literal does not count: the name must be spelt once more."""
    spelt = len(re.findall(rf'[":]{re.escape(function)}"', source))
    return spelt > (1 if function == entry_id else 0)


def unspelt(entries, claim_sets, source: str) -> set[str]:
    """The entries (by id) and claim sets (by function) whose function the manifest's source does
    not spell whole."""
    functions = {entry.id: entry.plot for entry in entries if entry.plot}
    functions |= {claim_set.function: claim_set.function for claim_set in claim_sets}
    return {key for key, function in functions.items() if not spelt_whole(function.split(":")[1], source, key)}


def test_spelt_whole_finds_named_functions_and_not_built_ones():
    assert spelt_whole("plot_fig_6_2", 'group_figure("fig_6_2", plot="plot_fig_6_2")')
    assert spelt_whole("plot_fig_6_2", 'Entry("fig_6_2", plot=f"{FIGURES_CH6}:plot_fig_6_2")')
    assert not spelt_whole("plot_fig_6_2", 'Entry("fig_6_2", plot=f"{FIGURES_CH6}:plot_{figure_id}")')
    assert not spelt_whole("plot_fig_6_2", "# plot_fig_6_2 draws it")
    assert spelt_whole("fig_2", '_approximation("fig_2", "Approximation error", plot="fig_2")', "fig_2")
    assert not spelt_whole("fig_2", '_approximation("fig_2", "Approximation error")', "fig_2")


def test_an_entry_whose_function_is_built_from_its_id_is_unspelt():
    """The counter-example: a manifest that names one entry's function whole and builds the other's."""
    source = ('def spurious_figure(figure_id):\n    return Entry(figure_id, plot=f"{FIGURES_CH5}:plot_{figure_id}")\n'
              'ENTRIES = [spurious_figure("fig_5_3"), Entry("fig_5_4", plot=f"{FIGURES_CH5}:plot_fig_5_4")]\n'
              'CLAIM_SETS = [ClaimSet(f"{CLAIMS_CH5}:spurious_claims")]\n')
    entries = [Entry(figure, "a figure", plot=f"figures.ch5:plot_{figure}") for figure in ("fig_5_3", "fig_5_4")]
    claim_sets = [ClaimSet("claims.ch5:spurious_claims", inputs=lambda config: {})]
    assert unspelt(entries, claim_sets, source) == {"fig_5_3"}


@pytest.mark.parametrize("document", DOCUMENTS)
def test_each_plot_and_claims_function_is_spelt_whole_in_its_manifest(document):
    manifest = importlib.import_module(f"linearlens.manifests.{document}")
    unnamed = unspelt(manifest.ENTRIES, manifest.CLAIM_SETS, inspect.getsource(manifest))
    assert unnamed == set(), "name these functions whole in the manifest"
