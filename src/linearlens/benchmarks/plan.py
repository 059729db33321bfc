"""The paper DAG's cost before the launch (``snakemake paper_plan``): per document and run family,
its jobs, GPU-hours, peak GPU memory and download size.

The jobs come from one dry run of the paper configuration (``dry_run``) with the default target and
every document's target, in a scratch directory, so the plan counts every job a fresh paper run
makes and touches nothing of the user's. A job belongs to a document when its target needs it;
Karp ch. 5's opt-in target (``paper_karp_thesis_unreleased``) has its own section, of the jobs only
it adds. A device job is one the dry run plans with ``gpu=1`` (``gpu_resources()``).

GPU-hours are measured where ``rehearse_gpu``'s CSV has the family (its step time x the paper's
steps per job x the jobs) and the estimates of ``paper_costs`` elsewhere, marked as such.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..data.registry import download_bytes
from .paper_costs import ESTIMATES, family_group, family_hours

DOCUMENTS = ("telescoping", "iterative_linearisation", "george_thesis", "karp_thesis")
DEFAULT_TARGET = "all"
OPT_IN = "paper_karp_thesis_unreleased"
TARGETS = (DEFAULT_TARGET, *(f"paper_{document}" for document in DOCUMENTS), OPT_IN)
OTHER = "other (kernels, report)"
OPT_IN_SECTION = f"karp_thesis, opt-in ({OPT_IN})"
WHOLE = "paper DAG (default target)"  # every job of `all`, once: the sections' shared jobs counted once
MEASURED_COLUMNS = ("rule", "group", "step_seconds", "steps_per_job", "peak_memory_gib", "device")
GIB = 2**30


class PlanInputError(ValueError):
    """A measured-step CSV paper_plan cannot use; the message names the file and what is wrong."""


@dataclass
class PlannedJob:
    jobid: int
    rule: str
    wildcards: dict[str, str] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    gpu: bool = False

    @property
    def group(self) -> str:
        return family_group(self.rule, self.wildcards)


# --- the dry run and what it plans ---------------------------------------------------------------

def snakemake_command() -> list[str]:
    """The snakemake on the PATH (a job in a conda env has its Python, not snakemake), else this Python's."""
    found = shutil.which("snakemake")
    return [found] if found else [sys.executable, "-m", "snakemake"]


def dry_run(snakefile: Path, configfile: Path) -> str:
    """The dry run's report of every job the paper DAG's targets need, from a scratch directory."""
    with tempfile.TemporaryDirectory(prefix="paper_plan_") as scratch:
        command = [*snakemake_command(), "--snakefile", str(snakefile), "--directory", scratch,
                   "--configfile", str(configfile), "--dry-run", "--", *TARGETS]
        result = subprocess.run(command, capture_output=True, text=True, cwd=scratch)
    if result.returncode != 0:
        raise RuntimeError(f"paper_plan: the dry run of {configfile} failed:\n{result.stderr[-3000:]}")
    return result.stdout


JOB_START = re.compile(r"^\[[^\]\n]*\d{4}\]$", re.MULTILINE)  # the timestamp line before each job


def parse_jobs(report: str) -> list[PlannedJob]:
    """Each job of a dry run's report: its rule, wildcards, files and whether it asks for a GPU."""
    jobs = []
    for block in JOB_START.split(report):
        rule = re.match(r"\s*(?:local)?rule (\w+):", block)
        if not rule:
            continue
        fields = dict(re.findall(r"^ {4}(\w+): (.*)$", block, re.MULTILINE))
        jobs.append(PlannedJob(
            jobid=int(fields["jobid"]), rule=rule[1],
            wildcards=dict(pair.split("=", 1) for pair in _items(fields.get("wildcards", ""))),
            inputs=_items(fields.get("input", "")), outputs=_items(fields.get("output", "")),
            gpu=bool(re.search(r"\bgpu=[1-9]", fields.get("resources", "")))))
    return jobs


def _items(line: str) -> list[str]:
    return [item.strip() for item in line.split(", ") if item.strip()]


def needed_by(jobs: list[PlannedJob]) -> dict[str, set[int]]:
    """{target rule: the ids of the jobs it needs, itself included}."""
    producer = {output: job.jobid for job in jobs for output in job.outputs}
    requires = {job.jobid: {producer[path] for path in job.inputs if path in producer} for job in jobs}
    reached = {}
    for job in jobs:
        if job.rule in TARGETS:
            seen, frontier = {job.jobid}, [job.jobid]
            while frontier:
                for required in requires[frontier.pop()] - seen:
                    seen.add(required)
                    frontier.append(required)
            reached[job.rule] = seen
    return reached


def sections(jobs: list[PlannedJob]) -> dict[str, list[PlannedJob]]:
    """The jobs of each document's target, of the opt-in target alone, and of the default target
    that no document's needs (kernels, report); the target rules themselves left out."""
    reached, by_id = needed_by(jobs), {job.jobid: job for job in jobs}
    in_documents = set().union(*(reached[f"paper_{document}"] for document in DOCUMENTS))
    ids = {document: reached[f"paper_{document}"] for document in DOCUMENTS}
    ids[OPT_IN_SECTION] = reached[OPT_IN] - reached[DEFAULT_TARGET]
    ids[OTHER] = reached[DEFAULT_TARGET] - in_documents
    ids[WHOLE] = reached[DEFAULT_TARGET]
    return {name: sorted((by_id[i] for i in members if by_id[i].rule not in TARGETS), key=lambda job: job.jobid)
            for name, members in ids.items()}


# --- measured step times (rehearse_gpu) ---------------------------------------------------------

def read_measured(path: Path | None) -> pd.DataFrame:
    """rehearse_gpu's CSV, one row per timed family variant (none where ``path`` is None)."""
    if path is None:
        return pd.DataFrame(columns=MEASURED_COLUMNS)
    path = Path(path)
    if not path.is_file():
        raise PlanInputError(f"{path}: no such file; run `snakemake rehearse_gpu` on a GPU machine, "
                             "or plan from the estimates alone without it")
    measured = pd.read_csv(path, dtype={"group": str}, keep_default_na=False, na_values={"peak_memory_gib": ["", "nan"]})
    missing = [column for column in MEASURED_COLUMNS if column not in measured.columns]
    if missing:
        raise PlanInputError(f"{path}: no column {', '.join(missing)} (a rehearse_gpu CSV has "
                             f"{', '.join(MEASURED_COLUMNS)}); rerun `snakemake rehearse_gpu`")
    for column in ("step_seconds", "steps_per_job"):
        values = pd.to_numeric(measured[column], errors="coerce")
        if values.isna().any() or (values <= 0).any():
            raise PlanInputError(f"{path}: column {column} needs positive numbers, row(s) "
                                 f"{list(measured.index[values.isna() | (values <= 0)] + 2)} have none")
        measured[column] = values
    measured["peak_memory_gib"] = pd.to_numeric(measured["peak_memory_gib"], errors="coerce")
    return measured


# --- the table --------------------------------------------------------------------------------

def plan_table(jobs: list[PlannedJob], measured: pd.DataFrame, peak_estimates: dict | None = None) -> pd.DataFrame:
    """One row per (section, family): jobs, device jobs, GPU-hours (low, high) and where they come
    from, peak GPU memory and download bytes."""
    peak_estimates = peak_estimates or {}
    rows = []
    for section, members in sections(jobs).items():
        families = defaultdict(list)
        for job in members:
            families[(job.rule, job.group)].append(job)
        for (rule, group), family in sorted(families.items()):
            rows.append({"section": section, "rule": rule, "group": group, "jobs": len(family),
                         "gpu_jobs": sum(job.gpu for job in family),
                         **family_cost(rule, group, family, measured, peak_estimates),
                         **family_download(family)})
    return pd.DataFrame(rows)


def family_cost(rule: str, group: str, family: list[PlannedJob], measured: pd.DataFrame,
                peak_estimates: dict) -> dict:
    """GPU-hours and peak memory of a family's device jobs: measured, estimated or unknown."""
    cost = {"gpu_hours_low": math.nan, "gpu_hours_high": math.nan, "source": "", "basis": "",
            "peak_memory_gib": math.nan, "peak_memory_source": "", "peak_memory_basis": ""}
    gpu_jobs = sum(job.gpu for job in family)
    if not gpu_jobs:  # only device jobs count GPU-hours
        return cost
    if (rule, group) in peak_estimates:
        gib, basis = peak_estimates[(rule, group)]
        cost.update(peak_memory_gib=gib, peak_memory_source="estimate", peak_memory_basis=basis)
    rows = measured[(measured["rule"] == rule) & (measured["group"] == group)]
    if len(rows):
        # variants of a family (e.g. two image sizes) are taken to share its jobs evenly
        hours = gpu_jobs * float((rows["step_seconds"] * rows["steps_per_job"]).mean()) / 3600
        devices = ", ".join(sorted(set(rows["device"].astype(str))))
        cost.update(gpu_hours_low=hours, gpu_hours_high=hours, source="measured", basis=f"rehearse_gpu on {devices}")
        if not math.isnan(peak := rows["peak_memory_gib"].max()):
            cost.update(peak_memory_gib=peak, peak_memory_source="measured", peak_memory_basis=cost["basis"])
        return cost
    estimate = ESTIMATES.get((rule, group))
    if estimate is None:
        return {**cost, "source": "no estimate"}
    low, high = family_hours(estimate, gpu_jobs)
    return {**cost, "gpu_hours_low": low, "gpu_hours_high": high, "source": "estimate", "basis": estimate.source}


def family_download(family: list[PlannedJob]) -> dict:
    """Bytes the family's download jobs fetch (NaN where one file's size is unknown)."""
    sizes = [download_bytes(f"openml_{job.wildcards['dataset_id']}") if job.rule == "fetch_openml"
             else download_bytes(job.wildcards["source"], job.wildcards["filename"])
             for job in family if job.rule in ("download_file", "fetch_openml")]
    if not sizes:
        return {"download_bytes": math.nan, "download_approximate": False, "download_unknown": 0}
    return {"download_bytes": float(sum(size for size, _ in sizes if size is not None)),
            "download_approximate": any(approximate for _, approximate in sizes),
            "download_unknown": sum(size is None for size, _ in sizes)}


def peak_memory_estimates(config: dict) -> dict[tuple[str, str], tuple[float, str]]:
    """{(rule, group): (GiB, basis)} where the library estimates a family's peak GPU memory: Karp
    ch. 5's grown models and its stacked model at its last depth, at their configured micro batch."""
    from ..experiments.karp_thesis.ch5 import micro_batch_size, peak_memory_estimate

    ch5 = config.get("karp_thesis", {}).get("ch5", {})
    models = {("karp_thesis_ch5_grow", name): (setting, setting["layers"] + setting["grown_layers"])
              for name, setting in ch5.get("growing", {}).items()}
    if "stacking" in ch5:
        models[("karp_thesis_ch5_stack", "")] = (ch5["stacking"], max(ch5["stacking"]["stage_layers"]))
    return {family: (peak_memory_estimate(setting, layers)["total"],
                     f"peak_memory_estimate, {layers} layers at micro batch {micro_batch_size(setting)}")
            for family, (setting, layers) in models.items()}


# --- what it prints -----------------------------------------------------------------------------

def markdown(table: pd.DataFrame) -> str:
    """The table per section: device and download families one a row, the other jobs in one row,
    and the section's total."""
    lines = ["| document | family | jobs | GPU-hours | peak GPU memory | download | GPU-hours from |",
             "|---|---|---:|---:|---:|---:|---|"]
    for section, rows in table.groupby("section", sort=False):
        shown = rows[((rows["gpu_jobs"] > 0) | rows["download_bytes"].notna()) & (section != WHOLE)]
        for row in shown.itertuples():
            family = f"{row.rule} [{row.group}]" if row.group else row.rule
            basis = f"{row.source}: {row.basis}" if row.basis else row.source
            lines.append(f"| {section} | {family} | {row.jobs} | {hours_text(row.gpu_hours_low, row.gpu_hours_high)} "
                         f"| {memory_text(row.peak_memory_gib, row.peak_memory_source)} | {download_text([row])} | {basis} |")
        rest = rows.drop(shown.index)
        if len(rest) and section != WHOLE:
            rules = f"{len(rest)} rule" + ("s" if len(rest) > 1 else "")
            lines.append(f"| {section} | other CPU jobs ({rules}) | {rest['jobs'].sum()} | | | | |")
        lines.append(f"| **{section}** | **total** | **{rows['jobs'].sum()}** | **{total_hours_text(rows)}** "
                     f"| **{memory_text(rows['peak_memory_gib'].max(), '')}** "
                     f"| **{download_text(list(rows.itertuples()))}** | |")
    return "\n".join(lines) + "\n"


def hours_text(low: float, high: float) -> str:
    if math.isnan(low):
        return "—"
    digits = 1 if high < 10 else 0  # small families keep a decimal rather than show 0
    low_text, high_text = f"{low:,.{digits}f}", f"{high:,.{digits}f}"
    return low_text if low_text == high_text else f"{low_text}–{high_text}"


def total_hours_text(rows: pd.DataFrame) -> str:
    device = rows[rows["gpu_jobs"] > 0]
    text = hours_text(device["gpu_hours_low"].sum(), device["gpu_hours_high"].sum()) if len(device) else "0"
    unestimated = int(device["gpu_hours_low"].isna().sum())
    return text + (f" + {unestimated} families without an estimate" if unestimated else "")


def memory_text(gib: float, source: str) -> str:
    if math.isnan(gib):
        return "—"
    return f"{gib:.1f} GiB" + (" (estimate)" if source == "estimate" else "")


def download_text(rows) -> str:
    known = [row for row in rows if not math.isnan(row.download_bytes)]
    if not known:
        return "—"
    total = sum(row.download_bytes for row in known)
    unknown = sum(row.download_unknown for row in known)
    text = ("~" if any(row.download_approximate for row in known) else "") + size_text(total) if total else ""
    return " + ".join(filter(None, [text, f"{unknown} file(s) of unpublished size" if unknown else ""]))


def size_text(n_bytes: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{n_bytes:.0f} B"


def rule_counts(table: pd.DataFrame) -> dict[str, int]:
    """Jobs per rule of the default target's DAG, from the table (what `snakemake -n` counts)."""
    return table[table["section"] == WHOLE].groupby("rule")["jobs"].sum().to_dict()
