"""Rule george_thesis_ch4_run_search: one job of a training group's hyper-parameter search (Figs 4.3, 4.5, 4.6,
A.1-A.5), its runs one after the other: per epoch, the training and validation losses (and validation error)
and the training seconds so far."""

from linearlens.experiments.george_thesis.ch4 import training_runs
from linearlens.train.devices import claim_device
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    frame = training_runs(snakemake.input.data, snakemake.params.settings, snakemake.params.runs,
                          device)
    frame.to_csv(snakemake.output[0], index=False)
    for run, rows in frame.groupby("run", sort=False):
        last = rows.iloc[-1]
        log.info("%s: %s at epoch %g, training loss %.4g, validation loss %.4g, %.2f s", run, last["ended"],
                 last["epoch"], last["train_loss"], last["val_loss"], last["seconds"])
