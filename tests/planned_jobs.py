"""Every job of a Snakemake dry run as one JSON line: rule, inputs, outputs, wildcards and params.
Snakemake prints no params in a dry run, so this hooks the one place each planned job passes.

usage: python tests/planned_jobs.py OUT.jsonl <snakemake arguments>"""

import json
import sys

import snakemake.jobs


def record(job) -> dict:
    return {"rule": job.rule.name, "input": sorted(map(str, job.input)), "output": sorted(map(str, job.output)),
            "wildcards": dict(job.wildcards_dict), "params": dict(job.params.items())}


def main(out_path: str, arguments: list[str]) -> None:
    from snakemake.cli import main as snakemake_main

    with open(out_path, "w") as out:
        log_info = snakemake.jobs.Job.log_info

        def log_and_record(job, *args, **kwargs):
            out.write(json.dumps(record(job), sort_keys=True, default=repr) + "\n")
            return log_info(job, *args, **kwargs)

        snakemake.jobs.Job.log_info = log_and_record
        sys.argv = ["snakemake", *arguments]
        snakemake_main()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
