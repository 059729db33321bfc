"""Rule plot_il_probes: Fig 6, linear probes on the first- and second-layer features."""

import json

import pandas as pd

from linearlens.data.prepare import data_label
from linearlens.figures.iterative_linearisation import plot_probes
from linearlens.workflow import logged_job

with logged_job(snakemake):  # noqa: F821 (snakemake is injected by the script directive)
    probes = pd.concat([pd.read_csv(path, dtype={"K": str}) for path in snakemake.input.probes])  # noqa: F821
    source = data_label(json.loads(open(snakemake.input.provenance[0]).read()))  # noqa: F821
    plot_probes(probes, snakemake.output[0], source, snakemake.params.probe.get("deviations"))  # noqa: F821
