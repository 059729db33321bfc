"""Rule iterative_linearisation_damping: damped Gauss-Newton on the quintic at one damping λ, every seed."""

import numpy as np

from linearlens.experiments.iterative_linearisation import gauss_newton_run
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    set_threads(snakemake.threads)
    spec = snakemake.params.spec
    damping = float(snakemake.wildcards.damping)
    summary, predictions = gauss_newton_run(snakemake.input.data, spec, damping, spec["seeds"])
    summary.to_csv(snakemake.output.summary, index=False)
    np.savez_compressed(snakemake.output.predictions, seeds=summary["seed"].to_numpy(),
                        predictions=predictions)
    log.info("λ=%g: test RMSE mean %.3g, median %.3g over %d seeds", damping, summary.test_rmse.mean(),
             summary.test_rmse.median(), len(summary))
