"""Rule george_thesis_ch6_run_easy_difficult: one training run on easy plus difficult examples
(Figs 6.4, B.7) with the tangent kernel's alignment on a probe set of each kind at log-spaced steps."""

from linearlens.experiments.george_thesis.ch6 import easy_difficult_task, kernel_alignment_run, record_frames
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    run, seed = snakemake.params.run, int(snakemake.wildcards.seed)
    task, probes = easy_difficult_task(snakemake.input.data, run, seed, choose_device(device),
                                       snakemake.input.get("difficult"))
    record, kernels = kernel_alignment_run(run, task, probes, seed, snakemake.params.state,
                                           inputs_version(snakemake.input))
    rows, layers = record_frames(record, kernels)
    rows.to_csv(snakemake.output.rows, index=False)
    layers.to_csv(snakemake.output.layers, index=False)
    last = rows.iloc[-1]
    log.info("%d steps: train accuracy %.3f, test accuracy %.3f; CKA easy %.3f (peak %.3f), difficult %.3f "
             "(peak %.3f)", record.steps, last.train_accuracy, last.test_accuracy, last.easy_cka,
             rows.easy_cka.max(), last.difficult_cka, rows.difficult_cka.max())
