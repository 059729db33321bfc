"""Rule george_thesis_ch2_run_gaussians: the four normal distributions of Example 4 in closed form, their
pdfs, central intervals and pairwise distances (Fig 2.1)."""

import numpy as np

from linearlens.experiments.george_thesis.ch2 import PAIRS, gaussians_run
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    record = gaussians_run(snakemake.params.spec)
    np.savez_compressed(snakemake.output[0], **record)
    for first, second in PAIRS:
        pair = first + second
        log.info("%s: parameter distance %.6f, KL(%s‖%s) %.4f, KL(%s‖%s) %.4f, intervals' overlap %.3f", pair,
                 record[f"{pair}/parameter_distance"], first, second, record[f"{pair}/kl_forward"], second, first,
                 record[f"{pair}/kl_backward"], record[f"{pair}/interval_overlap"])
