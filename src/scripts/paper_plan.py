"""Rule paper_plan: the paper DAG's jobs, GPU-hours, peak GPU memory and downloads per document and
run family, from a dry run of config/paper.yaml in a scratch directory (see benchmarks.plan)."""

from pathlib import Path

from linearlens.benchmarks.plan import (
    PlanInputError,
    dry_run,
    markdown,
    parse_jobs,
    peak_memory_estimates,
    plan_table,
    read_measured,
)
from linearlens.config import load_scale
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    try:
        measured = read_measured(snakemake.input.measured[0] if snakemake.input.measured else None)
    except PlanInputError as error:
        log.error("%s", error)
        raise SystemExit(1) from None
    base, paper_overlay = map(Path, snakemake.input.config)
    jobs = parse_jobs(dry_run(Path(snakemake.input.snakefile).resolve(), paper_overlay.resolve()))
    table = plan_table(jobs, measured, peak_memory_estimates(load_scale("paper", base.parent)))
    table.to_csv(snakemake.output.table, index=False)
    text = markdown(table)
    Path(snakemake.output.markdown).write_text(text)
    print(text)
    log.info("the paper DAG's plan: %s and %s (GPU-hours from %d measured families)", snakemake.output.table,
             snakemake.output.markdown, int((table["source"] == "measured").sum()))
