"""Rule plot_telescoping_tabular: Figs 5 and 14 from the tabular runs."""

import json

import pandas as pd

from linearlens.data.prepare import data_label
from linearlens.experiments.summaries import relative_mse_table
from linearlens.figures.telescoping import plot_tabular
from linearlens.workflow import logged_job

CAPTIONS = {"fig_5": "Fig 5: network vs gradient boosting on 'houses' as irregular test rows are mixed in",
            "fig_14": "Fig 14: network vs gradient boosting on three more tabular datasets"}

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    figure = snakemake.wildcards.figure  # noqa: F821
    runs = pd.concat([pd.read_csv(path) for path in snakemake.input.runs])  # noqa: F821
    panels = snakemake.params.panels  # noqa: F821
    titles = {name: panels[name].get("label", name) for name in runs["panel"].unique()}
    sources = "; ".join(dict.fromkeys(data_label(json.loads(open(p).read()))
                                      for p in snakemake.input.provenance))  # noqa: F821
    caption = (CAPTIONS[figure] + ": top, R_MSE(p) = (MSE_NN − MSE_GBT) at p over the same at p = 0; "
               "bottom, largest test kernel-row norm over the largest training one, averaged over steps "
               f"(network) or trees (GBT); mean ± SE over {runs['seed'].nunique()} seed(s).")
    plot_tabular(relative_mse_table(runs), runs, titles, snakemake.output[0], caption, sources)  # noqa: F821
    log.info("%s: %d panels", figure, len(titles))
