"""Rule george_thesis_ch3_train: the training run of Chapter 3's showcase (Figs 3.3-3.7), one model
checkpoint per chosen epoch and the train/test metrics there (CSV); resumed from its saved state
when an earlier job was interrupted."""

from linearlens.experiments.george_thesis.ch3 import save_checkpoints, train_with_checkpoints
from linearlens.train.devices import claim_device
from linearlens.train.runtime import set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    spec = snakemake.params.spec
    model, model_spec, record, steps_per_epoch = train_with_checkpoints(
        snakemake.input.data, spec, device, snakemake.params.state, inputs_version(snakemake.input))
    frame = save_checkpoints(model, model_spec, record, steps_per_epoch, spec, list(snakemake.output.checkpoints))
    frame.to_csv(snakemake.output.record, index=False)
    for row in frame.itertuples():
        log.info("epoch %g (step %d): train accuracy %.3f, test accuracy %.3f, test loss %.4f", row.epoch, row.step,
                 row.train_accuracy, row.test_accuracy, row.test_loss)
