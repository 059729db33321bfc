"""Rule extract_tree_kernel: the tree kernels of a saved ensemble on a probe set, with a summary."""

import json

from linearlens.kernels.extraction import extract_tree_kernel
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    summary = extract_tree_kernel(snakemake.input.ensemble, snakemake.input.probe,
                                  snakemake.params.settings, snakemake.output.kernel)
    with open(snakemake.output.summary, "w") as out:
        json.dump(summary, out, indent=2)
    log.info("%d trees, telescoped sum vs predict: max relative error %.2e", summary["n_trees"],
             summary["telescoped_vs_predict_max_relative_error"])
