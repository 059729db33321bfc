"""Rule telescoping_tabular_run: one (panel, seed) of the tabular study (Figs 5, 14)."""

import json

from linearlens.experiments.tabular import tabular_run
from linearlens.train import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    set_threads(snakemake.threads)  # noqa: F821
    w = snakemake.wildcards  # noqa: F821
    searched = {model: json.loads(open(snakemake.input[model]).read())["best"]  # noqa: F821
                for model in snakemake.params.searched}  # noqa: F821
    records = tabular_run(snakemake.input.data, snakemake.params.experiment, int(w.seed), searched)  # noqa: F821
    records.insert(0, "panel", w.panel)
    records.insert(1, "seed", int(w.seed))
    records.to_csv(snakemake.output[0], index=False)  # noqa: F821
    at_zero = records[records["p"] == 0].drop_duplicates("model").set_index("model")["mse"]
    log.info("MSE at p = 0: %s", ", ".join(f"{m} {v:.3g}" for m, v in at_zero.items()))
