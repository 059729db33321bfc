"""Rule il_damping: damped Gauss-Newton on the quintic at one damping λ, every seed."""

import numpy as np

from linearlens.experiments.iterative_linearisation import gauss_newton_run
from linearlens.train import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    set_threads(snakemake.threads)  # noqa: F821
    spec = snakemake.params.spec  # noqa: F821
    damping = float(snakemake.wildcards.damping)  # noqa: F821
    summary, predictions = gauss_newton_run(snakemake.input.data, spec, damping, spec["seeds"])  # noqa: F821
    summary.to_csv(snakemake.output.summary, index=False)  # noqa: F821
    np.savez_compressed(snakemake.output.predictions, seeds=summary["seed"].to_numpy(),  # noqa: F821
                        predictions=predictions)
    log.info("λ=%g: test RMSE mean %.3g, median %.3g over %d seeds", damping, summary.test_rmse.mean(),
             summary.test_rmse.median(), len(summary))
