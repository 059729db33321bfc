"""Rule plot_kernel_benchmark: the benchmark CSV as a figure."""

import pandas as pd

from linearlens.figures.benchmarks import plot_kernel_benchmark
from linearlens.workflow import logged_job

with logged_job(snakemake):
    plot_kernel_benchmark(pd.read_csv(snakemake.input[0]), snakemake.output.png)
