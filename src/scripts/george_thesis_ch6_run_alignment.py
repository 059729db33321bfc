"""Rule george_thesis_ch6_run_alignment: one training run of Chapter 6 (a network, a label-noise
level, a learning rate, a seed) with the tangent kernels of its train and test probe sets taken at
log-spaced steps: metrics and alignment per step, per-layer alignment, and the raw Grams."""

import numpy as np

from linearlens.experiments.george_thesis.ch6 import kernel_alignment_run, label_noise_task, record_frames, saved_grams
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    run, seed = snakemake.params.run, int(snakemake.wildcards.seed)
    task, probes, redrawn = label_noise_task(snakemake.input.data, run, seed, choose_device(device))
    record, kernels = kernel_alignment_run(run, task, probes, seed, snakemake.params.state,
                                           inputs_version(snakemake.input))
    rows, layers = record_frames(record, kernels)
    rows.insert(1, "labels_redrawn", redrawn)
    rows.to_csv(snakemake.output.rows, index=False)
    layers.to_csv(snakemake.output.layers, index=False)
    np.savez(snakemake.output.grams, **saved_grams(kernels))
    last = rows.iloc[-1]
    log.info("%d steps (%d labels redrawn): train accuracy %.3f, test accuracy %.3f; CKA train %.3f -> %.3f, "
             "test %.3f -> %.3f", record.steps, redrawn, last.train_accuracy, last.test_accuracy,
             rows.train_cka.iloc[0], last.train_cka, rows.test_cka.iloc[0], last.test_cka)
