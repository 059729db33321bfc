"""Rule karp_thesis_ch3_run_images: the network (WRN) or its linearisation at θ₀ trained on each variant of
one data job (Figs 3.4, Tables 3.1, B.1): per evaluation, test accuracy and loss and the training loss."""

import numpy as np

from linearlens.experiments.karp_thesis.ch3 import image_runs
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    with np.load(snakemake.input.data) as arrays:
        frame = image_runs(arrays, snakemake.params.training, snakemake.wildcards.model,
                           choose_device(device), snakemake.params.state,
                           inputs_version(snakemake.input))
    frame.to_csv(snakemake.output[0], index=False)
    for variant, rows in frame.groupby("variant", sort=False):
        last = rows.iloc[-1]
        log.info("%s: test accuracy %.4f after epoch %g (%s, %.1f s)", variant, last["test_accuracy"],
                 last["epoch"], last["ended"], last["seconds"])
