"""Rule il_k1_identity: IL with K = 1 against ordinary training, step for step (claim C12)."""

import json

from linearlens.experiments.iterative_linearisation import k1_identity
from linearlens.train import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    set_threads(snakemake.threads)  # noqa: F821
    check = snakemake.params.check  # noqa: F821
    differences = k1_identity(snakemake.input.data, check)  # noqa: F821
    with open(snakemake.output[0], "w") as out:  # noqa: F821
        json.dump({"steps": check["steps"], "max_abs_difference": differences}, out, indent=2)
    log.info("max |θ_IL(K=1) − θ_SGD| after %d steps: %s", check["steps"], differences)
