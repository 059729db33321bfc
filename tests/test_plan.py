"""paper_plan: the paper DAG's jobs, GPU-hours, peak GPU memory and downloads per document and run
family. The unit tests read a small dry-run report in Snakemake's own format; one workflow test
plans the real paper DAG."""

import math

import pandas as pd
import pytest

from linearlens.benchmarks import plan
from linearlens.benchmarks.paper_costs import ESTIMATES, FAMILY_WILDCARDS
from linearlens.data.registry import DOWNLOAD_BYTES, SOURCES, download_bytes

# A dry run's report as `snakemake -n` prints it (Snakemake 9), cut to a few jobs: CIFAR-10's
# download shared by two documents, a device family in two groups, a job only the opt-in target needs.
REPORT = """Building DAG of jobs...
Job stats:
job                             count
----------------------------  -------
all                                 1
total                               9

[Sat Nov 28 05:46:31 2026]
rule download_file:
    output: resources/raw/cifar10/cifar-10-python.tar.gz
    log: results/logs/download_file/cifar10/cifar-10-python.tar.gz.log
    jobid: 2
    reason: Missing output files: resources/raw/cifar10/cifar-10-python.tar.gz
    wildcards: source=cifar10, filename=cifar-10-python.tar.gz
    resources: tmpdir=/tmp
Shell command: None

[Sat Nov 28 05:46:31 2026]
rule prepare_dataset:
    input: resources/raw/cifar10/cifar-10-python.tar.gz, ../src/scripts/prepare_dataset.py
    output: results/data/cifar10.npz, results/data/cifar10.json
    log: results/logs/prepare_dataset/cifar10.log
    jobid: 3
    wildcards: name=cifar10
    threads: 2
    resources: tmpdir=/tmp, mem_mb=8000, mem_mib=7630
Shell command: None

[Sat Nov 28 05:46:31 2026]
rule karp_thesis_ch3_run_images:
    input: results/data/cifar10.npz
    output: results/karp_thesis/runs/ch3/network/a.csv
    jobid: 4
    wildcards: model=network, variant=a
    threads: 2
    resources: tmpdir=/tmp, gpu=1
Shell command: None

[Sat Nov 28 05:46:31 2026]
rule karp_thesis_ch3_run_images:
    input: results/data/cifar10.npz
    output: results/karp_thesis/runs/ch3/network/b.csv
    jobid: 5
    wildcards: model=network, variant=b
    resources: tmpdir=/tmp, gpu=1
Shell command: None

[Sat Nov 28 05:46:31 2026]
rule karp_thesis_ch3_run_images:
    input: results/data/cifar10.npz
    output: results/karp_thesis/runs/ch3/linearisation/a.csv
    jobid: 6
    wildcards: model=linearisation, variant=a
    resources: tmpdir=/tmp, gpu=1
Shell command: None

[Sat Nov 28 05:46:31 2026]
rule george_thesis_ch3_ntk_pair:
    input: results/data/cifar10.npz
    output: results/george_thesis/runs/ch3/ntk_pair_0.json
    jobid: 7
    wildcards: epoch=0
    resources: tmpdir=/tmp, gpu=1
Shell command: None

[Sat Nov 28 05:46:31 2026]
rule karp_thesis_ch5_grow:
    input: results/data/cifar10.npz
    output: results/karp_thesis/runs/ch5/bert/0.csv
    jobid: 8
    wildcards: part=start0-b1-random, seed=0, setting=bert
    resources: tmpdir=/tmp, gpu=1
Shell command: None

[Sat Nov 28 05:46:31 2026]
localrule paper_karp_thesis:
    input: results/karp_thesis/runs/ch3/network/a.csv, results/karp_thesis/runs/ch3/network/b.csv, results/karp_thesis/runs/ch3/linearisation/a.csv
    jobid: 10
    resources: tmpdir=/tmp
Shell command: None

[Sat Nov 28 05:46:31 2026]
localrule paper_george_thesis:
    input: results/george_thesis/runs/ch3/ntk_pair_0.json, results/data/cifar10.npz
    jobid: 11
    resources: tmpdir=/tmp
Shell command: None

[Sat Nov 28 05:46:31 2026]
localrule paper_telescoping:
    jobid: 12
    resources: tmpdir=/tmp
Shell command: None

[Sat Nov 28 05:46:31 2026]
localrule paper_iterative_linearisation:
    jobid: 13
    resources: tmpdir=/tmp
Shell command: None

[Sat Nov 28 05:46:31 2026]
localrule paper_karp_thesis_unreleased:
    input: results/karp_thesis/runs/ch5/bert/0.csv
    jobid: 14
    resources: tmpdir=/tmp
Shell command: None

[Sat Nov 28 05:46:31 2026]
localrule all:
    input: results/karp_thesis/runs/ch3/network/a.csv, results/karp_thesis/runs/ch3/network/b.csv, results/karp_thesis/runs/ch3/linearisation/a.csv, results/george_thesis/runs/ch3/ntk_pair_0.json
    jobid: 0
    resources: tmpdir=/tmp
Shell command: None
Job stats:
job                             count
----------------------------  -------
all                                 1
total                               9

This was a dry-run (flag -n). The order of jobs does not reflect the order of execution.
"""

MEASURED = pd.DataFrame([
    {"family": "karp_ch3_wrn_32", "rule": "karp_thesis_ch3_run_images", "group": "network", "model": "wrn_10_10",
     "batch_size": 50, "steps_per_job": 200_000, "step_seconds": 0.009, "peak_memory_gib": 2.5,
     "device": "NVIDIA H100 80GB HBM3", "torch": "2.13.0"},
    {"family": "karp_ch3_wrn_64", "rule": "karp_thesis_ch3_run_images", "group": "network", "model": "wrn_10_10",
     "batch_size": 50, "steps_per_job": 200_000, "step_seconds": 0.027, "peak_memory_gib": 7.5,
     "device": "NVIDIA H100 80GB HBM3", "torch": "2.13.0"},
])


def row(table, section, rule, group=""):
    rows = table[(table["section"] == section) & (table["rule"] == rule) & (table["group"] == group)]
    assert len(rows) == 1, (section, rule, group)
    return rows.iloc[0]


def test_a_dry_run_report_gives_each_job_its_rule_wildcards_files_and_gpu():
    jobs = {job.jobid: job for job in plan.parse_jobs(REPORT)}
    assert len(jobs) == 13
    grow = jobs[8]
    assert (grow.rule, grow.group, grow.gpu) == ("karp_thesis_ch5_grow", "bert", True)
    assert grow.wildcards == {"part": "start0-b1-random", "seed": "0", "setting": "bert"}
    assert jobs[3].outputs == ["results/data/cifar10.npz", "results/data/cifar10.json"]
    assert not jobs[3].gpu and jobs[3].inputs[0] == "resources/raw/cifar10/cifar-10-python.tar.gz"


def test_each_document_counts_the_jobs_its_target_needs_and_the_opt_in_only_what_it_adds():
    sections = {name: sorted(job.jobid for job in jobs) for name, jobs in plan.sections(plan.parse_jobs(REPORT)).items()}
    assert sections["karp_thesis"] == [2, 3, 4, 5, 6]
    assert sections["george_thesis"] == [2, 3, 7]  # CIFAR-10 counted in each document that needs it
    assert sections["telescoping"] == []
    assert sections[plan.OPT_IN_SECTION] == [8]
    assert sections[plan.WHOLE] == [2, 3, 4, 5, 6, 7]  # every job of `all`, once


def test_a_measured_family_takes_its_hours_and_memory_from_rehearse_gpu(tmp_path):
    path = tmp_path / "rehearse_gpu.csv"
    MEASURED.to_csv(path, index=False)
    table = plan.plan_table(plan.parse_jobs(REPORT), plan.read_measured(path))
    network = row(table, "karp_thesis", "karp_thesis_ch3_run_images", "network")
    # 2 jobs x the mean of the variants' (step seconds x steps per job)
    assert network["gpu_hours_low"] == network["gpu_hours_high"] == pytest.approx(2 * (1800 + 5400) / 2 / 3600)
    assert network["source"] == "measured" and "H100" in network["basis"]
    assert (network["peak_memory_gib"], network["peak_memory_source"]) == (7.5, "measured")


def test_a_family_without_measurement_keeps_its_estimate_marked_so(tmp_path):
    path = tmp_path / "rehearse_gpu.csv"
    MEASURED.to_csv(path, index=False)
    table = plan.plan_table(plan.parse_jobs(REPORT), plan.read_measured(path))
    linearisation = row(table, "karp_thesis", "karp_thesis_ch3_run_images", "linearisation")
    estimate = ESTIMATES[("karp_thesis_ch3_run_images", "linearisation")]
    assert linearisation["source"] == "estimate" and linearisation["basis"] == estimate.source
    assert (linearisation["gpu_hours_low"], linearisation["gpu_hours_high"]) == estimate.hours  # one job
    unestimated = row(table, "george_thesis", "george_thesis_ch3_ntk_pair")
    assert unestimated["source"] == "no estimate" and math.isnan(unestimated["gpu_hours_low"])
    preparation = row(table, "karp_thesis", "prepare_dataset")
    assert preparation["gpu_jobs"] == 0 and preparation["source"] == ""  # no GPU-hours off the device


def test_the_opt_in_models_carry_the_libraries_memory_estimate():
    config = {"karp_thesis": {"ch5": {"growing": {"bert": {
        "model": {"width": 768, "heads": 12, "hidden": 3072, "context": 512}, "batch_size": 256,
        "micro_batch_size": 64, "layers": 12, "grown_layers": 4}}}}}
    table = plan.plan_table(plan.parse_jobs(REPORT), plan.read_measured(None), plan.peak_memory_estimates(config))
    grow = row(table, plan.OPT_IN_SECTION, "karp_thesis_ch5_grow", "bert")
    assert grow["peak_memory_source"] == "estimate" and 20 < grow["peak_memory_gib"] < 80
    assert "31.8 GiB (estimate)" in plan.markdown(table)


@pytest.mark.parametrize("damage, message", [
    (lambda frame: frame.drop(columns=["steps_per_job"]), "no column steps_per_job"),
    (lambda frame: frame.assign(step_seconds=["fast", "0.1"]), "column step_seconds needs positive numbers"),
])
def test_a_measured_csv_it_cannot_use_fails_naming_the_file(tmp_path, damage, message):
    path = tmp_path / "rehearse_gpu.csv"
    damage(MEASURED).to_csv(path, index=False)
    with pytest.raises(plan.PlanInputError, match=message) as error:
        plan.read_measured(path)
    assert str(path) in str(error.value)


def test_a_measured_csv_that_is_not_there_fails_naming_it(tmp_path):
    with pytest.raises(plan.PlanInputError, match="no such file"):
        plan.read_measured(tmp_path / "rehearse_gpu.csv")


def test_downloads_are_summed_per_family_and_document():
    table = plan.plan_table(plan.parse_jobs(REPORT), plan.read_measured(None))
    cifar = row(table, "george_thesis", "download_file", "cifar10")
    assert cifar["download_bytes"] == download_bytes("cifar10", "cifar-10-python.tar.gz")[0]
    assert "170.5 MB" in plan.markdown(table)


def test_every_downloaded_file_has_a_size_entry():
    """A file added to the registry without a size (or an explicit None) would drop out of the plan."""
    for name, source in SOURCES.items():
        if source.files:
            assert {remote.filename for remote in source.files} == set(DOWNLOAD_BYTES[name]), name


def test_estimates_name_families_the_plan_can_form():
    """An estimate's group is a FAMILY_WILDCARDS family and a whole rule's estimate is not split."""
    for rule, group in ESTIMATES:
        assert (rule in FAMILY_WILDCARDS) == bool(group), (rule, group)


@pytest.mark.workflow
def test_the_plan_counts_every_job_of_the_paper_dag():
    """One dry run of the paper configuration: the plan's rows hold Snakemake's own per-rule counts
    (the default target's and the opt-in target's jobs together), and every device job has a row."""
    from test_workflow import ROOT, job_counts

    report = plan.dry_run(ROOT / "Snakefile", ROOT / "config" / "paper.yaml")
    jobs = plan.parse_jobs(report)
    table = plan.plan_table(jobs, plan.read_measured(None))
    planned = table[table["section"].isin([plan.WHOLE, plan.OPT_IN_SECTION])].groupby("rule")["jobs"].sum()
    expected = {rule: count for rule, count in job_counts(report).items() if rule not in plan.TARGETS}
    assert planned.to_dict() == expected
    assert table[table["section"] == plan.WHOLE]["gpu_jobs"].sum() > len(jobs) / 2
