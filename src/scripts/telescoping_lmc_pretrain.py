"""Rule telescoping_lmc_pretrain: the pretrained branch's starting network (Fig 6, SVHN pretraining)."""

import torch

from linearlens.experiments.lmc import pretrain
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    state = pretrain(snakemake.input.data, snakemake.params.run, int(snakemake.wildcards.seed),
                     choose_device(device), snakemake.params.state,
                     inputs_version(snakemake.input))
    torch.save(state, snakemake.output[0])
    log.info("pretrained for %d steps", snakemake.params.run["pretrain"]["steps"])
