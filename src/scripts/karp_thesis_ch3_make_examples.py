"""Rule karp_thesis_ch3_make_examples: Fig 3.5's example images, from the same generators as the
variants the networks train on (no training)."""

import numpy as np

from linearlens.data.prepared import load_prepared
from linearlens.experiments.karp_thesis.ch3 import example_images
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    datasets = {name: load_prepared(path) for name, path in zip(snakemake.params.names, snakemake.input.datasets)}
    arrays = example_images(datasets, snakemake.params.images)
    np.savez(snakemake.output[0], **arrays)
    log.info("examples of %s", ", ".join(arrays))
