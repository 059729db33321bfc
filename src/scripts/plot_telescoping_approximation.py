"""Rule plot_telescoping_approximation: Figs 2, 7 and 8 from the approximation runs."""

import json

import pandas as pd

from linearlens.data.prepare import data_label
from linearlens.figures.telescoping import plot_approximation_accuracy, plot_approximation_errors
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    runs = pd.concat([pd.read_csv(path) for path in snakemake.input.runs])  # noqa: F821
    source = data_label(json.loads(open(snakemake.input.provenance).read()))  # noqa: F821
    settings = snakemake.params.settings  # noqa: F821
    main = {name: settings[name] for name in ("sgd", "adamw") if name in settings}
    plot_approximation_errors(runs, main, snakemake.output.fig_2, source, "Fig 2")  # noqa: F821
    plot_approximation_errors(runs, settings, snakemake.output.fig_7, source, "Fig 7")  # noqa: F821
    plot_approximation_accuracy(runs, settings, snakemake.output.fig_8, source)  # noqa: F821
    log.info("%d runs plotted", runs.groupby(["setting", "lr", "seed"]).ngroups)
