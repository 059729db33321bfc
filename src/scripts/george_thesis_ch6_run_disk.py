"""Rule george_thesis_ch6_run_disk: one seed of the disk run behind Fig 6.1 (GD on the disk task, the tangent
kernel's eigenfunctions on the test grid at the figure's rows)."""

import numpy as np

from linearlens.experiments.george_thesis.ch6 import disk_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    seed = int(snakemake.wildcards.seed)
    run = disk_run(snakemake.input.data, snakemake.params.spec, seed, device)
    np.savez_compressed(snakemake.output[0], **run)
    log.info("seed %d: lambda20/lambda1 %s at iterations %s; final train loss %.4f, grid accuracy %.3f", seed,
             " -> ".join(f"{r:.3%}" for r in run["ratios"][:, 19]), run["rows"].tolist(), run["log_train_loss"][-1],
             run["log_grid_accuracy"][-1])
