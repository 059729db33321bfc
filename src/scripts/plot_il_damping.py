"""Rule plot_il_damping: Fig 9, damping against generalisation on the quintic."""

import json

import numpy as np
import pandas as pd

from linearlens.data import load_prepared
from linearlens.data.prepare import data_label
from linearlens.figures.iterative_linearisation import plot_damping
from linearlens.workflow import logged_job

with logged_job(snakemake):  # noqa: F821 (snakemake is injected by the script directive)
    spec = snakemake.params.spec  # noqa: F821
    summary = pd.concat([pd.read_csv(path) for path in snakemake.input.summaries])  # noqa: F821
    predictions = {}
    for damping, path in zip(spec["dampings"], snakemake.input.predictions):  # noqa: F821
        with np.load(path) as saved:
            predictions[float(damping)] = saved["predictions"]
    data = load_prepared(snakemake.input.data)  # noqa: F821
    source = data_label(json.loads(open(snakemake.input.provenance[0]).read()))  # noqa: F821
    plot_damping(summary, predictions, data["x_train"][:, 0], data["y_train"], data["x_test"][:, 0], data["y_test"],
                 spec["drawn"], spec["train_rmse_limit"], snakemake.output[0], source)  # noqa: F821
