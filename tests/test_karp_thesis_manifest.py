"""The Karp thesis manifest lists exactly the thesis's figures and tables, its drawings draw, and
its packages have a module for every chapter."""

import importlib
import json
from pathlib import Path

import pytest

from linearlens.manifests.entries import BUILT, ILLUSTRATIVE, NOT_BUILT, sorted_entries
from linearlens.manifests.karp_thesis import ENTRIES

# Counted in the thesis text (captions and the lists of figures and tables): chapters 1 and 6
# have none; appendix A holds chapter 2's extra figures, B and C one or two tables each.
FIGURES_PER_CHAPTER = {"2": 4, "3": 5, "4": 1, "5": 4, "A": 15}
TABLES_PER_CHAPTER = {"2": 1, "3": 1, "5": 2, "B": 1, "C": 2}
# The issue that builds each chapter's data figures and tables (appendices with their chapter).
ISSUE_PER_CHAPTER = {"2": 25, "A": 25, "3": 28, "B": 28, "4": 28, "5": 29, "C": 29}

SOURCE = Path(__file__).resolve().parents[1] / "src" / "linearlens"
THESIS_PACKAGES = [SOURCE / layer / "karp_thesis"
                   for layer in ("experiments", "figures", "claims", "analysis")]


def _expected_ids(kind: str, counts: dict[str, int]) -> set[str]:
    return {f"{kind}_{chapter}_{number}"
            for chapter, count in counts.items() for number in range(1, count + 1)}


def _chapter(entry_id: str) -> str:
    return entry_id.split("_")[1]


def test_every_figure_and_table_of_the_thesis_once():
    ids = [entry.id for entry in ENTRIES]
    assert len(ids) == len(set(ids)) == 36
    assert {i for i in ids if i.startswith("fig_")} == _expected_ids("fig", FIGURES_PER_CHAPTER)
    assert {i for i in ids if i.startswith("table_")} == _expected_ids("table", TABLES_PER_CHAPTER)
    assert sum(FIGURES_PER_CHAPTER.values()) == 29 and sum(TABLES_PER_CHAPTER.values()) == 7


def test_entries_in_thesis_order_with_their_section():
    assert [entry.id for entry in ENTRIES] == [entry.id for entry in sorted_entries(ENTRIES)]
    for entry in ENTRIES:
        chapter = _chapter(entry.id)
        assert entry.section == (f"Chapter {chapter}" if chapter.isdigit() else f"Appendix {chapter}")
        assert entry.title and "\n" not in entry.title


def test_each_status_says_what_happens_to_it():
    for entry in ENTRIES:
        if entry.status == BUILT:
            assert entry.plot and entry.plot.startswith("linearlens.figures.karp_thesis.ch"), entry.id
        elif entry.status == NOT_BUILT:
            assert f"issue {ISSUE_PER_CHAPTER[_chapter(entry.id)]} (" in entry.note, entry.id
            assert entry.plot is None
        else:
            assert entry.status == ILLUSTRATIVE and entry.note and entry.plot is None, entry.id


@pytest.mark.parametrize("entry", [entry for entry in ENTRIES if entry.status == BUILT and entry.inputs is None],
                         ids=lambda entry: entry.id)
def test_built_drawing_writes_png_pdf_and_sidecar(entry, tmp_path):
    module, function = entry.plot.split(":")
    draw = getattr(importlib.import_module(module), function)
    draw(tmp_path / f"{entry.id}.png")
    for suffix in (".png", ".pdf", ".json"):
        assert (tmp_path / f"{entry.id}{suffix}").stat().st_size > 0
    sidecar = json.loads((tmp_path / f"{entry.id}.json").read_text())
    assert sidecar["figure"] == entry.id and sidecar["data_source"] == "a drawing (no data)"


def test_growth_drawing_follows_the_examples_of_section_5_2_1():
    from linearlens.figures.karp_thesis.ch5 import grown_layer_order

    def drawn(order):
        return [f"{layer}'" if is_new else str(layer) for layer, is_new in order]

    assert drawn(grown_layer_order(6, 3, 2, 1)) == ["1", "2", "2'", "3", "3'", "4", "4'", "5", "6"]
    assert drawn(grown_layer_order(6, 3, 2, 3)) == ["1", "2", "3", "4", "2'", "3'", "4'", "5", "6"]




def test_thesis_packages_have_every_chapter():
    for package in THESIS_PACKAGES:
        modules = {path.name for path in package.glob("*.py")}
        assert modules >= {"__init__.py", "ch2.py", "ch3.py", "ch4.py", "ch5.py"}, package
