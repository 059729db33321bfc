"""Rule write_fixtures (fixture mode): every raw file, corpus and checkpoint the configuration reads
from resources/, generated in its real format, and their manifest."""

from linearlens.data.fixtures import write_fixtures
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    manifest = write_fixtures(snakemake.output.manifest, snakemake.params.sources, snakemake.params.corpora,
                              snakemake.params.checkpoints)
    log.info("%d fixture files written for %s", len(manifest["files"]), ", ".join(sorted(snakemake.params.sources)))
