"""Rule lmc_parent: one parent run of Fig 6, its training state at every spawn step and the
per-layer gradient change over the following epoch."""

import torch

from linearlens.experiments.lmc import parent_run, save_states
from linearlens.train import choose_device, set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    set_threads(snakemake.threads)  # noqa: F821
    device = choose_device(snakemake.params.device)  # noqa: F821
    initial = (torch.load(snakemake.input.initial, map_location=device)  # noqa: F821
               if "initial" in snakemake.input.keys() else None)  # noqa: F821
    states, changes = parent_run(snakemake.input.data, snakemake.params.run,  # noqa: F821
                                 int(snakemake.wildcards.seed), initial, device)  # noqa: F821
    save_states(snakemake.output.states, states)  # noqa: F821
    changes.insert(0, "branch", snakemake.wildcards.branch)  # noqa: F821
    changes.insert(1, "seed", int(snakemake.wildcards.seed))  # noqa: F821
    changes.to_csv(snakemake.output.gradient_change, index=False)  # noqa: F821
    log.info("kept states at steps %s", sorted(states))
