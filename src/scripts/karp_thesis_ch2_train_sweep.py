"""Rule karp_thesis_ch2_train_sweep: Fig A.1's A(S) alone for the sweep's samples at a group of
sizes; a row per size, sample and snapshot (CSV)."""

from linearlens.experiments.karp_thesis.ch2 import sweep_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    configuration, trial, sizes = snakemake.params.run
    frame = sweep_run(snakemake.input.data, snakemake.params.settings, configuration, trial, sizes,
                      snakemake.params.samples, snakemake.params.state, inputs_version(snakemake.input),
                      device)
    frame.to_csv(snakemake.output[0], index=False)
    for (m, snapshot), rows in frame.groupby(["m", "snapshot"], sort=False):
        log.info("%s (step %d), %d samples at m = %d: max gap %.4g", snapshot, rows.step.iloc[0], len(rows), m,
                 rows.gap_loss.max())
