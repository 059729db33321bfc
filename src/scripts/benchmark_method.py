"""The method benchmarks' rules (rules/kernels.smk): the library function a rule names times its
settings' cases, each in a spawned process, into the rule's table."""

import importlib

from linearlens.train.devices import claim_device
from linearlens.workflow import logged_job

if __name__ == "__main__":  # each case runs in a spawned process, which re-imports this file
    with logged_job(snakemake) as log:
        device = claim_device(snakemake.params.device, snakemake.rule)
        module, function = snakemake.params.run.split(":")
        run_benchmark = getattr(importlib.import_module(module), function)
        frame = run_benchmark(snakemake.params.settings, device, snakemake.threads, log)
        frame.to_csv(snakemake.output[0], index=False)
