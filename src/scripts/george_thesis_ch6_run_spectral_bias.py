"""Rule george_thesis_ch6_run_spectral_bias: the tangent kernel of a random MLP on 1-D points, its
eigenvectors' Fourier content and its spectrum (Fig B.2)."""

import numpy as np

from linearlens.kernels.eigenfunctions import random_mlp_spectrum
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    set_threads(snakemake.threads)
    spec = snakemake.params.spec
    run = random_mlp_spectrum(spec["depth"], spec["width"], spec["n_points"], spec["seed"], low=spec["low"],
                              high=spec["high"], activation=spec["activation"], centred=spec["centred"])
    np.savez_compressed(snakemake.output[0], seed=np.asarray(spec["seed"]), **run)
    log.info("lambda10/lambda1 = %.3f%%; dominant frequencies of eigenvectors 0..24: %s",
             100 * run["ratios"][9], run["dominant_frequency"][:25].tolist())
