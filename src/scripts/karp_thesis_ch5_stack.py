"""Rule karp_thesis_ch5_stack: Table C.2's run, one model stacked in stages by last stacking and by
adaptive stacking (LAG@probe_steps per stage), from the same first stage (Karp App. C.1.3), on the
configured device; a killed job resumes after its last finished stage or probe, and inside it."""

import json

import numpy as np

from linearlens.data.prepared import data_label, load_prepared
from linearlens.experiments.karp_thesis.ch5 import Corpus, stacking_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = choose_device(claim_device(snakemake.params.device, snakemake.rule))
    set_threads(snakemake.threads)
    spec, seed = snakemake.params.spec, int(snakemake.wildcards.seed)
    training = {**spec, "micro_batch_size": snakemake.params.micro_batch_size}
    run = stacking_run(training, Corpus(load_prepared(snakemake.input.corpus), training), seed,
                       device, snakemake.params.state, inputs_version(snakemake.input))
    provenance = json.loads(open(snakemake.input.provenance).read())
    settings = {**spec, "seed": seed, "data": data_label(provenance)}
    np.savez(snakemake.output[0], settings=np.array(json.dumps(settings)), **run)
    for strategy, losses in zip(run["strategy"], run["stage_end_loss"]):
        log.info("%s stacking: final validation loss %.4f", strategy, losses[-1])
