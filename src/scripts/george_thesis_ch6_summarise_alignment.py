"""Rule george_thesis_ch6_summarise_alignment: a run's spectra, trace ratios and alignments under
every centring, derived from its raw Grams (so other centrings or spectra need no training)."""

import numpy as np

from linearlens.experiments.george_thesis.ch6 import spectrum_summary
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    set_threads(snakemake.threads)
    with np.load(snakemake.input.grams) as saved:
        summary, curves = spectrum_summary(dict(saved), snakemake.params.centring)
    summary.to_csv(snakemake.output.summary, index=False)
    np.savez(snakemake.output.trace_ratios, **curves)
    log.info("%d Grams summarised (%s centring)", len(summary), snakemake.params.centring)
