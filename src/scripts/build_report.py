"""Rule report: gather figures, claim verdicts and dataset provenance into one HTML page."""

from linearlens.report import build_report
from linearlens.workflow import logged_job

with logged_job(snakemake):  # noqa: F821 (snakemake is injected by the script directive)
    params = snakemake.params  # noqa: F821
    build_report(snakemake.output.html, params.papers, params.figures, params.claims,  # noqa: F821
                 list(snakemake.input.datasets), params.scale)  # noqa: F821
