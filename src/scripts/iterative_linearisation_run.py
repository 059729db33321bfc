"""Rule iterative_linearisation_run: one (experiment, setting, seed) run of iterative linearisation, resumed from its
saved state when an earlier job was interrupted."""

from linearlens.experiments.iterative_linearisation import il_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import save_checkpoint, set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    run_spec = {**snakemake.params.run, "device": claim_device(snakemake.params.run["device"], snakemake.rule)}
    set_threads(snakemake.threads)
    w = snakemake.wildcards
    run = il_run(snakemake.input.data, run_spec, int(w.seed), snakemake.params.state,
                 inputs_version(snakemake.input))
    records = run.frame()
    for position, (column, value) in enumerate((("experiment", w.experiment), ("setting", w.setting),
                                                ("seed", int(w.seed)))):
        records.insert(position, column, value)
    records.to_csv(snakemake.output.records, index=False)
    save_checkpoint(snakemake.output.checkpoints, **run.checkpoint_file())
    last = records.iloc[-1]
    log.info("K=%s step %d (%d re-linearisations%s): test accuracy network %.4f, linearised %.4f",
             last.K, last.step, last.relinearisations, ", diverged" if last.diverged else "",
             last.test_accuracy_network, last.test_accuracy_linearised)
