"""A rehearsal training job killed outright (SIGKILL: no chance to save on the way out, as when a
node dies or SLURM kills a job over its memory) resumes from its last saved state when the workflow
is unlocked and rerun with --rerun-incomplete, and the finished jobs upstream of it are not redone."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

import pytest

from test_workflow import SNAKEMAKE, job_counts, snakemake, workflow_copy

pytestmark = pytest.mark.workflow

CONFIGS = ("config/paper.yaml", "config/rehearsal.yaml")
RUN = "results/iterative_linearisation/runs/mini_batch/k1/seed0.csv"
STATE = "results/iterative_linearisation/state/mini_batch/k1/seed0.pt"
LOG = "results/logs/iterative_linearisation/mini_batch/k1/seed0.log"
DATA = "results/data/cifar10_standardised.npz"
STEPS = 120
# Long enough to be killed mid-run, saving its state every half second (command-line overrides:
# config/rehearsal.yaml keeps the rehearsal's own budgets).
OVERRIDES = f"""iterative_linearisation:
  experiments:
    mini_batch: {{steps: {STEPS}, eval_every: 40, state_every_s: 0.5}}
"""


def run_until_state_saved(workflow, overrides, timeout_s=120.0) -> None:
    """Start the job in its own process group and SIGKILL the whole group (snakemake and the job's
    script) as soon as the job's state file exists."""
    command = [SNAKEMAKE, "--cores", "1", "--configfile", *CONFIGS, str(overrides), "--", RUN]
    process = subprocess.Popen(command, cwd=workflow, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    deadline = time.monotonic() + timeout_s
    try:
        while not (workflow / STATE).exists():
            assert process.poll() is None, "the job ended before it saved a state"
            assert time.monotonic() < deadline, f"no state saved in {timeout_s:.0f} s"
            time.sleep(0.05)  # saves are atomic (save_checkpoint): the file, once there, is whole
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def test_a_killed_rehearsal_job_resumes_from_its_saved_state(tmp_path):
    workflow = workflow_copy(tmp_path)
    overrides = tmp_path / "resume.yaml"
    overrides.write_text(OVERRIDES)
    run_until_state_saved(workflow, overrides)
    assert not (workflow / RUN).exists() and (workflow / STATE).exists()
    data_written = (workflow / DATA).stat().st_mtime_ns

    # A killed snakemake leaves its lock: releasing it is the documented first step of a rerun.
    unlock = snakemake(workflow, "--unlock", "--configfile", *CONFIGS, str(overrides), "--", RUN)
    assert unlock.returncode == 0, unlock.stderr[-3000:]
    rerun = snakemake(workflow, "--cores", "1", "--rerun-incomplete", "--configfile", *CONFIGS, str(overrides),
                      "--", RUN, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    # (c) only the killed job ran again: the fixtures and the prepared data were kept
    assert job_counts(rerun.stderr) == {"iterative_linearisation_run": 1}
    assert (workflow / DATA).stat().st_mtime_ns == data_written
    # (a) it finished, and (b) from the state the killed job saved, not from step 0
    log = (workflow / LOG).read_text()
    resumed = re.search(r"resumed from \S+ at step (\d+)", log)
    assert resumed, log[-3000:]
    assert 0 < int(resumed[1]) < STEPS
    assert f"finished at step {STEPS}/{STEPS}" in log
    assert (workflow / RUN).exists() and not (workflow / STATE).exists()
