"""Rule plot_telescoping_grokking: Figs 4, 11, 12 and 13 from the smoother runs."""

import json

import pandas as pd

from linearlens.data.prepare import data_label
from linearlens.figures.telescoping import plot_grokking
from linearlens.workflow import logged_job

CAPTIONS = {
    "fig_4": "Fig 4: grokking and effective parameters. Polynomial regression with the KBGP24 network "
             "(left), MNIST-style binary task with large initialisation (second) and with standard "
             "initialisation, with and without sigmoid (right; test curves only).",
    "fig_11": "Fig 11: polynomial grokking for several ε.",
    "fig_12": "Fig 12: grokking with large initialisation for several α.",
    "fig_13": "Fig 13: standard initialisation, with and without sigmoid: train and test.",
}
SUFFIX = (" Top: train (blue) and test (orange) performance; bottom: effective parameters p^train and "
          "p^test of the telescoping smoother; mean ± SE over {seeds} seed(s).")

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    figure, grokking = snakemake.wildcards.figure, snakemake.params.grokking  # noqa: F821
    runs = pd.concat([pd.read_csv(path) for path in snakemake.input.runs])  # noqa: F821

    def column(family, setting, show_train=True):
        title = grokking[family]["settings"][setting].get("label", setting)
        return runs[(runs["family"] == family) & (runs["setting"] == setting)], title, show_train

    def every(family, show_train=True):
        return [column(family, s, show_train) for s in grokking[family]["settings"]]

    columns = {
        "fig_4": lambda: [column("polynomial", grokking["polynomial"]["main"]),
                          column("large_init", grokking["large_init"]["main"]),
                          *every("standard_init", show_train=False)],
        "fig_11": lambda: every("polynomial"),
        "fig_12": lambda: every("large_init"),
        "fig_13": lambda: every("standard_init"),
    }[figure]()
    sources = "; ".join(dict.fromkeys(data_label(json.loads(open(p).read()))
                                      for p in snakemake.input.provenance))  # noqa: F821
    caption = CAPTIONS[figure] + SUFFIX.format(seeds=runs["seed"].nunique())
    plot_grokking(columns, snakemake.output[0], caption, sources)  # noqa: F821
    log.info("%s: %d columns", figure, len(columns))
