"""Rule george_thesis_ch6_run_supernat: GD and SuperNat on the noisy linear-regression toy, every seed (Fig 6.5)."""

import numpy as np
from threadpoolctl import threadpool_limits

from linearlens.linearize.supernat import supernat_experiment
from linearlens.workflow import logged_job

with logged_job(snakemake) as log, threadpool_limits(limits=snakemake.threads):
    spec = snakemake.params.spec
    record = supernat_experiment(spec)
    np.savez_compressed(snakemake.output[0], **record)
    log.info("%d seeds, %d iterations, κ %s: final test MSE GD %.4f, SuperNat %.4f (seed means)",
             len(spec["seeds"]), spec["iterations"], spec["kappa"], record["test_error_gd"][:, -1].mean(),
             record["test_error_supernat"][:, -1].mean())
