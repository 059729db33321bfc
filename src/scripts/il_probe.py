"""Rule il_probe: linear-probe accuracy on the hidden features at every checkpoint of one run."""

from linearlens.experiments.iterative_linearisation import probe_run
from linearlens.train import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    set_threads(snakemake.threads)  # noqa: F821
    w = snakemake.wildcards  # noqa: F821
    frame = probe_run(snakemake.input.data, snakemake.input.checkpoints, snakemake.params.probe,  # noqa: F821
                      snakemake.params.device)  # noqa: F821
    frame.insert(0, "setting", w.setting)
    frame.insert(1, "seed", int(w.seed))
    frame.to_csv(snakemake.output[0], index=False)  # noqa: F821
    log.info("%d probes; final accuracies %s", len(frame),
             frame[frame.step == frame.step.max()][["layer", "probe_accuracy"]].to_dict("records"))
