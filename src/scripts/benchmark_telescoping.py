"""Rule benchmark_telescoping: training cost with the telescoping tracker and the smoother, as
ratios to plain training, one process per case."""

from linearlens.benchmarks.telescoping import run_tracking_benchmark
from linearlens.workflow import logged_job

if __name__ == "__main__":  # each case runs in a spawned process, which re-imports this file
    with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
        frame = run_tracking_benchmark(snakemake.params.settings, snakemake.threads, log,  # noqa: F821
                                       snakemake.params.device)  # noqa: F821
        frame.to_csv(snakemake.output[0], index=False)  # noqa: F821
