"""Rule george_thesis_ch4_run_frequency (Fig 4.4a-b): one optimiser retrained at another recompute frequency with
the hyper-parameters its search selected (the lowest final training loss)."""

from linearlens.analysis.george_thesis.ch4 import read_runs, run_name, selected_run
from linearlens.experiments.george_thesis.ch4 import training_runs
from linearlens.train.devices import claim_device
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    spec = snakemake.params.settings
    run = selected_run(read_runs(snakemake.input.search), spec, snakemake.wildcards.optimiser,
                       int(snakemake.wildcards.freq))
    log.info("selected from the search: %s", run_name(run))
    frame = training_runs(snakemake.input.data, spec, [run], device)
    frame.to_csv(snakemake.output[0], index=False)
    last = frame.iloc[-1]
    log.info("%s at epoch %g: training loss %.4g, %.2f s", last["ended"], last["epoch"], last["train_loss"],
             last["seconds"])
