"""Rule telescoping_tabular_search: the paper's random hyper-parameter search for one model on one
panel of the tabular study (Figs 5, 14)."""

import json

from linearlens.experiments.tabular import random_search
from linearlens.train import choose_device, set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    set_threads(snakemake.threads)  # noqa: F821
    search = snakemake.params.search  # noqa: F821
    result = random_search(snakemake.input.data, snakemake.params.experiment,  # noqa: F821
                           snakemake.wildcards.model, search["iterations"], search["n_validation"],  # noqa: F821
                           search.get("seed", 0), choose_device(snakemake.params.device))  # noqa: F821
    with open(snakemake.output[0], "w") as handle:  # noqa: F821
        json.dump(result, handle, indent=1)
    log.info("best of %d: %s", search["iterations"], result["best"])
