"""Rule telescoping_smoother_run: one (family, setting, seed) run with the smoother carried along
(Figs 4, 11, 12, 13)."""

from linearlens.experiments.telescoping import smoother_run
from linearlens.train import choose_device, set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    set_threads(snakemake.threads)  # noqa: F821
    w = snakemake.wildcards  # noqa: F821
    records = smoother_run(snakemake.input.data, snakemake.params.run, int(w.seed),  # noqa: F821
                           choose_device(snakemake.params.device))  # noqa: F821
    records.insert(0, "family", w.family)
    records.insert(1, "setting", w.setting)
    records.insert(2, "seed", int(w.seed))
    records.to_csv(snakemake.output[0], index=False)  # noqa: F821
    last = records.iloc[-1]
    log.info("step %d: test MSE %.3g, p_train %.1f, p_test %.1f, smoother gap %.2g", last.step,
             last.test_mse, last.p_train, last.p_test, last.smoother_gap)
