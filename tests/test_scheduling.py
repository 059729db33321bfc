"""Snakemake's own process: a local run selects jobs when a job ends, not on the job-rate timers
(linearlens.scheduling); a cluster run keeps its submission cap."""

import inspect
import subprocess
import time
from types import SimpleNamespace

import pytest

from linearlens.scheduling import event_driven_scheduling
from test_workflow import snakemake, workflow_copy


def fake_workflow(local_exec):
    return SimpleNamespace(local_exec=local_exec, scheduler=SimpleNamespace(job_rate_limiter="100/5s", subsample=16))


def test_a_local_run_drops_the_job_rate_limit_and_sees_every_ready_job():
    workflow = fake_workflow(local_exec=True)
    event_driven_scheduling(workflow)
    assert workflow.scheduler.job_rate_limiter is None
    assert workflow.scheduler.subsample is None


def test_a_cluster_run_keeps_its_submission_cap():
    workflow = fake_workflow(local_exec=False)
    event_driven_scheduling(workflow)
    assert (workflow.scheduler.job_rate_limiter, workflow.scheduler.subsample) == ("100/5s", 16)


def test_snakemake_still_has_what_the_hook_switches_off():
    """A Snakemake upgrade that renames either attribute would silently bring the timers back."""
    from snakemake.scheduling.job_scheduler import JobScheduler

    source = inspect.getsource(JobScheduler.__init__)
    assert "self.job_rate_limiter = " in source and "self.subsample = " in source


def test_a_snakemake_without_the_limiter_is_left_alone():
    workflow = SimpleNamespace(local_exec=True, scheduler=SimpleNamespace())
    event_driven_scheduling(workflow)
    assert not hasattr(workflow.scheduler, "job_rate_limiter")


@pytest.mark.workflow
def test_the_workflow_starts_each_job_when_the_last_ends(tmp_path):
    """Two drawings on one core under a cap of one job start per 120 s: with the rate timers the
    second would wait for the first's timespan to pass (over 120 s); event-driven, it starts as
    soon as the first ends, and Snakemake exits without waiting for a pending timer."""
    drawings = ["results/telescoping/figures/fig_1.png", "results/iterative_linearisation/figures/fig_1.png"]
    workdir = workflow_copy(tmp_path)
    start = time.monotonic()
    try:
        result = snakemake(workdir, *drawings, "--cores", "1", "--configfile", "config/smoke.yaml",
                           "--max-jobs-per-timespan", "1/120s", timeout=100)
    except subprocess.TimeoutExpired:
        pytest.fail("the second job waited for Snakemake's job-rate timer")
    assert result.returncode == 0, result.stderr[-3000:]
    assert all((workdir / drawing).is_file() for drawing in drawings)
    assert time.monotonic() - start < 100
