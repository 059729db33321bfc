"""Rule plot_il_filters: Fig 7, the first-layer filters' change from initialisation."""

import json

from linearlens.data.prepare import data_label
from linearlens.experiments.iterative_linearisation import first_layer_changes
from linearlens.figures.iterative_linearisation import plot_filters
from linearlens.workflow import logged_job

with logged_job(snakemake):  # noqa: F821 (snakemake is injected by the script directive)
    spec = snakemake.params.filters  # noqa: F821
    changes, epochs_per_step = first_layer_changes(snakemake.input.checkpoints, spec.get("seed", 0))  # noqa: F821
    source = data_label(json.loads(open(snakemake.input.provenance[0]).read()))  # noqa: F821
    plot_filters(changes, spec["n_filters"], snakemake.output[0], source, epochs_per_step,  # noqa: F821
                 spec.get("deviations"))
