"""Rule telescoping_approximation_run: one (setting, learning rate, seed) run of Figs 2, 7, 8."""

from linearlens.experiments.telescoping import approximation_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    w = snakemake.wildcards
    records = approximation_run(snakemake.input.data, snakemake.params.run, int(w.seed),
                                choose_device(device), snakemake.params.state,
                                inputs_version(snakemake.input))
    records.insert(0, "setting", w.setting)
    records.insert(1, "lr", snakemake.params.run["optimiser"]["lr"])
    records.insert(2, "seed", int(w.seed))
    records.to_csv(snakemake.output[0], index=False)
    last = records.iloc[-1]
    log.info("step %d: telescoping error %.3g, linearised error %.3g", last.step,
             last.error_telescoping, last.error_linearised)
