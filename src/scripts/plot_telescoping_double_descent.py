"""Rule plot_telescoping_double_descent: Figs 3, 9 and 10 from the width sweeps."""

import json

import pandas as pd

from linearlens.data.prepare import data_label
from linearlens.experiments.summaries import final_by_width, interpolation_width
from linearlens.figures.telescoping import plot_double_descent
from linearlens.workflow import logged_job

CAPTIONS = {"fig_3": "Fig 3: double descent on the CIFAR-10 cat/dog task",
            "fig_9": "Fig 9: MNIST 3 vs 5 with 20% label noise (left) and without (right)",
            "fig_10": "Fig 10: double descent on MNIST-1D (classes 0, 1; 15% label noise)"}
TITLES = {"dd_cifar_catdog": "cat vs dog", "dd_mnist_noisy": "20% label noise",
          "dd_mnist_clean": "no label noise", "dd_mnist1d": "MNIST-1D, 15% noise"}

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    figure = snakemake.wildcards.figure  # noqa: F821
    runs = pd.concat([pd.read_csv(path) for path in snakemake.input.runs])  # noqa: F821
    columns = []
    for family, family_runs in runs.groupby("family", sort=False):
        final = final_by_width(family_runs)
        columns.append((final, TITLES.get(family, family), interpolation_width(final)))
    sources = "; ".join(dict.fromkeys(data_label(json.loads(open(p).read()))
                                      for p in snakemake.input.provenance))  # noqa: F821
    caption = (CAPTIONS[figure] + ": one-hidden-layer networks trained to the double-descent stopping "
               "rule; top: train and test MSE, bottom: effective parameters of the telescoping smoother, "
               f"against the width; dotted: p ≈ n; mean ± SE over {runs['seed'].nunique()} seed(s).")
    plot_double_descent(columns, snakemake.output[0], caption, sources)  # noqa: F821
    log.info("%s: %d sweeps", figure, len(columns))
