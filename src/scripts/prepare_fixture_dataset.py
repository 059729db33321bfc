"""Rule prepare_fixture_dataset (fixture mode): rule prepare_dataset's job on generated files, each
checked against the fixture manifest instead of the published checksums and counts."""

import json

from linearlens.data.fixtures import trusted_source, trusted_spec
from linearlens.data.prepare import prepare_dataset
from linearlens.data.prepared import save_prepared
from linearlens.data.source import Source
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    manifest = json.loads(open(snakemake.input.manifest).read())
    source = trusted_source(Source.from_record(snakemake.params.source), manifest)
    arrays, provenance = prepare_dataset(trusted_spec(snakemake.params.spec, manifest), source)
    provenance.update(name=snakemake.wildcards.name, fixture=manifest["note"])
    save_prepared(arrays, provenance, snakemake.output.arrays, snakemake.output.provenance)
    log.info("%s (fixture): %s", snakemake.wildcards.name,
             {k: v.shape for k, v in arrays.items() if k.startswith(("x_", "y_"))})
