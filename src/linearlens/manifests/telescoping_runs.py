"""Telescoping lens: its run families (``linearlens.families``), each declared once. rules/families.smk
generates their rules; the manifest (``telescoping``) asks them for the files its figures read."""

from .. import paths
from ..experiments.settings import family_runs, settings_grid
from ..families import CHAPTER, RunFamily

DOCUMENT = "telescoping"


def approximation_grid(experiment: dict) -> dict[str, dict]:
    """One run per (setting, learning rate, seed), seeds innermost: the order the figures read them."""
    return {f"{setting}/lr{lr}/seed{seed}": spec for (setting, lr), spec in settings_grid(experiment).items()
            for seed in experiment["seeds"]}


def experiment_data(experiment: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    return {"data": paths.prepared(experiment["dataset"])}


def smoother_families(config: dict) -> dict[str, dict]:
    """Every family of smoother runs (grokking and double descent), by the name its files live under."""
    return {**config.get("grokking", {}),
            **{f"dd_{name}": spec for name, spec in config.get("double_descent", {}).items()}}


def smoother_grid(config: dict) -> dict[str, dict]:
    """One run per (family, setting, seed) of every smoother family."""
    return {f"{family}/{setting}/seed{seed}": run for family, spec in smoother_families(config).items()
            for setting, run in family_runs(spec).items() for seed in spec["seeds"]}


def smoother_ids(config: dict, families) -> list[str]:
    """The runs of the smoother families named, family by family in the order given."""
    grid = smoother_grid(config)
    return [run_id for family in families for run_id in grid if run_id.startswith(f"{family}/")]


def smoother_data(config: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    return {"data": paths.prepared(smoother_families(config)[wildcards["family"]]["dataset"])}


def search_grid(tabular: dict) -> dict[str, dict]:
    """One hyper-parameter search per (panel, model searched), each with the whole tabular config."""
    return {f"{panel}/search_{model}": tabular for panel in tabular["panels"] for model in tabular["search"]["models"]}


def panel_data(tabular: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    return {"data": paths.prepared(tabular["panels"][wildcards["panel"]]["dataset"])}


# Figs 2, 7, 8: the telescoping and linearised models' approximation error along training.
RUN_APPROXIMATION = RunFamily(
    DOCUMENT, "", "approximation", approximation_grid,
    "{setting}/lr{lr}/seed{seed}", {"rows": ".csv"}, rule_name="telescoping_approximation_run",
    inputs=experiment_data, params=lambda experiment, spec: {"run": spec}, device=True, budget="training",
    resumable=True)

# Figs 3-6, 10-14: grokking and double descent, the network against its telescoping smoother.
RUN_SMOOTHER = RunFamily(
    DOCUMENT, "", "smoother", smoother_grid,
    "{family}/{setting}/seed{seed}", {"rows": ".csv"}, rule_name="telescoping_smoother_run", group=CHAPTER,
    own_folder=False, configured=lambda config: bool(smoother_families(config)), inputs=smoother_data,
    params=lambda config, spec: {"run": spec}, device=True, budget="smoother", resumable=True)

# Fig 9's hyper-parameters, where the tabular panels are searched (paper scale).
RUN_TABULAR_SEARCH = RunFamily(
    DOCUMENT, "", "tabular", search_grid,
    "{panel}/search_{model}", {"search": ".json"}, rule_name="telescoping_tabular_search",
    configured=lambda tabular: bool(tabular.get("search", {}).get("models")), inputs=panel_data,
    params=lambda tabular, spec: {"experiment": tabular, "search": tabular["search"]}, device=True,
    budget="training")

FAMILIES = [RUN_APPROXIMATION, RUN_SMOOTHER, RUN_TABULAR_SEARCH]
