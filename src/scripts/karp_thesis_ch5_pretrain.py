"""Rule karp_thesis_ch5_pretrain: the L-layer language model a growing setting grows, pretrained on
the corpus from its seed on the configured device, saved with its optimiser state and step (Karp
ch. 5, App. C.1); a killed job resumes inside its steps from the saved training state."""

from linearlens.data.prepared import load_prepared
from linearlens.experiments.karp_thesis.ch5 import Corpus, pretrain
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, save_checkpoint, set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = choose_device(claim_device(snakemake.params.device, snakemake.rule))
    set_threads(snakemake.threads)
    setting = {**snakemake.params.setting, "micro_batch_size": snakemake.params.micro_batch_size}
    corpus = Corpus(load_prepared(snakemake.input.corpus), setting)
    state = pretrain(setting, corpus, int(snakemake.wildcards.seed), device,
                     snakemake.params.state, inputs_version(snakemake.input))
    save_checkpoint(snakemake.output[0], **state)
    log.info("%d layers, step %d: validation loss %.4f", setting["layers"], state["step"], state["validation_loss"])
