"""Rule karp_thesis_ch5_gather: a growth run's jobs joined into one run file, in the operator space's
order, with the setting and its data source (layout: analysis.karp_thesis.ch5)."""

import json

import numpy as np

from linearlens.data.prepared import data_label
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    parts = [dict(np.load(path, allow_pickle=False)) for path in snakemake.input.parts]
    run = {key: np.concatenate([part[key] for part in parts]) for key in ("operator", "start", "block_size", "init", "loss")}
    run["steps"], run["pre_growth_loss"] = parts[0]["steps"], parts[0]["pre_growth_loss"]
    provenance = json.loads(open(snakemake.input.provenance).read())
    settings = {**snakemake.params.setting, "name": snakemake.wildcards.setting,
                "seed": int(snakemake.wildcards.seed), "data": data_label(provenance)}
    np.savez(snakemake.output[0], settings=np.array(json.dumps(settings)), **run)
    log.info("%d operators, %d recorded steps", len(run["operator"]), len(run["steps"]))
