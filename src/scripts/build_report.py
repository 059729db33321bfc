"""Rule report: gather figures, tables, claim verdicts and dataset provenance into one HTML page,
with what this job measures of its run (commit, wall time, job time)."""

from pathlib import Path

from linearlens.report import build_report, run_summary
from linearlens.workflow import logged_job

# Snakemake points __file__ at this script in the checkout; the commit is read from there.
CHECKOUT = Path(__file__).resolve().parents[2]

with logged_job(snakemake) as log:
    params = snakemake.params
    run = run_summary(CHECKOUT, Path.cwd(), params.config_digest)
    log.info("commit %s, config %s, wall time %s s, job time %s s over %d benchmark files",
             run.commit, run.config_digest, run.wall_seconds, run.job_seconds, run.benchmark_files)
    build_report(snakemake.output.html, params.documents, params.claims, list(snakemake.input.datasets),
                 params.scale, run, snakemake.output.fidelity)
