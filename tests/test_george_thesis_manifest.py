"""George thesis manifest: every figure the thesis captions, in thesis order, with its drawings drawn, and
one module per chapter in each of the thesis packages."""

import importlib
import json
from pathlib import Path

import pytest

from linearlens.manifests.entries import BUILT, ILLUSTRATIVE, NOT_BUILT, document_order
from linearlens.manifests.george_thesis import ENTRIES

# Figures per chapter and appendix, counted from the captions in the thesis body (its List of Figures
# misses 16): the captions restart at "Figure 1." in each chapter and appendix.
FIGURES_PER_PART = {"2": 2, "3": 7, "4": 6, "5": 4, "6": 6, "A": 5, "B": 8, "C": 9}
SECTION_OF_PART = {part: f"Chapter {part}" if part.isdigit() else f"Appendix {part}" for part in FIGURES_PER_PART}
THESIS_PACKAGES = ["experiments", "figures", "claims", "analysis"]
SOURCE = Path(__file__).resolve().parents[1] / "src" / "linearlens"

EXPECTED_IDS = [f"fig_{part}_{k}" for part, count in FIGURES_PER_PART.items() for k in range(1, count + 1)]
DRAWINGS = [entry for entry in ENTRIES if entry.status == BUILT and entry.inputs is None]
# Appendix figures live with their chapter: A with chapter 4, B with chapter 6, C with chapter 5.
CHAPTER_OF_PART = {**{part: part for part in FIGURES_PER_PART if part.isdigit()}, "A": "4", "B": "6", "C": "5"}


def test_the_manifest_lists_every_captioned_figure_once_in_thesis_order():
    ids = [entry.id for entry in ENTRIES]
    assert len(EXPECTED_IDS) == 47
    assert len(set(ids)) == len(ids)
    assert ids == EXPECTED_IDS
    assert ids == sorted(ids, key=document_order)


def test_each_entry_sits_in_its_chapter_or_appendix():
    for entry in ENTRIES:
        assert entry.section == SECTION_OF_PART[entry.id.split("_")[1]], entry.id
        assert entry.title, entry.id


def test_unbuilt_figures_name_the_issue_that_builds_them():
    for entry in ENTRIES:
        if entry.status == NOT_BUILT:
            assert entry.note.startswith("issue "), entry.id
        if entry.status == ILLUSTRATIVE:
            assert entry.note, entry.id  # what it is and why it is not drawn


def test_each_built_figure_is_plotted_by_its_chapters_figure_module():
    for entry in ENTRIES:
        if entry.status == BUILT:
            module_name, function_name = entry.plot.split(":")
            assert module_name == f"linearlens.figures.george_thesis.ch{CHAPTER_OF_PART[entry.id.split('_')[1]]}"
            assert callable(getattr(importlib.import_module(module_name), function_name)), entry.id


@pytest.mark.parametrize("entry", DRAWINGS, ids=lambda entry: entry.id)
def test_each_drawing_writes_png_pdf_and_json(entry, tmp_path):
    module_name, function_name = entry.plot.split(":")
    draw = getattr(importlib.import_module(module_name), function_name)
    png = tmp_path / f"{entry.id}.png"
    draw(png)
    for suffix in (".png", ".pdf", ".json"):
        assert png.with_suffix(suffix).stat().st_size > 0, suffix
    sidecar = json.loads(png.with_suffix(".json").read_text())
    assert sidecar["figure"] == entry.id
    assert sidecar["data_source"] == "a drawing (no data)"
    assert sidecar["caption"].startswith(f"{entry.label}:")




@pytest.mark.parametrize("layer", THESIS_PACKAGES)
def test_thesis_packages_have_one_module_per_chapter(layer):
    package = SOURCE / layer / "george_thesis"
    modules = sorted(path.name for path in package.glob("*.py"))
    assert modules == ["__init__.py", "ch2.py", "ch3.py", "ch4.py", "ch5.py", "ch6.py"]


def test_generated_rules_are_named_by_document_chapter_verb_and_figure():
    from linearlens.config import load_scale
    from linearlens.manifests import george_thesis, iterative_linearisation
    from linearlens.manifests.generated import built_entries, entry_rule_name

    entries = {entry.id: entry for entry in built_entries(george_thesis, load_scale("quick")["george_thesis"])}
    assert entry_rule_name("george_thesis", entries["fig_6_2"]) == "george_thesis_ch6_plot_fig_6_2"
    drawn = next(entry for entry in iterative_linearisation.ENTRIES if entry.plot and not entry.inputs)
    assert entry_rule_name("iterative_linearisation", drawn) == f"iterative_linearisation_draw_{drawn.id}"


def test_each_thesis_chapter_holds_its_appendix():
    from linearlens.manifests import george_thesis, karp_thesis
    from linearlens.manifests.generated import chapters, entry_chapter

    assert chapters(george_thesis) == ["ch2", "ch3", "ch4", "ch5", "ch6"]
    assert chapters(karp_thesis) == ["ch2", "ch3", "ch4", "ch5"]
    appendix = {"george_thesis": {"A": "ch4", "B": "ch6", "C": "ch5"}, "karp_thesis": {"A": "ch2", "B": "ch3", "C": "ch5"}}
    for document, manifest in [("george_thesis", george_thesis), ("karp_thesis", karp_thesis)]:
        for entry in manifest.ENTRIES:
            if entry_chapter(entry):
                number = entry.id.split("_")[1]
                assert entry_chapter(entry) == appendix[document].get(number, f"ch{number}"), entry.id
