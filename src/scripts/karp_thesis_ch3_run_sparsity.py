"""Rule karp_thesis_ch3_run_sparsity: Fig 3.2, the network trained on the plain images with the active
fraction of each ReLU layer's outputs on a fixed probe set every epoch."""

from linearlens.experiments.karp_thesis.ch3 import sparsity_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.train.tasks import load_task
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    task = load_task(snakemake.input.data, device=choose_device(device))
    frame = sparsity_run(task, snakemake.params.settings, snakemake.params.state, inputs_version(snakemake.input))
    frame.to_csv(snakemake.output[0], index=False)
    log.info("test accuracy %.4f after epoch %g; active fractions %s", frame.iloc[-1]["test_accuracy"],
             frame.iloc[-1]["epoch"],
             ", ".join(f"{frame.iloc[-1][c]:.3f}" for c in frame.columns if c.startswith("active_relu")))
