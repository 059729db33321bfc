"""Rule lmc_children: two children spawned from the parent at one step, trained to the end, and
the accuracy along the line between their weights (Fig 6)."""

from linearlens.experiments.lmc import children_run, load_state
from linearlens.train import choose_device, set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    set_threads(snakemake.threads)  # noqa: F821
    w = snakemake.wildcards  # noqa: F821
    device = choose_device(snakemake.params.device)  # noqa: F821
    state = load_state(snakemake.input.parent, int(w.step), device)  # noqa: F821
    curve = children_run(snakemake.input.data, snakemake.params.run, state, int(w.seed), int(w.inner),  # noqa: F821
                         device)
    for column, value in (("branch", w.branch), ("seed", int(w.seed)), ("inner", int(w.inner))):
        curve.insert(0, column, value)
    curve.to_csv(snakemake.output[0], index=False)  # noqa: F821
    log.info("spawn step %s: gap %.3f (largest drop), %.3f (midpoint)", w.step,
             curve["gap_max"].iloc[0], curve["gap_midpoint"].iloc[0])
