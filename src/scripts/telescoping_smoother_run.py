"""Rule telescoping_smoother_run: one (family, setting, seed) run with the smoother carried along
(Figs 4, 11, 12, 13)."""

from linearlens.experiments.telescoping import smoother_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    w = snakemake.wildcards
    records = smoother_run(snakemake.input.data, snakemake.params.run, int(w.seed),
                           choose_device(device), snakemake.params.state,
                           inputs_version(snakemake.input))
    records.insert(0, "family", w.family)
    records.insert(1, "setting", w.setting)
    records.insert(2, "seed", int(w.seed))
    records.to_csv(snakemake.output[0], index=False)
    last = records.iloc[-1]
    log.info("step %d: test MSE %.3g, p_train %.1f, p_test %.1f, smoother gap %.2g", last.step,
             last.test_mse, last.p_train, last.p_test, last.smoother_gap)
