"""Rule karp_thesis_ch5_pretrain: the L-layer language model a growing setting grows, pretrained on
the corpus from its seed, saved with its optimiser state and step (Karp ch. 5, App. C.1)."""

from linearlens.data.prepared import load_prepared
from linearlens.experiments.karp_thesis.ch5 import Corpus, pretrain
from linearlens.train.runtime import save_checkpoint, set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    set_threads(snakemake.threads)
    setting = snakemake.params.setting
    corpus = Corpus(load_prepared(snakemake.input.corpus), setting)
    state = pretrain(setting, corpus, int(snakemake.wildcards.seed))
    save_checkpoint(snakemake.output[0], **state)
    log.info("%d layers, step %d: validation loss %.4f", setting["layers"], state["step"], state["validation_loss"])
