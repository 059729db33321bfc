"""Rule telescoping_tabular_run: one (panel, seed) of the tabular study (Figs 5, 14): its scores,
its provenance (preprocessing, rows, settings, the tree-kernel identity) and its ensembles."""

import json

from linearlens.experiments.tabular import tabular_run
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.train.trees import save_tree_ensemble
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    w = snakemake.wildcards
    searched = {model: json.loads(open(snakemake.input[model]).read())["best"]
                for model in snakemake.params.searched}
    run = tabular_run(snakemake.input.data, snakemake.params.experiment, int(w.seed), searched,
                      choose_device(device))
    records = run.records
    records.insert(0, "panel", w.panel)
    records.insert(1, "seed", int(w.seed))
    records.to_csv(snakemake.output.records, index=False)
    with open(snakemake.output.provenance, "w") as handle:
        json.dump({"panel": w.panel, **run.provenance}, handle, indent=1)
    for library, (model, x_train, y_train) in run.ensembles.items():
        save_tree_ensemble(snakemake.output[f"ensemble_{library}"], model,
                           {"library": library, "panel": w.panel, "seed": int(w.seed),
                            "x_train": x_train, "y_train": y_train})
    at_zero = records[records["p"] == 0].drop_duplicates("model").set_index("model")["mse"]
    log.info("MSE at p = 0: %s; telescoped sum vs predict: %s",
             ", ".join(f"{m} {v:.3g}" for m, v in at_zero.items()),
             run.provenance["telescoped_vs_predict_max_relative_error"])
