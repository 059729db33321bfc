"""Rule karp_thesis_ch5_stack: Table C.2's run, one model stacked in stages by last stacking and by
adaptive stacking (LAG@probe_steps per stage), from the same first stage (Karp App. C.1.3)."""

import json

import numpy as np

from linearlens.data.prepared import data_label, load_prepared
from linearlens.experiments.karp_thesis.ch5 import Corpus, stacking_run
from linearlens.train.runtime import set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    set_threads(snakemake.threads)
    spec, seed = snakemake.params.spec, int(snakemake.wildcards.seed)
    run = stacking_run(spec, Corpus(load_prepared(snakemake.input.corpus), spec), seed)
    provenance = json.loads(open(snakemake.input.provenance).read())
    settings = {**spec, "seed": seed, "data": data_label(provenance)}
    np.savez(snakemake.output[0], settings=np.array(json.dumps(settings)), **run)
    for strategy, losses in zip(run["strategy"], run["stage_end_loss"]):
        log.info("%s stacking: final validation loss %.4f", strategy, losses[-1])
