"""Rule george_thesis_ch5_run_difficulty: one α-scaled run of Figs 5.2 and C.1-C.6 (an experiment,
an architecture, α, a learning rate, a seed) from its seed's θ₀: the loss and accuracy of each tracked
group and the linearity metrics at every log point (CSV), and a summary (JSON); resumed from its saved
state when an earlier job was interrupted."""

import json
from pathlib import Path

from linearlens.experiments.george_thesis.ch5 import difficulty_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    inputs = snakemake.input
    cap = json.loads(Path(inputs.cap).read_text())["steps"] if "cap" in inputs.keys() else None
    frame, summary = difficulty_run(inputs.data, inputs.cscores if "cscores" in inputs.keys() else None, inputs.init,
                                    snakemake.params.run, int(snakemake.wildcards.seed), cap, snakemake.params.state,
                                    inputs_version(inputs), device)
    frame.to_csv(snakemake.output.log_points, index=False)
    Path(snakemake.output.summary).write_text(json.dumps(summary, indent=2) + "\n")
    last = frame.iloc[-1]
    log.info("%d steps (%s), %d log points: mean training loss %.4f", summary["steps"], summary["ended"],
             len(frame), last.train_loss)
