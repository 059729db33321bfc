"""Rule george_thesis_ch6_run_complexity: one run of Fig 6.6 (a network trained until its training
cross-entropy reaches the stopping loss, or capped), its records over training (CSV) and its final
errors and complexity measures (JSON); resumed from its saved state when an earlier job was interrupted."""

import json
from pathlib import Path

from linearlens.experiments.george_thesis.ch6 import complexity_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    run = {**snakemake.params.spec, "device": device}
    records, final = complexity_run(snakemake.input.data, run, int(snakemake.wildcards.seed),
                                    snakemake.params.state, inputs_version(snakemake.input))
    records.to_csv(snakemake.output.records, index=False)
    Path(snakemake.output.measures).write_text(json.dumps(final, indent=2) + "\n")
    log.info("%s: %d epochs%s, train error %.4f, test error %.4f, gap %.4f, C(f) = %.4g",
             snakemake.wildcards.run, final["epochs"], " (capped)" if final["capped"] else "",
             final["train_error"], final["test_error"], final["gap"], final["learning_flow"])
