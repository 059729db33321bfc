"""Rule iterative_linearisation_k1_identity: IL with K = 1 against ordinary training, step for step (claim C12)."""

import json

from linearlens.experiments.iterative_linearisation import k1_identity
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    set_threads(snakemake.threads)
    check = snakemake.params.check
    differences = k1_identity(snakemake.input.data, check)
    with open(snakemake.output[0], "w") as out:
        json.dump({"steps": check["steps"], "max_abs_difference": differences}, out, indent=2)
    log.info("max |θ_IL(K=1) − θ_SGD| after %d steps: %s", check["steps"], differences)
