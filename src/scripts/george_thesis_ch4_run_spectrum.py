"""Rule george_thesis_ch4_run_spectrum (Fig 4.4c): the selected run of the tracked optimiser, with the spectrum
of one layer's empirical Fisher against KFAC's, EKFAC's and EKFAC-ra's in a KFE fixed at the start."""

from linearlens.analysis.george_thesis.ch4 import read_runs, run_name, selected_run
from linearlens.experiments.george_thesis.ch4 import spectrum_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    spec = snakemake.params.settings
    run = selected_run(read_runs(snakemake.input.search), spec, spec["spectrum"]["optimiser"])
    log.info("the trajectory: %s", run_name(run))
    frame = spectrum_run(snakemake.input.data, spec, run, device)
    frame.to_csv(snakemake.output[0], index=False)
    tracked = frame.dropna(subset=["kfac_distance"])
    log.info("%d tracked steps; final ℓ2 distances KFAC %.4g, EKFAC %.4g, EKFAC-ra %.4g (‖λ(G)‖ %.4g)", len(tracked),
             *tracked.iloc[-1][["kfac_distance", "ekfac_distance", "ekfac_ra_distance", "spectrum_norm"]])
