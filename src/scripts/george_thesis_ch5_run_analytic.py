"""Rule george_thesis_ch5_run_analytic: the quadratic model of §5.4 in closed form on Examples 1-3, both
regimes, and the sequentialisation of eq. 5.4.8 (Fig 5.4)."""

import numpy as np

from linearlens.experiments.george_thesis.ch5 import ANALYTIC_EXAMPLES, analytic_run
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    set_threads(snakemake.threads)
    spec = snakemake.params.spec
    record = analytic_run(spec)
    np.savez_compressed(snakemake.output[0], **record)
    for name in ANALYTIC_EXAMPLES:
        log.info("%s (%s basis): largest ỹ %s; final squared error linear %.2e, non-linear %.2e (window ends)",
                 name, spec["degenerate_basis"], np.round(np.sort(record[f"{name}/y_tilde"])[::-1][:3], 3).tolist(),
                 record[f"{name}/linear_errors"][-1].mean(), record[f"{name}/nonlinear_errors"][-1].mean())
