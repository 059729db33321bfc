"""The report: figures grouped by paper with caption, data source and claim verdicts."""

import json

import matplotlib.pyplot as plt

from linearlens.claims import ClaimCheck, read_claims, write_claims
from linearlens.figures.style import save_figure
from linearlens.report import build_report

PAPERS = {"telescoping": "Telescoping lens", "karp_thesis": "Karp thesis"}


def test_save_figure_writes_pdf_png_and_sidecar(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    png = tmp_path / "telescoping" / "figures" / "fig_2.png"
    save_figure(fig, png, "Approximation error", "digits — stand-in for MNIST")
    assert png.exists() and png.with_suffix(".pdf").exists()
    assert json.loads(png.with_suffix(".json").read_text())["data_source"].endswith("stand-in for MNIST")


def test_report_shows_figures_verdicts_and_provenance(tmp_path):
    fig, _ = plt.subplots()
    png = tmp_path / "telescoping" / "figures" / "fig_3.png"
    save_figure(fig, png, "Double descent on cat vs dog", "digits 1 vs 7 — stand-in for CIFAR-10 cat vs dog")
    claims = tmp_path / "telescoping" / "claims.json"
    write_claims(claims, "telescoping", "quick", [
        ClaimCheck("C3", "fig_3", "test error peaks at the threshold", "peak within 2x", 3.7, False),
        ClaimCheck("C9", "fig_9", "p_test < p_train", "past threshold", None, None),
    ])
    assert read_claims(claims)["checks"][0].measured == 3.7
    provenance = tmp_path / "digits_1v7.json"
    provenance.write_text(json.dumps({
        "source_description": "scikit-learn digits", "standin_for": "CIFAR-10 cat vs dog",
        "transforms": [{"step": "select_classes"}], "files": {},
    }))
    out = tmp_path / "report" / "index.html"
    build_report(out, PAPERS, {"telescoping": [str(png)]}, {"telescoping": str(claims)},
                 [str(provenance)], scale="quick")
    html = out.read_text()
    assert "Double descent on cat vs dog" in html
    assert "select_classes()" in html  # each transform is listed with its parameters
    assert "stand-in for CIFAR-10 cat vs dog" in html
    assert "../telescoping/figures/fig_3.png" in html
    assert "fails" in html and "3.7" in html  # a failing claim is shown failing, with its number
    assert "not evaluated" in html  # fig_9 has no file; its check is still listed
    assert "No figures produced yet" in html  # the Karp section is empty but present
    assert html.index("Telescoping lens") < html.index("Karp thesis")
