"""Rule download_file: fetch one raw dataset file into resources/, checksum verified."""

from linearlens.data.download import fetch
from linearlens.data.registry import remote_file
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    remote = remote_file(snakemake.wildcards.source, snakemake.wildcards.filename)
    log.info("fetching %s from %s", remote.filename, remote.url)
    fetch(remote, snakemake.output[0])
    log.info("verified %s", remote.checksum)
