"""Rule benchmark_kernels: time and peak memory of the kernel routes, one process per case."""

from linearlens.benchmarks.kernels import run_kernel_benchmark
from linearlens.train.devices import claim_device
from linearlens.workflow import logged_job

if __name__ == "__main__":  # each case runs in a spawned process, which re-imports this file
    with logged_job(snakemake) as log:
        device = claim_device(snakemake.params.device, snakemake.rule)
        frame = run_kernel_benchmark(snakemake.params.settings, device,
                                     snakemake.threads, log)
        frame.to_csv(snakemake.output[0], index=False)
