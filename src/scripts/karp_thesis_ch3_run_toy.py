"""Rule karp_thesis_ch3_run_toy: Fig 3.3's run, the LSA model trained by SGD on fresh synthetic
samples (Algorithm 3.1); a row per evaluation (CSV)."""

from linearlens.analysis.karp_thesis.ch3 import toy_linear_ceiling, toy_settings_text
from linearlens.experiments.karp_thesis.ch3 import toy_run
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    set_threads(snakemake.threads)
    spec = snakemake.params.spec
    log.info("%s; %s route", toy_settings_text(spec), spec["route"])
    frame = toy_run(spec, log)
    frame.to_csv(snakemake.output[0], index=False)
    for row in frame.iloc[:: max(1, len(frame) // 10)].itertuples():
        log.info("step %d: w·w* %.4f, ‖w⊥‖ %.4f, b %.4f, |b|/(w·w*) %.3f, test accuracy %.4f", row.step,
                 row.w_dot_wstar, row.w_perp_norm, row.b, row.ratio, row.test_accuracy)
    last = frame.iloc[-1]
    log.info("final (step %d): test accuracy %.4f against the linear classifier's %.4f; b peaked at %.3g, "
             "positive after %d steps", last.step, last.test_accuracy, toy_linear_ceiling(spec), last.b_peak,
             last.b_positive_steps)
