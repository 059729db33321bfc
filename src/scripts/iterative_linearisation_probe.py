"""Rule iterative_linearisation_probe: linear-probe accuracy on the hidden features at every checkpoint of one run."""

from linearlens.experiments.iterative_linearisation import probe_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    w = snakemake.wildcards
    frame = probe_run(snakemake.input.data, snakemake.input.checkpoints, snakemake.params.probe,
                      device)
    frame.insert(0, "setting", w.setting)
    frame.insert(1, "seed", int(w.seed))
    frame.to_csv(snakemake.output[0], index=False)
    log.info("%d probes; final accuracies %s", len(frame),
             frame[frame.step == frame.step.max()][["layer", "probe_accuracy"]].to_dict("records"))
