"""Rule benchmark_telescoping: training cost with the telescoping tracker and the smoother, as
ratios to plain training, one process per case."""

from linearlens.benchmarks.telescoping import run_tracking_benchmark
from linearlens.train.devices import claim_device
from linearlens.workflow import logged_job

if __name__ == "__main__":  # each case runs in a spawned process, which re-imports this file
    with logged_job(snakemake) as log:
        device = claim_device(snakemake.params.device, snakemake.rule)
        frame = run_tracking_benchmark(snakemake.params.settings, snakemake.threads, log,
                                       device)
        frame.to_csv(snakemake.output[0], index=False)
