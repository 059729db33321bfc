"""Rule george_thesis_ch6_run_perturbation (Fig B.1): train the network of one seed, then the output change along
the Jacobian's top right singular directions and along random directions; one npz per seed."""

import numpy as np

from linearlens.experiments.george_thesis.ch6 import perturbation_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    run = perturbation_run(snakemake.input.data, snakemake.params.spec, int(snakemake.wildcards.seed),
                           device, snakemake.params.state, inputs_version(snakemake.input))
    np.savez(snakemake.output[0], **run)
    top, random = run["top_changes"], run["random_changes"]
    log.info("test accuracy %.3f; ‖Δf‖ along %d top directions mean %.4g (min %.4g), along %d random mean %.4g "
             "(max %.4g): ratio %.1f", run["test_accuracy"], len(top), top.mean(), top.min(), len(random),
             random.mean(), random.max(), top.mean() / random.mean())
