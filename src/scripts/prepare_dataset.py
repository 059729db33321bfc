"""Rule prepare_dataset: one config ``datasets:`` entry -> arrays (.npz) + provenance (.json)."""

from linearlens.data import prepare_dataset, save_prepared
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    arrays, provenance = prepare_dataset(snakemake.params.spec)  # noqa: F821
    provenance["name"] = snakemake.wildcards.name  # noqa: F821
    save_prepared(arrays, provenance, snakemake.output.arrays, snakemake.output.provenance)  # noqa: F821
    log.info("%s: %s", snakemake.wildcards.name,  # noqa: F821
             {k: v.shape for k, v in arrays.items() if k.startswith(("x_", "y_"))})
