"""Rule telescoping_lmc_children: two children spawned from the parent at one step, trained to the end, and
the accuracy along the line between their weights (Fig 6)."""

from linearlens.experiments.lmc import children_run, load_state
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    w = snakemake.wildcards
    device = choose_device(device)
    state = load_state(snakemake.input.parent, int(w.step), device)
    curve = children_run(snakemake.input.data, snakemake.params.run, state, int(w.seed), int(w.inner),
                         device)
    for column, value in (("branch", w.branch), ("seed", int(w.seed)), ("inner", int(w.inner))):
        curve.insert(0, column, value)
    curve.to_csv(snakemake.output[0], index=False)
    log.info("spawn step %s: gap %.3f (largest drop), %.3f (midpoint)", w.step,
             curve["gap_max"].iloc[0], curve["gap_midpoint"].iloc[0])
