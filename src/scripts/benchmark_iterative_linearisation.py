"""Rule benchmark_iterative_linearisation: a linearised step's cost as a ratio to an ordinary step,
one process per case."""

from linearlens.benchmarks.iterative_linearisation import run_step_benchmark
from linearlens.train.devices import claim_device
from linearlens.workflow import logged_job

if __name__ == "__main__":  # each case runs in a spawned process, which re-imports this file
    with logged_job(snakemake) as log:
        device = claim_device(snakemake.params.device, snakemake.rule)
        frame = run_step_benchmark(snakemake.params.settings, device,
                                   snakemake.threads, log)
        frame.to_csv(snakemake.output[0], index=False)
