"""Iterative linearisation: its run families (``linearlens.families``), each declared once.
rules/families.smk generates their rules; the manifest (``iterative_linearisation``) asks them for
the files its figures read."""

from .. import paths
from ..experiments.settings import experiment_runs
from ..families import CHAPTER, CHAPTER_RUNS, RUN_STATE, RunFamily, one_run, spec_as

DOCUMENT = "iterative_linearisation"


def source_experiment(config: dict, analysis: str) -> str | None:
    """The experiment whose checkpoints the probes or filters read, if it is configured."""
    source = config.get(analysis, {}).get("source")
    return source if source in config.get("experiments", {}) else None


def run_grid(config: dict) -> dict[str, dict]:
    """One run per (experiment, setting, seed), each with its setting's spec."""
    return {f"{name}/{setting}/seed{seed}": run for name, experiment in config.get("experiments", {}).items()
            for setting, run in experiment_runs(experiment).items() for seed in experiment["seeds"]}


def run_data(config: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    return {"data": paths.prepared(config["experiments"][wildcards["experiment"]]["dataset"])}


def damping_grid(damping: dict) -> dict[str, dict]:
    """One run per damping, each with the whole damping config as its spec."""
    return {f"lambda{value:g}": damping for value in damping["dampings"]}


def group_data(group_config: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    return {"data": paths.prepared(group_config["dataset"])}


def probe_grid(config: dict) -> dict[str, dict]:
    """One probe per (setting, seed) of the source experiment's runs; its spec is the experiment's
    config (the models the probe builds)."""
    source = source_experiment(config, "probes")
    experiment = config["experiments"][source]
    return {f"{source}/{setting}/seed{seed}": experiment
            for setting in experiment_runs(experiment) for seed in config["probes"]["seeds"]}


def probe_inputs(config: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    """The probed run's checkpoints and its dataset."""
    checkpoints = paths.runs(DOCUMENT, wildcards["experiment"], wildcards["setting"], f"seed{wildcards['seed']}.pt")
    return {"checkpoints": checkpoints, "data": paths.prepared(spec["dataset"])}


# Figs 2-8 and the claims: iterative linearisation's training runs, one per (experiment, setting,
# seed). Its params are those of the rule it replaced (the device inside the run's spec, no recorded
# script), so the runs it already made stay current.
RUN = RunFamily(
    DOCUMENT, "", "run", run_grid,
    "{experiment}/{setting}/seed{seed}", {"records": ".csv", "checkpoints": ".pt"},
    rule_name="iterative_linearisation_run", group=CHAPTER, folder=CHAPTER_RUNS,
    configured=lambda config: bool(run_grid(config)), inputs=run_data, params=spec_as("run"),
    device=True, device_in="run", records_script=False, budget="training", state=RUN_STATE)
# The claim that K = 1 is ordinary training, checked on one small run.
IDENTITY = RunFamily(
    DOCUMENT, "", "identity", one_run("k1_vs_ordinary"), "k1_vs_ordinary", {"comparison": ".json"},
    rule_name="iterative_linearisation_k1_identity", group="identity_check", configured=bool,
    inputs=group_data, params=lambda check, wildcards, spec: {"check": check}, records_script=False,
    budget="training", threads="", log_name="identity")
# Fig 9: damped Gauss-Newton on a 1-D quintic, one run per damping.
RUN_DAMPING = RunFamily(
    DOCUMENT, "", "damping", damping_grid,
    "lambda{damping}", {"summary": ".csv", "predictions": ".npz"}, rule_name="iterative_linearisation_damping",
    configured=bool, inputs=group_data, budget="training")
# Linear probes of the source experiment's checkpoints, per layer and step.
PROBE = RunFamily(
    DOCUMENT, "", "probes", probe_grid,
    "{experiment}/{setting}/seed{seed}", {"probes": ".csv"}, rule_name="iterative_linearisation_probe",
    group=CHAPTER, configured=lambda config: source_experiment(config, "probes") is not None,
    inputs=probe_inputs, params=lambda config, wildcards, spec: {"probe": config["probes"]}, device=True,
    budget="training")

FAMILIES = [RUN, IDENTITY, RUN_DAMPING, PROBE]
