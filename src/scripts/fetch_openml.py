"""Rule fetch_openml: put one OpenML dataset into the openml cache under resources/."""

import json

from linearlens.data.openml_source import load_openml
from linearlens.data.source import OPENML_CACHE_DIR
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    dataset_id = int(snakemake.wildcards.dataset_id)
    _, provenance = load_openml(dataset_id, OPENML_CACHE_DIR)
    log.info("OpenML %d (%s) cached, ARFF md5 %s verified", dataset_id,
             provenance["openml_name"], provenance["md5"])
    with open(snakemake.output[0], "w") as out:
        json.dump(provenance, out, indent=2)
