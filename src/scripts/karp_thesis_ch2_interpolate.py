"""Rule karp_thesis_ch2_interpolate: linear mode connectivity of pairs kept at one size and trial;
train and test accuracy at each α (CSV)."""

from linearlens.analysis.karp_thesis.ch2 import interpolation_dips
from linearlens.experiments.karp_thesis.ch2 import interpolation_run
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    set_threads(snakemake.threads)
    w = snakemake.wildcards
    curves = interpolation_run(snakemake.input.data, snakemake.params.settings, w.configuration, int(w.trial),
                               int(w.m), list(snakemake.input.states), snakemake.params.interpolation,
                               snakemake.params.device)
    curves.to_csv(snakemake.output[0], index=False)
    dips = interpolation_dips(curves)
    log.info("%d pairs: test accuracy on α ∈ [0, 1] at most %.4f below the endpoints (median %.4f)",
             len(dips), dips.max(), dips.median())
