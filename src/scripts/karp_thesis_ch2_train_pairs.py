"""Rules karp_thesis_ch2_train_pairs and karp_thesis_ch2_train_kept_pairs: one block of pairs (S, S′)
of one configuration and trial at each size of a group, trained in lockstep; a row per size, pair and
snapshot (CSV), and for the kept sizes the members' states at the main snapshot; resumed from its
saved state when an earlier job was interrupted."""

import torch

from linearlens.experiments.karp_thesis.ch2 import pair_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    configuration, trial, sizes = snakemake.params.run
    kept = "states" in snakemake.output.keys()
    frame, states = pair_run(snakemake.input.data, snakemake.params.settings, configuration, trial, sizes,
                             list(snakemake.params.pairs), list(snakemake.params.keep_sizes) if kept else (),
                             snakemake.params.state, inputs_version(snakemake.input), device)
    frame.to_csv(snakemake.output.rows, index=False)
    if kept:
        torch.save(states, snakemake.output.states)
    for (m, snapshot), rows in frame.groupby(["m", "snapshot"], sort=False):
        log.info("%s (step %d), %d pairs at m = %d: max gap %.4g, max β̂ %.4g (at z in %d), max distance %.4g",
                 snapshot, rows.step.iloc[0], len(rows), m, rows.gap_loss.max(), rows.stability.max(),
                 rows.stability_at_z.sum(), rows.distance.max())
