"""What Snakemake's own process spends on scheduling, apart from the jobs: a synthetic workflow of
idle jobs (each sleeps, as a job waits on its work) with as many code inputs as the default run's
jobs, run under given scheduling options; the main process's CPU time is read at its end, and its
children's (the jobs, the same whatever the options, and the ILP scheduler's solver runs).

    python -m linearlens.benchmarks.scheduler --jobs 200 -- --max-jobs-per-timespan 100/5s

Standard library only; it runs Snakemake as a subprocess in a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parents[2]  # src/, for the Snakefile's import

# The jobs' shape: every job reads the same code files, as the default run's jobs read the library
# files their scripts import (30-45 each), and writes a benchmark file, as training jobs do.
SNAKEFILE = """
import json, resource
from pathlib import Path
from linearlens.scheduling import event_driven_scheduling

onstart:
    if config["event_driven"]:
        event_driven_scheduling(workflow)

CODE = [f"code/{i}.py" for i in range(config["code_files"])]

rule all:
    input: expand("out/{i}.txt", i=range(config["jobs"]))

rule job:
    input: CODE
    output: "out/{i}.txt"
    benchmark: "bench/{i}.tsv"
    script: "job.py"

onsuccess:
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    Path("scheduler_cpu.json").write_text(json.dumps({"user": own.ru_utime, "sys": own.ru_stime,
                                                      "children": children.ru_utime + children.ru_stime}))
"""

JOB = """
import time
time.sleep(snakemake.config["job_seconds"])
open(snakemake.output[0], "w").close()
"""


def run(jobs: int, job_seconds: float, code_files: int, cores: int, event_driven: bool,
        options: list[str]) -> dict:
    """Run the synthetic workflow once; its wall time and the main process's CPU seconds."""
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "Snakefile").write_text(SNAKEFILE)
        (root / "job.py").write_text(JOB)
        (root / "code").mkdir()
        for i in range(code_files):
            (root / "code" / f"{i}.py").write_text(f"# {i}\n")
        config = [f"jobs={jobs}", f"job_seconds={job_seconds}", f"code_files={code_files}",
                  f"event_driven={event_driven}"]
        command = [sys.executable, "-m", "snakemake", "--cores", str(cores), "--quiet", "all",
                   "--config", *config, *options]
        start = time.monotonic()
        environment = {**os.environ, "PYTHONPATH": str(SOURCE_ROOT)}
        subprocess.run(command, cwd=root, env=environment, check=True, stdout=subprocess.DEVNULL)
        wall = time.monotonic() - start
        cpu = json.loads((root / "scheduler_cpu.json").read_text())
    seconds = cpu["user"] + cpu["sys"]
    # the children are the jobs (the same work whatever the options) and the ILP solver's runs
    return {"wall_s": round(wall, 1), "scheduler_cpu_s": round(seconds, 1),
            "user_s": round(cpu["user"], 1), "sys_s": round(cpu["sys"], 1),
            "share_of_a_core": round(seconds / wall, 3), "children_cpu_s": round(cpu["children"], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--job-seconds", type=float, default=1.0)
    parser.add_argument("--code-files", type=int, default=40)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--event-driven", action="store_true",
                        help="schedule on job events only (linearlens.scheduling.event_driven_scheduling)")
    parser.add_argument("options", nargs="*", help="Snakemake options, after --")
    args = parser.parse_args()
    result = run(args.jobs, args.job_seconds, args.code_files, args.cores, args.event_driven, args.options)
    print(json.dumps({"options": args.options, "event_driven": args.event_driven, **result}))


if __name__ == "__main__":
    main()
