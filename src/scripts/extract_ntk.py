"""Rule extract_ntk: the empirical NTK of a checkpoint on a probe set, with its summary."""

import json

from linearlens.kernels.extraction import extract_ntk
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    summary = extract_ntk(snakemake.input.checkpoint, snakemake.input.probe,  # noqa: F821
                          snakemake.params.settings, snakemake.params.device,  # noqa: F821
                          snakemake.threads, snakemake.output.gram)  # noqa: F821
    with open(snakemake.output.summary, "w") as out:  # noqa: F821
        json.dump(summary, out, indent=2)
    log.info("effective rank %.2f, label CKA %.3f", summary["effective_rank"], summary["label_cka"])
