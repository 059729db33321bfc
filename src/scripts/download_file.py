"""Rule download_file: fetch one raw dataset file into resources/, checksum verified."""

from linearlens.data.download import fetch
from linearlens.data.registry import remote_file
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    remote = remote_file(snakemake.wildcards.source, snakemake.wildcards.filename)  # noqa: F821
    log.info("fetching %s from %s", remote.filename, remote.url)
    fetch(remote, snakemake.output[0])  # noqa: F821
    log.info("verified %s", remote.checksum)
