"""Rule plot_telescoping_lmc: Fig 6 from the children's interpolation curves and the parents'
gradient changes."""

import json

import pandas as pd

from linearlens.data.prepare import data_label
from linearlens.figures.telescoping import plot_lmc
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    children = pd.concat([pd.read_csv(path) for path in snakemake.input.children])  # noqa: F821
    changes = pd.concat([pd.read_csv(path) for path in snakemake.input.gradient_changes])  # noqa: F821
    sources = "; ".join(data_label(json.loads(open(p).read())) for p in snakemake.input.provenance)  # noqa: F821
    pairs = children.groupby("branch")[["seed", "inner"]].apply(lambda f: len(f.drop_duplicates()))
    caption = ("Fig 6: left, largest accuracy drop of the weight average of two children below the line "
               "between their accuracies, against the step t' they were spawned from the parent; middle "
               "and right, squared change of the network's gradients over the epoch after t', per layer. "
               f"Mean ± SE over {int(pairs.max())} child pair(s) per spawn step; pretraining on the second "
               "data source.")
    plot_lmc(children, changes, snakemake.output[0], caption, sources)  # noqa: F821
    log.info("fig_6: %d interpolation curves", len(children.drop_duplicates(["branch", "seed", "inner", "spawn_step"])))
