"""Rule benchmark_curvature: time of our Fisher builds and products against NNGeometry and
curvlinops, one process per case."""

from linearlens.benchmarks.curvature import run_curvature_benchmark
from linearlens.train.devices import claim_device
from linearlens.workflow import logged_job

if __name__ == "__main__":  # each case runs in a spawned process, which re-imports this file
    with logged_job(snakemake) as log:
        device = claim_device(snakemake.params.device, snakemake.rule)
        frame = run_curvature_benchmark(snakemake.params.settings, device,
                                        snakemake.threads, log)
        frame.to_csv(snakemake.output[0], index=False)
