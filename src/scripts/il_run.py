"""Rule il_run: one (experiment, setting, seed) run of iterative linearisation, resumed from its
saved state when an earlier job was interrupted."""

from linearlens.experiments.iterative_linearisation import il_run
from linearlens.train import save_checkpoint, set_threads
from linearlens.workflow import code_version, logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    set_threads(snakemake.threads)  # noqa: F821
    w = snakemake.wildcards  # noqa: F821
    run = il_run(snakemake.input.data, snakemake.params.run, int(w.seed), snakemake.params.state,  # noqa: F821
                 code_version(snakemake.input.code))  # noqa: F821
    records = run.frame()
    for position, (column, value) in enumerate((("experiment", w.experiment), ("setting", w.setting),
                                                ("seed", int(w.seed)))):
        records.insert(position, column, value)
    records.to_csv(snakemake.output.records, index=False)  # noqa: F821
    save_checkpoint(snakemake.output.checkpoints, **run.checkpoint_file())  # noqa: F821
    last = records.iloc[-1]
    log.info("K=%s step %d (%d re-linearisations%s): test accuracy network %.4f, linearised %.4f",
             last.K, last.step, last.relinearisations, ", diverged" if last.diverged else "",
             last.test_accuracy_network, last.test_accuracy_linearised)
