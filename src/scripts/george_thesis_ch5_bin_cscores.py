"""Rule george_thesis_ch5_bin_cscores: the C-scores of the dataset's train and test examples (the
published ones, or a proxy computed by the hold-out estimator) and their decile groups, with the
examples each run tracks per decile (npz), and one row per decile (CSV)."""

import numpy as np
import pandas as pd

from linearlens.data.cscores import bin_table, binned_cscores, split_scores
from linearlens.data.prepared import load_prepared
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    settings = snakemake.params.settings
    published = load_prepared(snakemake.input.scores) if "scores" in snakemake.input.keys() else None
    scores = split_scores(load_prepared(snakemake.input.data), settings["cscores"], published)
    arrays = binned_cscores(scores, settings["bins"], settings["tracked"], settings["tracking_seed"])
    np.savez(snakemake.output.scores, **arrays, source=np.asarray(settings["cscores"]["source"]))
    table = pd.DataFrame(bin_table(arrays, settings["bins"]))
    table.to_csv(snakemake.output.table, index=False)
    log.info("%s C-scores, deciles of the training split (mean score): %s", settings["cscores"]["source"],
             ", ".join(f"{v:.3f}" for v in table[table.split == "train"].score_mean))
