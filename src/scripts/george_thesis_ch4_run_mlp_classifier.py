"""Rule george_thesis_ch4_run_mlp_classifier (Fig 4.2): train the MLP classifier, tracking KFAC's and EKFAC's
errors against the exact empirical Fisher at the logged steps (csv), and the gradient correlations in the
parameter basis and in the KFE at the last step (npz)."""

import numpy as np

from linearlens.experiments.george_thesis.ch4 import METHODS, mlp_classifier_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    frame, correlations = mlp_classifier_run(snakemake.input.data, snakemake.params.spec, device)
    frame.to_csv(snakemake.output.errors, index=False)
    np.savez_compressed(snakemake.output.correlations, **correlations)
    log.info("%d parameters, train / test accuracy %.3f / %.3f; mean relative error over %d logged steps: %s",
             correlations["parameters"], correlations["train_accuracy"], correlations["test_accuracy"], len(frame),
             ", ".join(f"{method} {frame[f'{method}_error'].mean():.4f}" for method in METHODS))
