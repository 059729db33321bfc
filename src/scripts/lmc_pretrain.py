"""Rule lmc_pretrain: the pretrained branch's starting network (Fig 6, SVHN pretraining)."""

import torch

from linearlens.experiments.lmc import pretrain
from linearlens.train import choose_device, set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    set_threads(snakemake.threads)  # noqa: F821
    state = pretrain(snakemake.input.data, snakemake.params.run, int(snakemake.wildcards.seed),  # noqa: F821
                     choose_device(snakemake.params.device))  # noqa: F821
    torch.save(state, snakemake.output[0])  # noqa: F821
    log.info("pretrained for %d steps", snakemake.params.run["pretrain"]["steps"])  # noqa: F821
