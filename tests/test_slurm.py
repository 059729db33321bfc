"""The SLURM profile end to end on a real SLURM: a single-node cluster on loopback
(tests/slurm/cluster.py) runs part of the smoke workflow with `--profile profiles/slurm`.

One interrupted run and its resumption (with one injected failure) are checked against `sacct`:
every planned job ran as a SLURM job under the account and partition from the environment, the
outputs equal a local run's byte for byte, the failed job was retried, and jobs Snakemake had
recorded as finished before the interruption were not run again. A run with `device: cuda` checks
the GPU requests.

The targets are a subset of the smoke DAG: the kernels (datasets, an init checkpoint and its NTK,
two tree ensembles and their kernels) and the approximation figures (three training runs, and two
local plot rules). That is every kind of job the profile treats differently (CPU, GPU-capable,
local) in 11 SLURM jobs; the whole smoke DAG is 35 SLURM jobs of the same kinds at about 15 s
each on two cores, over five minutes more.

Without Debian's SLURM, munge and MariaDB packages, or without root, the tests are skipped and say
why (.ci/run installs the packages). The daemons, snakemake and the SLURM commands all run in
subprocesses: this process opens no socket, so the suite's network block stays on here too; the
cluster talks over loopback only.
"""

import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from slurm.cluster import NAME, LocalSlurmCluster, unavailable_reason, wait_until
from test_workflow import SNAKEMAKE, dry_run_jobs, job_counts, snakemake, workflow_copy

pytestmark = [pytest.mark.workflow, pytest.mark.slurm]

TARGETS = ["kernels", "results/telescoping/figures/fig_1.png", "results/telescoping/figures/fig_2.png"]
SMOKE = ["--configfile", "config/smoke.yaml"]
# The profile as a user runs it; status checks start after 1 s instead of 40 s.
ON_SLURM = ["--profile", "profiles/slurm", "--slurm-init-seconds-before-status-checks", "1"]
PARTITIONS = {"SLURM_ACCOUNT": NAME, "SLURM_PARTITION": "cpu", "SLURM_GPU_PARTITION": "gpu"}
LOCAL_RULES = {"telescoping_draw_fig_1", "telescoping_plot_fig_2"}  # of the TARGETS' jobs
FAILS_ONCE = "extract_tree_kernel"  # three jobs deep: it cannot have run before the interruption
FAIL_ONCE_HOOK = Path(__file__).parent / "slurm" / "fail_once"
UNFINISHED = {"PENDING", "RUNNING", "COMPLETING", "REQUEUED", "RESIZING", "SUSPENDED"}  # sacct states
SACCT_FIELDS = ["JobID", "Partition", "Account", "State", "ExitCode", "Start", "End", "Elapsed", "ReqTRES",
                "Comment"]


@pytest.fixture(scope="module")
def cluster():
    reason = unavailable_reason()
    if reason:
        install_error = os.environ.get("LINEARLENS_SLURM_INSTALL_ERROR")
        pytest.skip(reason + (f" (.ci/run could not install them: {install_error})" if install_error else ""))
    root = Path(tempfile.mkdtemp(prefix="linearlens-slurm-"))  # short: unix socket paths live here
    local_cluster = LocalSlurmCluster(root)
    try:
        local_cluster.start()
        yield local_cluster
    finally:
        left_running = local_cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
    assert left_running == [], f"processes outlived the cluster's daemons: {left_running}"


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    workdir = workflow_copy(tmp_path_factory.mktemp("local"))
    result = snakemake(workdir, *TARGETS, "--cores", "2", *SMOKE)
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir


@dataclass
class SlurmRun:
    workdir: Path
    planned: dict[str, str]  # SLURM comment of each planned job -> its rule
    before_interrupt: list[dict]  # sacct rows of the interrupted run
    recorded_finished: set[str]  # SLURM comments of the jobs the interrupted run reported finished
    resumed: list[dict]  # sacct rows of the resumed run
    resumed_log: str


@pytest.fixture(scope="module")
def slurm_run(cluster, tmp_path_factory):
    """Interrupt a run once a job has finished, then resume it with one job failing once."""
    workdir = workflow_copy(tmp_path_factory.mktemp("slurm"))
    env = {**cluster.env, **PARTITIONS}
    planned = planned_jobs(workdir, env)
    before_interrupt, interrupted_log = interrupt_after_first_job(cluster, workdir, env)
    recorded_ids = set(finished_slurm_jobs(interrupted_log).values())
    recorded_finished = {row["Comment"] for row in before_interrupt if row["JobID"] in recorded_ids}
    fail_once = {"PYTHONPATH": str(FAIL_ONCE_HOOK), "LINEARLENS_FAIL_ONCE": f"{FAILS_ONCE}:{workdir / 'failed-once'}"}
    resumed = snakemake(workdir, *TARGETS, *ON_SLURM, *SMOKE, env={**env, **fail_once})
    assert resumed.returncode == 0, resumed.stderr[-5000:]
    resumed_rows = accounted_rows(cluster, resumed.stderr)
    print("\n" + sacct_listing(before_interrupt + resumed_rows))  # this run's record (pytest -s shows it)
    return SlurmRun(workdir, planned, before_interrupt, recorded_finished, resumed_rows, resumed.stderr)


def test_every_planned_job_ran_as_a_slurm_job_with_the_profiles_resources(slurm_run):
    rows = slurm_run.before_interrupt + slurm_run.resumed
    remote = {comment for comment, rule in slurm_run.planned.items() if rule not in LOCAL_RULES}
    local = {comment for comment, rule in slurm_run.planned.items() if rule in LOCAL_RULES}
    assert len(remote) == 11 and {row["Comment"] for row in rows} == remote
    assert len(local) == 2 and (slurm_run.workdir / "results/telescoping/figures/fig_2.png").exists()
    assert {row["State"] for row in slurm_run.resumed if FAILS_ONCE not in row["Comment"]} == {"COMPLETED"}
    assert {(row["Account"], row["Partition"]) for row in rows} == {(NAME, "cpu")}
    assert not any("gres/gpu" in row["ReqTRES"] for row in rows)  # the smoke config runs on the CPU


def test_outputs_equal_a_local_run(slurm_run, local_run):
    on_slurm, local = reproducible_outputs(slurm_run.workdir), reproducible_outputs(local_run)
    assert len(local) >= 20 and on_slurm == local


def test_a_job_that_fails_once_is_retried(slurm_run):
    states = [(row["Comment"], row["State"]) for row in slurm_run.resumed if FAILS_ONCE in row["Comment"]]
    failed = [comment for comment, state in states if state == "FAILED"]
    assert (slurm_run.workdir / "failed-once").exists() and len(failed) == 1, states
    assert (failed[0], "COMPLETED") in states[states.index((failed[0], "FAILED")) + 1:], states


def test_interrupted_run_resumes_without_rerunning_finished_jobs(slurm_run):
    """Jobs the interrupted run recorded as finished are not run again, and jobs it had not started
    all run. Jobs SLURM completed before Snakemake's next status check are left out: the run had
    not checked their outputs, and whether the resumed run redoes them depends on the interrupt's
    timing."""
    remote = {comment for comment, rule in slurm_run.planned.items() if rule not in LOCAL_RULES}
    not_started = remote - {row["Comment"] for row in slurm_run.before_interrupt}
    assert slurm_run.recorded_finished and not_started  # the interruption fell mid-run
    redone = slurm_run.recorded_finished & {row["Comment"] for row in slurm_run.resumed}
    assert not redone, (redone, rerun_reasons(slurm_run.resumed_log))
    assert not_started <= {row["Comment"] for row in slurm_run.resumed if row["State"] == "COMPLETED"}


def test_cuda_config_requests_gpus_in_the_gpu_partition(cluster, tmp_path):
    """Two training runs with `device: cuda`: each SLURM job asks for a GPU in the GPU partition,
    and the two run side by side (the local profile's one-GPU limit does not reach the cluster).
    The test node's GPUs are declared, not real: each job starts, then its training code stops at
    torch's missing CUDA device, which shows the device setting reached it."""
    workdir = workflow_copy(tmp_path)
    runs = [f"results/telescoping/runs/approximation/sgd/lr{lr}/seed0.csv" for lr in ("0.01", "0.1")]
    result = snakemake(workdir, *runs, *ON_SLURM, *SMOKE, "--config", "device=cuda", "--retries", "0",
                       "--keep-going", env={**cluster.env, **PARTITIONS})
    assert result.returncode != 0
    rows = accounted_rows(cluster, result.stderr)
    print("\n" + sacct_listing(rows))
    training = [row for row in rows if row["Comment"].startswith("rule_telescoping_approximation_run")]
    data = [row for row in rows if row["Comment"].startswith("rule_prepare_dataset")]
    assert len(training) == 2 and len(data) == 1 and data[0]["State"] == "COMPLETED"
    assert all(row["Partition"] == "gpu" and "gres/gpu=1" in row["ReqTRES"] for row in training)
    assert all(row["State"] == "FAILED" for row in training)
    for lr in ("0.01", "0.1"):
        log = workdir / f"results/logs/telescoping/approximation/sgd/lr{lr}/seed0.log"
        assert "torch sees no CUDA device" in log.read_text()
    assert data[0]["Partition"] == "cpu" and "gres/gpu" not in data[0]["ReqTRES"]
    first, second = sorted(training, key=lambda row: row["Start"])
    assert second["Start"] < first["End"], "the GPU jobs ran one after the other"


# --- helpers --------------------------------------------------------------------------------------


def planned_jobs(workdir, env):
    """{SLURM comment: rule} of every job a run of TARGETS would start, from a dry run. The
    executor comments each job `rule_<rule>` or `rule_<rule>_wildcards_<values joined by _>`."""
    result = snakemake(workdir, *TARGETS, *ON_SLURM, *SMOKE, "--dry-run", env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    planned = {}
    for rule, block in dry_run_jobs(result.stdout):
        if rule in TARGETS:
            continue
        wildcards = re.search(r"^\s+wildcards: (.+)$", block, re.MULTILINE)
        values = [pair.split("=", 1)[1] for pair in wildcards[1].split(", ")] if wildcards else []
        planned[f"rule_{rule}" + (f"_wildcards_{'_'.join(values)}".replace("/", "_") if values else "")] = rule
    assert sum(job_counts(result.stdout).values()) == len(planned) + 1  # + the `kernels` target
    return planned


def interrupt_after_first_job(cluster, workdir, env):
    """Start a run, press Ctrl-C once Snakemake reports a SLURM job finished, and return sacct's
    rows of the run and its log. (Snakemake's log says so once it has recorded the job's outputs;
    sacct records a job's end asynchronously.)"""
    log_path = workdir / "interrupted.log"
    with open(log_path, "w") as log:
        # Ctrl-C's default action in the child even when this process ignores SIGINT, as a shell
        # makes its background jobs do: ignored signals are inherited.
        run = subprocess.Popen([SNAKEMAKE, *TARGETS, *ON_SLURM, *SMOKE], cwd=workdir, env={**os.environ, **env},
                               stdout=log, stderr=subprocess.STDOUT,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        finished = wait_until(lambda: run.poll() is not None or finished_slurm_jobs(log_path.read_text()),
                              timeout=300)
        assert finished and run.poll() is None, log_path.read_text()[-3000:]
        run.send_signal(signal.SIGINT)
        run.wait(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    log = log_path.read_text()
    assert run.returncode != 0, log[-3000:]
    wait_until(lambda: not cluster.run("squeue", "--noheader").stdout.strip(), timeout=60)
    return accounted_rows(cluster, log), log


def reproducible_outputs(workdir):
    """{path: sha256} of the results a rerun reproduces bit for bit: all but logs, per-job timings,
    PDFs (which carry their creation date) and the stamps of the code records (source files' mtimes)."""
    results = workdir / "results"
    paths = [path.relative_to(results) for path in results.rglob("*") if path.is_file()]
    return {str(path): hashlib.sha256((results / path).read_bytes()).hexdigest() for path in sorted(paths)
            if path.suffix not in (".pdf", ".stamp") and path.parts[0] != "logs"
            and path.parts[:2] != ("benchmarks", "rules")}


def submitted_slurm_jobs(log: str) -> list[tuple[str, str]]:
    """(Snakemake job id, SLURM job id) of every submission a Snakemake log reports (a retried job
    is submitted again, under a new SLURM job id)."""
    return re.findall(r"Job (\d+) has been submitted with SLURM jobid (\d+)", log)


def finished_slurm_jobs(log: str) -> dict[str, str]:
    """{Snakemake job id: SLURM job id} of the SLURM jobs a Snakemake log reports finished (a
    retried job's last submission)."""
    submissions = dict(submitted_slurm_jobs(log))  # the last submission of each job wins
    return {job: submissions[job] for job in re.findall(r"Finished jobid: (\d+)", log) if job in submissions}


def rerun_reasons(log: str) -> list[tuple[str, str]]:
    """(rule, reason) of every job a Snakemake log reports starting."""
    return re.findall(r"^(?:local)?rule (\w+):\n(?:[ \t].*\n)*?\s+reason: (.*)$", log, re.MULTILINE)


def accounted_rows(cluster, log: str, timeout: float = 180) -> list[dict]:
    """sacct rows of the SLURM jobs a run's log reports submitting, in submission order, once
    accounting has recorded each one's end (slurmdbd records them asynchronously; on a loaded
    machine a minute late)."""
    ids = {slurm_job for _, slurm_job in submitted_slurm_jobs(log)}

    def rows():
        return sorted((row for row in cluster.sacct(SACCT_FIELDS) if row["JobID"] in ids),
                      key=lambda row: int(row["JobID"]))

    def recorded():
        known = rows()
        return len(known) == len(ids) and not any(row["State"] in UNFINISHED for row in known)

    assert wait_until(recorded, timeout, interval=1), f"sacct lacks jobs {sorted(ids)}: {rows()}"
    return rows()


def sacct_listing(rows):
    fields = ["JobID", "State", "Partition", "Account", "Elapsed", "ReqTRES", "Comment"]
    widths = {field: max(len(field), *(len(row[field]) for row in rows)) for field in fields}
    lines = [" ".join(field.ljust(widths[field]) for field in fields)]
    lines += [" ".join(row[field].ljust(widths[field]) for field in fields) for row in rows]
    return "\n".join(lines)
