"""Telescoping lens: its run families (``linearlens.families``), each declared once. rules/families.smk
generates their rules; the manifest (``telescoping``) asks them for the files its figures read."""

from .. import paths
from ..experiments.settings import settings_grid
from ..families import RunFamily

DOCUMENT = "telescoping"


def approximation_grid(experiment: dict) -> dict[str, dict]:
    """One run per (setting, learning rate, seed), seeds innermost: the order the figures read them."""
    return {f"{setting}/lr{lr}/seed{seed}": spec for (setting, lr), spec in settings_grid(experiment).items()
            for seed in experiment["seeds"]}


def experiment_data(experiment: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    return {"data": paths.prepared(experiment["dataset"])}


# Figs 2, 7, 8: the telescoping and linearised models' approximation error along training.
RUN_APPROXIMATION = RunFamily(
    DOCUMENT, "", "approximation", approximation_grid,
    "{setting}/lr{lr}/seed{seed}", {"rows": ".csv"}, rule_name="telescoping_approximation_run",
    inputs=experiment_data, params=lambda experiment, spec: {"run": spec}, device=True, budget="training",
    resumable=True)

FAMILIES = [RUN_APPROXIMATION]
