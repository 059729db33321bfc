"""Rule plot_kernel_benchmark: the benchmark CSV as a figure."""

import pandas as pd

from linearlens.figures.benchmarks import plot_kernel_benchmark
from linearlens.workflow import logged_job

with logged_job(snakemake):  # noqa: F821 (snakemake is injected by the script directive)
    plot_kernel_benchmark(pd.read_csv(snakemake.input[0]), snakemake.output.png)  # noqa: F821
