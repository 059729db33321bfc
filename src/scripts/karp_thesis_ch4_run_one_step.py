"""Rule karp_thesis_ch4_run_one_step: Fig 4.1's single gradient step on V under uniform attention
(W = 0), from the sequences and V₀ its seed draws; V₀, V₁, the task and the settings (.npz)."""

import numpy as np

from linearlens.analysis.karp_thesis.ch4 import read_one_step, structure_summary
from linearlens.experiments.karp_thesis.ch4 import one_step_run
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    set_threads(snakemake.threads)
    spec = snakemake.params.spec
    np.savez_compressed(snakemake.output[0], **one_step_run(spec))
    summary = structure_summary(read_one_step(snakemake.output[0]))
    log.info("L = %d (vocabulary %s), n = %d, N = %d sequences, seed %d, η = %g, V₀ std %g",
             spec["vocabulary_length"], spec["vocabulary"], spec["sequence_length"], spec["sequences"], spec["seed"],
             spec["learning_rate"], spec["init_std"])
    log.info("columns peaking at π(a): %.1f%% of %d; mean V₁[π(a), a] = %.3f (analytic %.3f, per-column RMS "
             "deviation %.3f); largest off-structure entry per column %.3f on average, mean off-structure entry "
             "%.4f; secondary band V₁[π(a), a − 10] %.3f", 100 * summary["fraction_at_permutation"],
             summary["columns"], summary["structure_mean"], summary["analytic_structure_mean"],
             summary["analytic_rms_deviation"], summary["largest_off_structure_mean"],
             summary["off_structure_mean"], summary["secondary_band_mean"])
