"""Rule telescoping_approximation_run: one (setting, learning rate, seed) run of Figs 2, 7, 8."""

from linearlens.experiments.telescoping import approximation_run
from linearlens.train import choose_device, set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    set_threads(snakemake.threads)  # noqa: F821
    w = snakemake.wildcards  # noqa: F821
    records = approximation_run(snakemake.input.data, snakemake.params.run, int(w.seed),  # noqa: F821
                                choose_device(snakemake.params.device))  # noqa: F821
    records.insert(0, "setting", w.setting)
    records.insert(1, "lr", snakemake.params.run["optimiser"]["lr"])  # noqa: F821
    records.insert(2, "seed", int(w.seed))
    records.to_csv(snakemake.output[0], index=False)  # noqa: F821
    last = records.iloc[-1]
    log.info("step %d: telescoping error %.3g, linearised error %.3g", last.step,
             last.error_telescoping, last.error_linearised)
