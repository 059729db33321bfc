"""Rule george_thesis_ch3_ntk_pair: at one checkpoint, the NTK Gram of f[c2] − f[c1] on test examples of
the two classes (Fig 3.7; npz)."""

import numpy as np

from linearlens.experiments.george_thesis.ch3 import evaluation_examples, load_showcase_model, ntk_pair
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    spec, device = snakemake.params.spec, choose_device(device)
    model, metadata = load_showcase_model(snakemake.input.checkpoint, spec["dtype"], device)
    x, y = evaluation_examples(snakemake.input.data, spec, spec["ntk"]["split"], device)
    pair = ntk_pair(model, x, y, spec)
    np.savez(snakemake.output[0], **pair, epoch=np.int64(metadata["epoch"]),
             test_accuracy=np.float64(metadata["test_accuracy"]))
    log.info("epoch %d: Gram of %d examples, classes %s, trace %.4g", metadata["epoch"], len(pair["labels"]),
             pair["classes"].tolist(), float(np.trace(pair["gram"])))
