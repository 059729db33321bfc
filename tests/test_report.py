"""The report: the run's summary, every manifest entry in document order (built ones with caption,
data source and claim verdicts; the rest listed with their status), tables as tables, and LaTeX
fragments shown as symbols."""

import datetime
import json
import os
import subprocess

import matplotlib.pyplot as plt
import pytest

from linearlens.claims import ClaimCheck, read_claims, write_claims
from linearlens.figures.style import save_figure
from linearlens.manifests.entries import ILLUSTRATIVE, NOT_BUILT, Entry
from linearlens.report import (
    NOT_CONFIGURED,
    RunSummary,
    benchmark_seconds,
    build_report,
    config_digest,
    describe_duration,
    document_inventory,
    git_commit,
    invocation_start,
    latex_to_html,
    run_summary,
)

TELESCOPING = [
    Entry("fig_10", "Double descent on MNIST-1D"),
    Entry("fig_2", "Approximation error"),
    Entry("fig_3", "Double descent on cat vs dog"),
    Entry("fig_4", "Grokking", note="needs the grokking runs"),
    Entry("fig_5", "A photograph of the lab", status=ILLUSTRATIVE, note="a photograph: not drawn"),
    Entry("fig_6", "Mode connectivity", status=NOT_BUILT, note="the ResNet runs have not landed"),
    Entry("table_1", "Tree kernel ratios"),
]


def test_save_figure_writes_pdf_png_and_sidecar(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    png = tmp_path / "telescoping" / "figures" / "fig_2.png"
    save_figure(fig, png, "Approximation error", "digits — stand-in for MNIST")
    assert png.exists() and png.with_suffix(".pdf").exists()
    assert json.loads(png.with_suffix(".json").read_text())["data_source"].endswith("stand-in for MNIST")


# --- inventory ----------------------------------------------------------------------------------

def test_inventory_orders_entries_as_the_document_does_and_gives_each_its_status():
    built = ["results/telescoping/figures/fig_10.png", "results/telescoping/figures/fig_2.png",
             "results/telescoping/tables/table_1.csv"]
    inventory = document_inventory("telescoping", "Telescoping lens", TELESCOPING, built)
    status = {record["id"]: record["status"] for record in inventory["entries"]}
    assert [record["id"] for record in inventory["entries"]] == \
        ["fig_2", "fig_3", "fig_4", "fig_5", "fig_6", "fig_10", "table_1"]
    assert status == {"fig_2": "built", "fig_10": "built", "table_1": "built", "fig_3": NOT_CONFIGURED,
                      "fig_4": NOT_CONFIGURED, "fig_5": ILLUSTRATIVE, "fig_6": NOT_BUILT}
    fig_6 = next(record for record in inventory["entries"] if record["id"] == "fig_6")
    assert fig_6 == {"id": "fig_6", "label": "Fig 6", "kind": "figure", "title": "Mode connectivity",
                     "section": "", "status": NOT_BUILT, "note": "the ResNet runs have not landed",
                     "path": "results/telescoping/figures/fig_6.png"}


def test_inventory_orders_chapters_before_appendices_and_shows_unlisted_targets():
    entries = [Entry("fig_B_1", "appendix"), Entry("fig_5_10", "late"), Entry("fig_5_2", "early")]
    built = ["results/karp_thesis/figures/fig_5_2.png", "results/karp_thesis/figures/fig_5_3.png"]
    records = document_inventory("karp_thesis", "Karp thesis", entries, built)["entries"]
    assert [record["id"] for record in records] == ["fig_5_2", "fig_5_3", "fig_5_10", "fig_B_1"]
    assert records[1]["status"] == "built" and records[1]["label"] == "Fig 5.3"  # not in the manifest yet
    assert records[1]["note"] and records[1]["path"] == built[1]




def test_inventory_and_config_digest_ignore_key_and_list_order():
    """What the report rule passes as params: the same content in another order reruns nothing."""
    built = ["results/telescoping/figures/fig_2.png", "results/telescoping/figures/fig_10.png"]
    assert repr(document_inventory("telescoping", "T", TELESCOPING, built)) == \
        repr(document_inventory("telescoping", "T", list(reversed(TELESCOPING)), list(reversed(built))))
    config = {"scale": "quick", "datasets": {"a": {"n": 1, "m": [1, 2]}, "b": {}}}
    reordered = {"datasets": {"b": {}, "a": {"m": [1, 2], "n": 1}}, "scale": "quick"}
    assert config_digest(config) == config_digest(reordered)
    assert len(config_digest(config)) == 12 and int(config_digest(config), 16) >= 0
    assert config_digest(config) != config_digest({**config, "scale": "paper"})


# --- LaTeX fragments ----------------------------------------------------------------------------

@pytest.mark.parametrize("latex, html", [
    ("∇f_{θ_{t−1}}(x)ᵀΔθ_t", "∇f<sub>θ<sub>t−1</sub></sub>(x)ᵀΔθ<sub>t</sub>"),
    (r"\alpha + x^{2}", "α + x<sup>2</sup>"),
    (r"\mathbb{E}[\ell]", "𝔼[ℓ]"),
    (r"$\nabla f_{\theta_0}(x)^\top \Delta\theta_{1}$", "∇f<sub>θ<sub>0</sub></sub>(x)<sup>⊤</sup> Δθ<sub>1</sub>"),
    (r"\sum_{i=1}^{n} \lambda_i \le \infty", "∑<sub>i=1</sub><sup>n</sup> λ<sub>i</sub> ≤ ∞"),
    (r"a \cdot b \approx c \in \mathcal{D}_\mathrm{train}", "a · b ≈ c ∈ D<sub>train</sub>"),
    (r"\frac{a+b}{2} and \frac{1}{n}", "(a+b)/2 and 1/n"),
    (r"\tilde{f} \ge \omega \geq \Theta", "f̃ ≥ ω ≥ Θ"),
    ("final p^test < final p^train", "final p<sup>test</sup> &lt; final p<sup>train</sup>"),
    ("fig_3 from digits_3v5_tiny and __init__", "fig_3 from digits_3v5_tiny and __init__"),  # identifiers stay
    (r"100\% of \{x\} at 10^-3, \unknown", "100% of {x} at 10<sup>-3</sup>, unknown"),
    ("<script>x_1</script>", "&lt;script&gt;x<sub>1</sub>&lt;/script&gt;"),  # the rest is escaped
])
def test_latex_fragments_read_as_symbols(latex, html):
    assert str(latex_to_html(latex)) == html


# --- the run ------------------------------------------------------------------------------------

def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


def test_commit_is_read_at_run_time_and_marks_uncommitted_changes(tmp_path):
    assert git_commit(tmp_path) == "not a git checkout"
    _git(tmp_path, "init", "-q")
    (tmp_path / "Snakefile").write_text("a\n")
    _git(tmp_path, "add", "Snakefile")
    _git(tmp_path, "commit", "-q", "-m", "first")
    commit = git_commit(tmp_path)
    assert len(commit) == 40
    (tmp_path / "untracked.txt").write_text("not part of the checkout\n")
    assert git_commit(tmp_path) == commit  # untracked files do not count
    (tmp_path / "Snakefile").write_text("b\n")
    assert git_commit(tmp_path) == f"{commit} (uncommitted changes)"


def test_wall_time_starts_at_the_newest_snakemake_log(tmp_path):
    logs = tmp_path / ".snakemake" / "log"
    logs.mkdir(parents=True)
    now = datetime.datetime(2026, 11, 24, 23, 54, 35)
    (logs / "2026-11-20T101010.000001.snakemake.log").write_text("")
    newest = logs / "2026-11-24T235056.481776.snakemake.log"
    newest.write_text("")
    (logs / "2026-11-24T235000.snakemake.log").write_text("")  # microseconds 0: isoformat drops them
    os.utime(newest, (now.timestamp(), now.timestamp()))
    assert invocation_start(logs, now) == datetime.datetime(2026, 11, 24, 23, 50, 56, 481776)
    assert invocation_start(logs, now + datetime.timedelta(hours=1)) is None  # an earlier run's log
    assert invocation_start(tmp_path / "absent", now) is None


def test_job_time_sums_the_benchmark_files(tmp_path):
    rules = tmp_path / "results" / "benchmarks" / "rules"
    header = "s\th:m:s\tmax_rss\n"
    (rules / "prepare_dataset").mkdir(parents=True)
    (rules / "prepare_dataset" / "a.tsv").write_text(header + "22.5\t0:00:22\t1.0\n")
    (rules / "prepare_dataset" / "b.tsv").write_text(header + "10\t0:00:10\t1.0\n7.5\t0:00:07\t1.0\n")
    (rules / "prepare_dataset" / "broken.tsv").write_text("")
    assert benchmark_seconds(rules) == (40.0, 2)
    assert benchmark_seconds(tmp_path / "none") == (None, 0)
    run = run_summary(tmp_path, tmp_path, "abc123abc123")
    assert run == RunSummary("not a git checkout", "abc123abc123", None, 40.0, 2)
    assert [describe_duration(s) for s in (None, 4.4, 245, 7385)] == ["unknown", "4 s", "4 min 05 s", "2 h 03 min"]


# --- the page -----------------------------------------------------------------------------------

def write_fixture_results(root):
    """Two figures, a table and a claims file under ``root``, as the workflow writes them."""
    for name, caption in (("fig_2", r"Approximation error of f_{\theta_t}"),
                          ("fig_10", "Double descent on MNIST-1D")):
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.plot([0, 1, 2], [2, 0, 1])
        save_figure(fig, root / "results" / "telescoping" / "figures" / f"{name}.png", caption,
                    "digits 1 vs 7 — stand-in for CIFAR-10 cat vs dog")
    tables = root / "results" / "telescoping" / "tables"
    tables.mkdir(parents=True)
    (tables / "table_1.csv").write_text("dataset,ratio,n\nhouses,0.123456,100\n<b>bold</b>,2.5,7\n")
    (tables / "table_1.json").write_text(json.dumps(
        {"figure": "table_1", "caption": r"Ratios \alpha of the tree kernel", "data_source": "OpenML houses"}))
    claims = root / "results" / "telescoping" / "claims.json"
    write_claims(claims, "telescoping", "quick", [
        ClaimCheck("C2", "fig_2", r"error falls as \eta falls", "rank ρ < −0.5", -0.9, True),
        ClaimCheck("C3", "fig_3", "test error peaks at the threshold", "peak within 2x", 3.7, False),
        ClaimCheck("C10", "fig_10", "p_test < p_train", "past threshold", None, None, note="no run past the threshold"),
        ClaimCheck("T1", "table_1", "trees beat the net", "ratio < 1", 0.12, True),
    ])
    assert read_claims(claims)["checks"][1].measured == 3.7
    provenance = root / "results" / "data" / "digits_1v7.json"
    provenance.parent.mkdir(parents=True)
    provenance.write_text(json.dumps({
        "source_description": "scikit-learn digits", "standin_for": "CIFAR-10 cat vs dog",
        "transforms": [{"step": "select_classes"}], "files": {},
    }))
    return claims, provenance


def fixture_report(root, run=None):
    """Build the report from the fixture results, as the report job does (paths relative to ``root``)."""
    claims, provenance = write_fixture_results(root)
    built = ["results/telescoping/figures/fig_2.png", "results/telescoping/figures/fig_10.png",
             "results/telescoping/tables/table_1.csv"]
    documents = [document_inventory("telescoping", "Telescoping lens", TELESCOPING, built),
                 document_inventory("karp_thesis", "Karp thesis", [], [])]
    out = root / "results" / "report" / "index.html"
    cwd = os.getcwd()
    os.chdir(root)
    try:
        build_report("results/report/index.html", documents,
                     {"telescoping": "results/telescoping/claims.json", "karp_thesis": None},
                     ["results/data/digits_1v7.json"], "quick", run)
    finally:
        os.chdir(cwd)
    return out


def test_report_shows_every_entry_in_order_with_verdicts_and_provenance(tmp_path):
    run = RunSummary("0123abcd (uncommitted changes)", "46fc083e8c67", 125.0, 3723.0, 12)
    html = fixture_report(tmp_path, run).read_text()
    body = html.split('id="telescoping"', 1)[1]
    assert body.index('id="telescoping-fig_2"') < body.index('id="telescoping-fig_3"') \
        < body.index('id="telescoping-fig_10"') < body.index('id="telescoping-table_1"')
    assert 'src="../telescoping/figures/fig_2.png"' in html
    assert "Approximation error of f<sub>θ<sub>t</sub></sub>" in html  # captions read as symbols
    assert "error falls as η falls" in html
    assert "stand-in for CIFAR-10 cat vs dog" in html and "select_classes()" in html
    assert "fails" in html and "3.7" in html  # a failing claim is shown failing, with its number
    assert "not evaluated" in html
    assert "a photograph: not drawn" in html and "the ResNet runs have not landed" in html
    assert html.count(NOT_CONFIGURED) >= 2  # fig_3 and fig_4
    assert "No figures or tables listed for this document yet" in html  # Karp: empty but present
    assert html.index("Telescoping lens") < html.index("Karp thesis")
    # The summary: counts per document, then the run.
    assert "2 / 6" in html and "1 / 1" in html  # figures built / listed, tables built / listed
    assert '<span class="pass">2</span> / <span class="fail">1</span> / <span class="na">1</span>' in html
    assert "0123abcd (uncommitted changes)" in html and "46fc083e8c67" in html
    assert "2 min 05 s" in html and "1 h 02 min" in html and "12 benchmark files" in html
    # The contents link every entry.
    assert all(f'href="#telescoping-{name}"' in html for name in ("fig_2", "fig_5", "fig_10", "table_1"))


def test_a_table_is_rendered_as_a_table_with_caption_and_source(tmp_path):
    html = fixture_report(tmp_path).read_text()
    table = html.split('id="telescoping-table_1"', 1)[1].split("</section>", 1)[0]
    assert "Ratios α of the tree kernel" in table and "OpenML houses" in table
    assert 'class="dataframe data"' in table
    assert "<th>ratio</th>" in table and "<td>0.1235</td>" in table
    assert "&lt;b&gt;bold&lt;/b&gt;" in table  # cells are escaped
    assert "trees beat the net" in table  # its claim is shown with it
    assert "unknown" in html  # no run summary: the run's facts say unknown


# --- failure reasons and the fidelity table ------------------------------------------------------

def test_a_failing_check_carries_one_reason_from_the_fixed_list():
    assert ClaimCheck("X", "fig_2", "s", "c", 1.0, False).failure_reason == "disagrees"
    assert ClaimCheck("X", "fig_2", "s", "c", 1.0, False, "regime").reason == \
        "the run did not reach the regime the claim is about"
    # A reason named in advance counts only when the check fails.
    assert ClaimCheck("X", "fig_2", "s", "c", 1.0, True, "stand_in").failure_reason is None
    with pytest.raises(ValueError, match="failure_reason 'tired'"):
        ClaimCheck("X", "fig_2", "s", "c", 1.0, False, "tired")
    with pytest.raises(ValueError, match="must say why"):
        ClaimCheck("X", "fig_2", "s", "c", None, None)


def test_report_shows_reasons_thresholds_and_the_fidelity_table(tmp_path):
    claims, _ = write_fixture_results(tmp_path)
    record = read_claims(claims)
    record["checks"] += [
        ClaimCheck("C4", "fig_3", "a second descent", "test MSE falls past the peak", 0.2, False, "regime",
                   note="quick runs stop at 100% train accuracy", document_threshold="500 epochs"),
        ClaimCheck("C5", "fig_6", "modes connect", "barrier < 1%", None, None, note="no ResNet at this scale"),
    ]
    write_claims(claims, "telescoping", "quick", record["checks"])
    documents = [document_inventory("telescoping", "Telescoping lens", [
        Entry("fig_2", "Approximation error", "Section 4"), Entry("fig_3", "Double descent", "Section 5"),
        Entry("fig_6", "Mode connectivity", "Section 5", status=NOT_BUILT, note="not landed"),
        Entry("fig_10", "Double descent on MNIST-1D", "Section 5"), Entry("table_1", "Ratios", "Section 6"),
    ], ["results/telescoping/figures/fig_2.png", "results/telescoping/figures/fig_10.png",
        "results/telescoping/tables/table_1.csv"])]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        build_report("results/report/index.html", documents, {"telescoping": "results/telescoping/claims.json"},
                     [], "quick", None, "results/report/fidelity.md")
    finally:
        os.chdir(cwd)
    html = (tmp_path / "results" / "report" / "index.html").read_text()
    assert "the run did not reach the regime the claim is about" in html
    assert "document: 500 epochs" in html and "no ResNet at this scale" in html
    fidelity = (tmp_path / "results" / "report" / "fidelity.md").read_text().splitlines()
    rows = {line.split(" | ")[1]: line for line in fidelity if line.startswith("| telescoping")}
    # Section 4: C2 holds. Section 5: C3 disagrees, C4 regime, C5 and C10 not evaluated. Section 6: T1 holds.
    assert rows["Section 4"] == "| telescoping | Section 4 | 1 | 0 | 0 | 0 | 0 | 0 |"
    assert rows["Section 5"] == "| telescoping | Section 5 | 0 | 2 | 1 | 0 | 1 | 2 |"
    assert rows["Section 6"] == "| telescoping | Section 6 | 1 | 0 | 0 | 0 | 0 | 0 |"
