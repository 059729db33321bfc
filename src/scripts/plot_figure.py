"""Rules generated from the manifests (rules/manifests.smk): draw or plot one figure with the
function its manifest entry names."""

import importlib
import json

from linearlens.data.prepared import data_label
from linearlens.manifests.jobs import FigureJob
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    module, function = snakemake.params.plot.split(":")
    plot = getattr(importlib.import_module(module), function)
    inputs = {name: list(snakemake.input[name]) for name in snakemake.params.input_names}
    if not inputs:  # a drawing
        plot(snakemake.output[0])
    else:
        labels = (data_label(json.loads(open(path).read())) for path in inputs.get("provenance", []))
        # a figure whose runs generate their own data names it in its manifest entry
        data_source = "; ".join(dict.fromkeys(labels)) or snakemake.params.get("data_source", "")
        # Every image says at which scale it was made, before the data it names.
        data_source = f"{snakemake.params.scale} scale — {data_source}"
        plot(FigureJob(snakemake.params.figure, inputs, snakemake.params.spec, snakemake.output[0],
                       snakemake.params.caption, data_source, log))
    log.info("%s by %s", snakemake.output[0], snakemake.params.plot)
