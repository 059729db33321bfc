"""Rule fit_tree_ensemble: squared-loss boosting on a prepared dataset, saved with its training data."""

from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device
from linearlens.train.trees import train_tree_ensemble
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    metadata = train_tree_ensemble(snakemake.input.data, snakemake.params.spec,
                                   snakemake.output[0], str(choose_device(device)),
                                   snakemake.threads)
    log.info("%s fitted, train MSE %.4g", metadata["library"], metadata["train_mse"])
