"""One owner of every path under results/: linearlens.paths spells them, nothing else does, and the
log and benchmark of a run derive from its output."""

import re
from pathlib import Path

import pytest

from linearlens import paths

ROOT = Path(__file__).resolve().parents[1]

RESULTS_PATH = re.compile(r"(?<![\w./-])results/")


def sources():
    """Every file that may name a path: rules, the Snakefile, the library, scripts, report template."""
    files = [ROOT / "Snakefile", *(ROOT / "rules").rglob("*.smk"), *(ROOT / "src").rglob("*.py"),
             *(ROOT / "src" / "linearlens" / "templates").glob("*")]
    return {str(path.relative_to(ROOT)): path.read_text() for path in files}


def test_only_the_paths_module_spells_a_results_path():
    spelling = {name for name, text in sources().items() if RESULTS_PATH.search(text)}
    assert spelling == {"src/linearlens/paths.py"}, "name results/ paths through linearlens.paths"


def test_the_results_path_pattern_finds_paths_and_nothing_else():
    assert RESULTS_PATH.search('log: "results/logs/x.log"') and RESULTS_PATH.search("f'results/{document}'")
    assert not RESULTS_PATH.search("the_results/ x") and not RESULTS_PATH.search("tmp/results/x")


def test_logs_and_benchmarks_derive_from_a_run_output():
    output = "results/george_thesis/runs/ch6/alignment/{family}/{setting}/seed{seed}_spectra.csv"
    assert paths.log_of(output) == "results/logs/george_thesis/ch6/alignment/{family}/{setting}/seed{seed}_spectra.log"
    assert paths.benchmark_of(output) == (
        "results/benchmarks/rules/george_thesis/ch6/alignment/{family}/{setting}/seed{seed}_spectra.tsv")
    with pytest.raises(ValueError, match="not a run output"):
        paths.log_of("results/george_thesis/figures/fig_6_2.png")
