"""Rule prepare_dataset: one config ``datasets:`` entry -> arrays (.npz) + provenance (.json)."""

from linearlens.data.prepare import prepare_dataset
from linearlens.data.prepared import save_prepared
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    arrays, provenance = prepare_dataset(snakemake.params.spec)
    provenance["name"] = snakemake.wildcards.name
    save_prepared(arrays, provenance, snakemake.output.arrays, snakemake.output.provenance)
    log.info("%s: %s", snakemake.wildcards.name,
             {k: v.shape for k, v in arrays.items() if k.startswith(("x_", "y_"))})
