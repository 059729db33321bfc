"""Rule telescoping_tabular_search: the paper's random hyper-parameter search for one model on one
panel of the tabular study (Figs 5, 14)."""

import json

from linearlens.experiments.tabular import random_search
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    search = snakemake.params.search
    result = random_search(snakemake.input.data, snakemake.params.experiment,
                           snakemake.wildcards.model, search["iterations"], search["n_validation"],
                           search.get("seed", 0), choose_device(device))
    with open(snakemake.output[0], "w") as handle:
        json.dump(result, handle, indent=1)
    log.info("best of %d: %s", search["iterations"], result["best"])
