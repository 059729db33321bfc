"""Rule karp_thesis_ch2_interpolate: linear mode connectivity of the pairs kept at every kept size of
one configuration and trial; train and test accuracy at each α (CSV)."""

from linearlens.experiments.karp_thesis.ch2 import interpolation_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    w = snakemake.wildcards
    curves = interpolation_run(snakemake.input.data, snakemake.params.settings, w.configuration, int(w.trial),
                               list(snakemake.input.states), snakemake.params.interpolation, device)
    curves.to_csv(snakemake.output[0], index=False)
    for m, at_size in curves.groupby("m"):
        # the figures and claims read the dips (analysis.interpolation_dips); not imported here, so that
        # editing them reruns no interpolation
        log.info("m = %d: %d pairs at %d α, test accuracy %.4f-%.4f", m, at_size.pair.nunique(),
                 at_size.alpha.nunique(), at_size.test_accuracy.min(), at_size.test_accuracy.max())
