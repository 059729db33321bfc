"""Rule george_thesis_ch5_run_toy: one block of seeds of Fig 5.1's yin-yang runs, every seed at every α,
trained as one batch: training-loss curves, and the grid losses at the first iteration below each
training-loss threshold."""

import numpy as np

from linearlens.analysis.george_thesis.ch5 import crossing_summary, toy_shard_seeds
from linearlens.experiments.george_thesis.ch5 import toy_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    spec = snakemake.params.spec
    seeds = toy_shard_seeds(spec, int(snakemake.wildcards.shard))
    runs = toy_run(spec, seeds, device)
    np.savez_compressed(snakemake.output[0], **runs)
    log.info("seeds %d-%d at α %s: stopped after %d-%d iterations", seeds[0], seeds[-1], spec["alphas"],
             runs["stop_iteration"].min(), runs["stop_iteration"].max())
    for row in crossing_summary(runs).itertuples():
        log.info("α %g, training loss < %g: %d of %d runs (median first iteration %s)%s", row.alpha, row.threshold,
                 row.reached, row.runs, f"{row.median_iteration:.0f}" if np.isfinite(row.median_iteration) else "never",
                 "" if row.reached == row.runs else f"; {row.runs - row.reached} never did, left out of that Δloss map")
