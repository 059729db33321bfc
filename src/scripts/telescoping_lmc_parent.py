"""Rule telescoping_lmc_parent: one parent run of Fig 6, its training state at every spawn step and the
per-layer gradient change over the following epoch."""

from linearlens.experiments.lmc import parent_run, save_states
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, load_checkpoint, set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    device = choose_device(device)
    initial = (load_checkpoint(snakemake.input.initial, map_location=device)
               if "initial" in snakemake.input.keys() else None)
    states, changes = parent_run(snakemake.input.data, snakemake.params.run, int(snakemake.wildcards.seed),
                                 initial, device, snakemake.params.state, inputs_version(snakemake.input))
    save_states(snakemake.output.states, states)
    changes.insert(0, "branch", snakemake.wildcards.branch)
    changes.insert(1, "seed", int(snakemake.wildcards.seed))
    changes.to_csv(snakemake.output.gradient_change, index=False)
    log.info("kept states at steps %s", sorted(states))
