"""Rule prepare_dataset: one config ``datasets:`` entry -> arrays (.npz) + provenance (.json), from
the registry's record of its source (the job never imports the registry)."""

from linearlens.data.prepare import prepare_dataset
from linearlens.data.prepared import save_prepared
from linearlens.data.source import Source
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    arrays, provenance = prepare_dataset(snakemake.params.spec, Source.from_record(snakemake.params.source))
    provenance["name"] = snakemake.wildcards.name
    save_prepared(arrays, provenance, snakemake.output.arrays, snakemake.output.provenance)
    log.info("%s: %s", snakemake.wildcards.name,
             {k: v.shape for k, v in arrays.items() if k.startswith(("x_", "y_"))})
