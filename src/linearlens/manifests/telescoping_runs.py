"""Telescoping lens: its run families (``linearlens.families``), each declared once. rules/families.smk
generates their rules; the manifest (``telescoping``) asks them for the files its figures read."""

from .. import paths
from ..experiments.settings import branch_runs, family_runs, settings_grid
from ..families import CHAPTER, CHAPTER_RUNS, RUN_STATE, RunFamily, spec_as

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


def tabular_grid(tabular: dict) -> dict[str, dict]:
    """One run per (panel, seed), each with the whole tabular config."""
    return {f"{panel}/seed{seed}": tabular for panel in tabular["panels"] for seed in tabular["seeds"]}


def searched_models(tabular: dict) -> list[str]:
    """The models whose hyper-parameters a search picks (none below paper scale)."""
    return list(tabular.get("search", {}).get("models", []))


def tabular_inputs(tabular: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    """The panel's dataset and its searches' results, one input per model searched."""
    panel = wildcards["panel"]
    searches = {model: RUN_TABULAR_SEARCH.output("search", f"{panel}/search_{model}")
                for model in searched_models(tabular)}
    return {**searches, **panel_data(tabular, wildcards, spec)}


def pretrain_grid(lmc: dict) -> dict[str, dict]:
    """One pretraining per outer seed of the pretrained branch, each with the whole LMC config (the
    models its jobs build)."""
    return {f"pretrained/seed{seed}": lmc for seed in branch_runs(lmc)["pretrained"]["outer_seeds"]}


def parent_grid(lmc: dict) -> dict[str, dict]:
    """One parent run per (branch, outer seed)."""
    return {f"{branch}/seed{seed}": lmc for branch, run in branch_runs(lmc).items() for seed in run["outer_seeds"]}


def children_grid(lmc: dict) -> dict[str, dict]:
    """One pair of children per (branch, outer seed, spawn step, inner seed)."""
    return {f"{branch}/seed{seed}/spawn{step}/inner{inner}": lmc for branch, run in branch_runs(lmc).items()
            for seed in run["outer_seeds"] for step in run["spawn_steps"] for inner in run["inner_seeds"]}


def branch_run(lmc: dict, wildcards: dict, spec: dict) -> dict:
    """A job's params: the settings of the branch it trains."""
    return {"run": branch_runs(lmc)[wildcards["branch"]]}


def parent_inputs(lmc: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    """The LMC dataset and, on the pretrained branch, the pretrained network it starts from."""
    initial = ({"initial": RUN_LMC_PRETRAIN.output("model", f"pretrained/seed{wildcards['seed']}")}
               if wildcards["branch"] == "pretrained" else {})
    return {**initial, "data": paths.prepared(lmc["dataset"])}


def children_inputs(lmc: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    parent = RUN_LMC_PARENT.output("states", f"{wildcards['branch']}/seed{wildcards['seed']}")
    return {"parent": parent, "data": paths.prepared(lmc["dataset"])}


# Figs 2, 7, 8: the telescoping and linearised models' approximation error along training.
RUN_APPROXIMATION = RunFamily(
    DOCUMENT, "", "approximation", approximation_grid,
    "{setting}/lr{lr}/seed{seed}", {"rows": ".csv"}, rule_name="telescoping_approximation_run",
    inputs=experiment_data, params=spec_as("run"), device=True, budget="training", state=RUN_STATE)

# Figs 3-6, 10-14: grokking and double descent, the network against its telescoping smoother.
RUN_SMOOTHER = RunFamily(
    DOCUMENT, "", "smoother", smoother_grid,
    "{family}/{setting}/seed{seed}", {"rows": ".csv"}, rule_name="telescoping_smoother_run", group=CHAPTER,
    folder=CHAPTER_RUNS, configured=lambda config: bool(smoother_families(config)), inputs=smoother_data,
    params=spec_as("run"), device=True, budget="smoother", state=RUN_STATE)

# Fig 9's hyper-parameters, where the tabular panels are searched (paper scale).
RUN_TABULAR_SEARCH = RunFamily(
    DOCUMENT, "", "tabular", search_grid,
    "{panel}/search_{model}", {"search": ".json"}, rule_name="telescoping_tabular_search",
    configured=lambda tabular: bool(tabular.get("search", {}).get("models")), inputs=panel_data,
    params=lambda tabular, wildcards, spec: {"experiment": tabular, "search": tabular["search"]}, device=True,
    budget="training")

# Figs 5, 14: the tabular panels' runs (network, trees, boosting), a fitted ensemble per boosting library.
RUN_TABULAR = RunFamily(
    DOCUMENT, "", "tabular", tabular_grid, "{panel}/seed{seed}",
    {"records": ".csv", "provenance": ".json", "ensemble_{library}": "_{library}.joblib"},
    rule_name="telescoping_tabular_run", expands=lambda tabular: {"library": list(tabular.get("boosting", {}))},
    configured=lambda tabular: bool(tabular.get("panels")), inputs=tabular_inputs,
    params=lambda tabular, wildcards, spec: {"experiment": tabular, "searched": searched_models(tabular)}, device=True,
    records_script=False, budget="training")

# Fig 6's linear mode connectivity: the pretrained branch's network, pretrained once per outer seed,
RUN_LMC_PRETRAIN = RunFamily(
    DOCUMENT, "", "lmc", pretrain_grid, "pretrained/seed{seed}", {"model": "/pretrained.pt"},
    rule_name="telescoping_lmc_pretrain", configured=lambda lmc: "pretrained" in lmc,
    inputs=lambda lmc, wildcards, spec: {"data": paths.prepared(branch_runs(lmc)["pretrained"]["pretrain_dataset"])},
    params=lambda lmc, wildcards, spec: {"run": branch_runs(lmc)["pretrained"]}, device=True, records_script=False,
    budget="training", log_name="lmc/pretrained/seed{seed}/pretrain", state="lmc/pretrained/seed{seed}/pretrain.pt")
# each branch's parent, trained once per outer seed (its states at the spawn steps),
RUN_LMC_PARENT = RunFamily(
    DOCUMENT, "", "lmc", parent_grid, "{branch}/seed{seed}",
    {"states": "/parent.pt", "gradient_change": "/gradient_change.csv"}, rule_name="telescoping_lmc_parent",
    configured=bool, inputs=parent_inputs, params=branch_run, device=True, records_script=False,
    budget="training", state="lmc/{branch}/seed{seed}/parent.pt")
# and two children spawned from each parent state, their interpolation's error.
RUN_LMC_CHILDREN = RunFamily(
    DOCUMENT, "", "lmc", children_grid, "{branch}/seed{seed}/spawn{step}/inner{inner}", {"curve": ".csv"},
    rule_name="telescoping_lmc_children", configured=bool, inputs=children_inputs, params=branch_run,
    device=True, records_script=False, budget="training")

FAMILIES = [RUN_APPROXIMATION, RUN_SMOOTHER, RUN_TABULAR_SEARCH, RUN_TABULAR, RUN_LMC_PRETRAIN, RUN_LMC_PARENT,
            RUN_LMC_CHILDREN]
