"""Rule george_thesis_ch5_run_twolayer: an unconstrained 2-layer linear MLP trained by α-scaled GD on one
example of §5.4, α small (non-linear) and large (linear), several initialisations (Fig C.9)."""

import numpy as np

from linearlens.experiments.george_thesis.ch5 import twolayer_run
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    set_threads(snakemake.threads)
    example = snakemake.wildcards.example
    record = twolayer_run(example, snakemake.params.spec)
    np.savez_compressed(snakemake.output[0], **record)
    for regime in ("nonlinear", "linear"):
        errors = record[f"{regime}_errors"]
        log.info("%s, %s (α %g, %d iterations, %d inits): mean squared error %.3f -> %.2e", example, regime,
                 record[f"{regime}_alpha"], errors.shape[0] - 1, errors.shape[1], errors[0].mean(), errors[-1].mean())
