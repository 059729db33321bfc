"""Rule karp_thesis_ch2_interpolate: linear mode connectivity of the pairs kept at every kept size of
one configuration and trial; train and test accuracy at each α (CSV)."""

from linearlens.analysis.karp_thesis.ch2 import interpolation_dips
from linearlens.experiments.karp_thesis.ch2 import interpolation_run
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    set_threads(snakemake.threads)
    w = snakemake.wildcards
    curves = interpolation_run(snakemake.input.data, snakemake.params.settings, w.configuration, int(w.trial),
                               list(snakemake.input.states), snakemake.params.interpolation, snakemake.params.device)
    curves.to_csv(snakemake.output[0], index=False)
    for m, at_size in curves.groupby("m"):
        dips = interpolation_dips(at_size)
        log.info("m = %d, %d pairs: test accuracy on α ∈ [0, 1] at most %.4f below the endpoints (median %.4f)",
                 m, len(dips), dips.max(), dips.median())
