"""Rule karp_thesis_ch5_grow: one job's grown models (Karp ch. 5, Sec 5.3): the pretrained model
grown by each of its operators and trained on the same batches on the configured device, with the
validation loss at growth, in the window, at the lag steps and at the end; finished operators, and
the training state of an unfinished one, survive a killed job."""

import numpy as np

from linearlens.data.prepared import load_prepared
from linearlens.experiments.karp_thesis.ch5 import Corpus, growth_arrays, growth_part, pre_growth_loss, read_pretrained
from linearlens.growth.operators import parse_operator
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = choose_device(claim_device(snakemake.params.device, snakemake.rule))
    set_threads(snakemake.threads)
    setting = {**snakemake.params.setting, "micro_batch_size": snakemake.params.micro_batch_size}
    seed = int(snakemake.wildcards.seed)
    corpus = Corpus(load_prepared(snakemake.input.corpus), setting)
    pretrained = read_pretrained(snakemake.input.checkpoint, setting)
    operators = [parse_operator(name, setting["grown_layers"]) for name in snakemake.params.operators]
    losses = growth_part(pretrained, operators, setting, corpus, seed, snakemake.params.state,
                         inputs_version(snakemake.input), device)
    before = pre_growth_loss(pretrained, setting, corpus, device)
    np.savez(snakemake.output[0], **growth_arrays(operators, losses, setting, before))
    log.info("%d operators; validation loss %.4f before growing", len(operators), before)
