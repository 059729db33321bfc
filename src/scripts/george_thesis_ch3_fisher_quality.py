"""Rule george_thesis_ch3_fisher_quality: at one checkpoint, every metric of Figs 3.3-3.6 for every Fisher
approximation against the Monte-Carlo FIM (JSON)."""

import json
from pathlib import Path

from linearlens.experiments.george_thesis.ch3 import (
    evaluation_examples,
    fisher_examples,
    fisher_quality,
    load_showcase_model,
)
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    spec, device = snakemake.params.spec, choose_device(device)
    model, metadata = load_showcase_model(snakemake.input.checkpoint, spec["dtype"], device)
    x, _ = evaluation_examples(snakemake.input.data, spec, spec["fisher"]["split"], device)
    result = fisher_quality(model, fisher_examples(x, spec["fisher"]["examples"], spec["seed"]), spec, spec["seed"])
    result = {**metadata, **result}
    Path(snakemake.output[0]).write_text(json.dumps(result, indent=1) + "\n")
    log.info("epoch %d: d = %d, tr F = %.4g; dense check %s", result["epoch"], result["n_params"], result["trace"],
             result["dense_check"])
    for name, row in result["representations"].items():
        log.info("%s (%.1f s): trace error %.2e, vTMv error %.3g, mv cos %.4f", name, row["seconds"],
                 row["trace_error"], sum(row["vTMv_error"]) / len(row["vTMv_error"]),
                 sum(row["mv_cos"]) / len(row["mv_cos"]))
