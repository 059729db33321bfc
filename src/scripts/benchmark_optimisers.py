"""Rule benchmark_optimisers: a KFAC, EKFAC and EKFAC-ra training step's cost as a ratio to an SGD
step, one process per case."""

from linearlens.benchmarks.optimisers import run_optimiser_benchmark
from linearlens.train.devices import claim_device
from linearlens.workflow import logged_job

if __name__ == "__main__":  # each case runs in a spawned process, which re-imports this file
    with logged_job(snakemake) as log:
        device = claim_device(snakemake.params.device, snakemake.rule)
        frame = run_optimiser_benchmark(snakemake.params.settings, device,
                                        snakemake.threads, log)
        frame.to_csv(snakemake.output[0], index=False)
