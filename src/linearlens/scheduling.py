"""How Snakemake's own process schedules a local run. Only the Snakefile imports this (no job
does), so changing it reruns nothing."""

from __future__ import annotations


def event_driven_scheduling(workflow) -> None:
    """Have a local run select jobs only when a job ends; call it from the Snakefile's ``onstart``.

    Snakemake 9 caps the rate of job starts (--max-jobs-per-timespan, 100/1s by default) and, with
    the cap on, selects jobs again one timespan after every selection. Each finished job starts one
    more such timer chain, so late in the default run hundreds of chains re-ran job selection (which
    stats the inputs of every job it looks at) while both cores were busy. The cap guards a cluster
    scheduler against floods of submissions; a local run, whose jobs wait for free cores anyway, does
    not need it. Without it Snakemake selects jobs when a job finishes or fails, and exits as soon as
    the last one has (a pending timer holds the process for up to one timespan).

    Each selection then looks at every ready job (--scheduler-subsample off): a selection from a
    random few that cannot start now (GPU jobs while every GPU is busy, say) would leave a free core
    idle until the next job ends, where the timers used to draw another few within seconds.

    Runs that submit to a cluster (--profile profiles/slurm) keep the cap and the subsample.
    """
    scheduler = getattr(workflow, "scheduler", None)
    if workflow.local_exec and hasattr(scheduler, "job_rate_limiter") and hasattr(scheduler, "subsample"):
        scheduler.job_rate_limiter = None
        scheduler.subsample = None
