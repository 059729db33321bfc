"""Rule karp_thesis_ch3_make_images: one job's noisy-image variants (Figs 3.4, Tables 3.1, B.1), made once
and read by the network's and the linearisation's runs alike."""

import numpy as np

from linearlens.analysis.karp_thesis.ch3 import array_key
from linearlens.data.prepared import load_prepared
from linearlens.experiments.karp_thesis.ch3 import make_image_variants
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    images = snakemake.params.images
    datasets = {name: load_prepared(path) for name, path in zip(snakemake.params.names, snakemake.input.datasets)}
    arrays = make_image_variants(datasets, images, images["variants"])
    np.savez(snakemake.output[0], **arrays)
    for variant in images["variants"]:
        log.info("%s: %d training and %d test images", variant["name"],
                 len(arrays[array_key(variant["name"], "y_train")]), len(arrays[array_key(variant["name"], "y_test")]))
