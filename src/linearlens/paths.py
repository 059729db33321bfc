"""Every path under ``results/``, spelt here and nowhere else (a test holds the sources to it).

results/
  data/<dataset>.npz, .json               prepared datasets and their provenance records
  <document>/runs/[<chapter>/]<family>/…   the runs' records, one file (or a few) per run
  <document>/state/[<chapter>/]<family>/…  a run's resumable training state: not an output, so it
                                           survives a killed job and the next attempt resumes it
  <document>/data/<chapter>/…              data a chapter makes for its runs (Karp ch. 3's noisy images)
  <document>/figures/<id>.png (.pdf, .json sidecar), <document>/tables/<id>.csv
  <document>/claims.json                  the document's checked claims
  kernels/<extraction>/<file>             kernel extractions
  checkpoints/…                           initial models and fitted tree ensembles they start from
  benchmarks/<name>.csv                   method benchmarks; benchmarks/rules/…: each job's time
  plan/                                   the paper run's plan (GPU-hours per family)
  logs/…                                  one log per job
  code/<file under src/>.sha256, .stamp   the syntax digest of each library file or script a job runs
  report/                                 the HTML report

Torch-free: the workflow reads it when it builds the DAG. Rules write Snakemake wildcards
(``{seed}``) into these paths as they would into any other string.
"""

from __future__ import annotations

import posixpath

RESULTS = "results"
LOGS = f"{RESULTS}/logs"
JOB_BENCHMARKS = f"{RESULTS}/benchmarks/rules"  # one Snakemake benchmark file per job


def _join(*parts) -> str:
    return "/".join(str(part) for part in parts if part != "")


def prepared(dataset: str) -> str:
    """A prepared dataset's arrays."""
    return f"{RESULTS}/data/{dataset}.npz"


def provenance(dataset: str) -> str:
    """A prepared dataset's record of where it came from (figures name their data from it)."""
    return f"{RESULTS}/data/{dataset}.json"


def runs(document: str, *parts: str) -> str:
    """A folder or file of a document's runs: runs("george_thesis", "ch6", "disk")."""
    return _join(RESULTS, document, "runs", *parts)


def state(document: str, *parts: str) -> str:
    """Where a run keeps its resumable training state, mirroring ``runs``."""
    return _join(RESULTS, document, "state", *parts)


def chapter_data(document: str, chapter: str, name: str) -> str:
    """Data a chapter makes from the prepared datasets for its runs to read: chapter_data(
    "karp_thesis", "ch3", "cifar2_gaussian.npz")."""
    return _join(RESULTS, document, "data", chapter, name)


def figure(document: str, entry_id: str) -> str:
    """A figure's PNG target; its PDF and JSON sidecar lie beside it."""
    return f"{RESULTS}/{document}/figures/{entry_id}.png"


def table(document: str, entry_id: str) -> str:
    return f"{RESULTS}/{document}/tables/{entry_id}.csv"


def claims(document: str) -> str:
    return f"{RESULTS}/{document}/claims.json"


def unreleased_claims(document: str) -> str:
    """The claims on runs grown from checkpoints the document does not release (an opt-in target)."""
    return f"{RESULTS}/{document}/claims_unreleased.json"


def kernel(extraction: str, file: str) -> str:
    """A file of a kernel extraction (ntk.npz, tree_kernel.npz, summary.json)."""
    return f"{RESULTS}/kernels/{extraction}/{file}"


def checkpoint(*parts: str) -> str:
    return _join(RESULTS, "checkpoints", *parts)


def benchmark(name: str, extension: str = ".csv") -> str:
    """A method benchmark's table (or its figure: extension .png, .pdf, .json)."""
    return f"{RESULTS}/benchmarks/{name}{extension}"


def job_benchmark(*parts: str) -> str:
    """A job's time and memory, as Snakemake records them."""
    return _join(JOB_BENCHMARKS, *parts) + ".tsv"


def plan(file: str) -> str:
    return f"{RESULTS}/plan/{file}"


def report(file: str) -> str:
    return f"{RESULTS}/report/{file}"


def code_record(source: str) -> str:
    """The syntax digest of a file under src/ ("linearlens/kernels/trees.py"): a job's code input in
    the file's place, rewritten only when what the file runs changes."""
    return f"{RESULTS}/code/{source}.sha256"


def log(*parts: str) -> str:
    """A job's log: log("george_thesis", "plot_fig_6_2") is results/logs/george_thesis/plot_fig_6_2.log."""
    return _join(LOGS, *parts) + ".log"


def _run_stem(output: str) -> str:
    """<document>/<rest> of a run output results/<document>/runs/<rest>.<ext>, extension dropped."""
    parts = output.split("/", 3)
    if len(parts) < 4 or parts[0] != RESULTS or parts[2] != "runs":
        raise ValueError(f"{output!r} is not a run output ({RESULTS}/<document>/runs/...)")
    return _join(parts[1], posixpath.splitext(parts[3])[0])


def log_of(output: str) -> str:
    """The log of the job that writes the run output ``output``: results/<document>/runs/<rest>.csv
    is logged to results/logs/<document>/<rest>.log."""
    return f"{LOGS}/{_run_stem(output)}.log"


def benchmark_of(output: str) -> str:
    """The benchmark file (time, memory) of the job that writes the run output ``output``."""
    return job_benchmark(_run_stem(output))
