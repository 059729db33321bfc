"""Rule extract_ntk: the empirical NTK of a checkpoint on a probe set, with its summary."""

import json

from linearlens.kernels.extraction import extract_ntk
from linearlens.train.devices import claim_device
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    summary = extract_ntk(snakemake.input.checkpoint, snakemake.input.probe,
                          snakemake.params.settings, device,
                          snakemake.threads, snakemake.output.gram)
    with open(snakemake.output.summary, "w") as out:
        json.dump(summary, out, indent=2)
    log.info("effective rank %.2f, label CKA %.3f", summary["effective_rank"], summary["label_cka"])
