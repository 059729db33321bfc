"""Rule plot_il_training: Figs 2, 3, 4, 5 and 8 from the runs of their experiments."""

import json

import pandas as pd

from linearlens.data.prepare import data_label
from linearlens.figures import iterative_linearisation as figures
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    runs = pd.concat([pd.read_csv(path, dtype={"K": str}) for path in snakemake.input.runs])  # noqa: F821
    by_experiment = dict(tuple(runs.groupby("experiment")))
    experiments = snakemake.params.experiments  # noqa: F821
    source = "; ".join(data_label(json.loads(open(path).read())) for path in snakemake.input.provenance)  # noqa: F821
    deviations = " ".join(spec["deviations"] for spec in experiments.values() if spec.get("deviations")) or None
    figure, out = snakemake.wildcards.figure, snakemake.output[0]  # noqa: F821
    if figure == "fig_2":
        figures.plot_k_sweeps(by_experiment["full_batch"], by_experiment["mini_batch"], out, source, deviations)
    elif figure == "fig_3":
        figures.plot_augmented(by_experiment["augmented"], out, source, deviations)
    elif figure == "fig_4":
        figures.plot_resnets(by_experiment["resnet_no_bn"], by_experiment["resnet_bn"], out, source, deviations)
    elif figure == "fig_5":
        figures.plot_data_scaling(by_experiment["data_scaling"], out, source, deviations)
    else:
        figures.plot_adam(by_experiment["adam"], out, source, deviations)
    log.info("%s: %d runs plotted", figure, runs.groupby(["experiment", "setting", "seed"]).ngroups)
