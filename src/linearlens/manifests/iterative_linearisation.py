"""Goldwaser & Ge, Understanding sparse feature updates in deep networks using iterative linearisation
(both versions; numbered as the longer one, the shorter version's numbers in the notes): its figures,
the runs each reads, and the claim sets checked on them. Each function of a config below takes the
``iterative_linearisation:`` section of the config."""

from __future__ import annotations

from .. import paths
from .entries import ClaimSet, Entry
from .iterative_linearisation_runs import (  # noqa: F401 (FAMILIES: rules/families.smk generates their rules)
    FAMILIES,
    IDENTITY,
    PROBE,
    RUN,
    RUN_DAMPING,
    damping_grid,
    probe_grid,
    run_grid,
    source_experiment,
)

TITLE = ("Goldwaser & Ge: Understanding sparse feature updates in deep networks using iterative "
         "linearisation")
FIGURES = "linearlens.figures.iterative_linearisation"
CLAIMS = "linearlens.claims.iterative_linearisation"


# --- the run layout: one record file (and checkpoint file) per run --------------------------------

def run_files(config, experiments, output="records") -> list[str]:
    """One record file (or checkpoint file) per (experiment, setting, seed) of the experiments named."""
    return RUN.outputs_of(output, [run_id for run_id in run_grid(config) if run_id.split("/")[0] in experiments])


def probe_files(config) -> list[str]:
    """One probe file per (setting, seed) of the runs the probes read."""
    return PROBE.outputs_of("probes", probe_grid(config))


def damping_files(config, output="summary") -> list[str]:
    return RUN_DAMPING.outputs_of(output, damping_grid(config["damping"]))


def identity_files(config) -> list[str]:
    return IDENTITY.outputs_of("comparison", IDENTITY.grid(config["identity_check"])) if config.get("identity_check") else []


def provenance(config, experiments) -> list[str]:
    return sorted({paths.provenance(config["experiments"][e]["dataset"]) for e in experiments})


def stand_in_network(config, experiments) -> str:
    """The stand-in networks the experiments train, as the figure names them ("" where they
    train the paper's own: no ``stand_in_networks`` entry for their model)."""
    names = config.get("stand_in_networks", {})
    models = dict.fromkeys(config["experiments"][e]["model"]["name"] for e in experiments)
    return "; ".join(names[model] for model in models if model in names)


# --- what each figure reads ---------------------------------------------------------------------

def _training(figure_id, title, experiments, note):
    return Entry(figure_id, title, note=note, plot=f"{FIGURES}:training_figure",
                 inputs=lambda config: {"runs": run_files(config, experiments),
                                        "provenance": provenance(config, experiments)},
                 params=lambda config: {"experiments": {e: config["experiments"][e] for e in experiments},
                                        "network": stand_in_network(config, experiments)},
                 configured=lambda config: all(e in config.get("experiments", {}) for e in experiments))


def _probe_inputs(config):
    return {"probes": probe_files(config), "provenance": provenance(config, [source_experiment(config, "probes")])}


def _filter_inputs(config):
    source = source_experiment(config, "filters")
    return {"checkpoints": run_files(config, [source], "checkpoints"), "provenance": provenance(config, [source])}


def _damping_inputs(config):
    dataset = config["damping"]["dataset"]
    return {"summaries": damping_files(config), "predictions": damping_files(config, "predictions"),
            "data": [paths.prepared(dataset)], "provenance": [paths.provenance(dataset)]}


ENTRIES = [
    Entry("fig_1", "The spectrum of K, from ordinary training to the linearised model (a drawing)",
          note="S-Fig 1", plot=f"{FIGURES}:plot_schematic"),
    _training("fig_2", "Test accuracy for each K, full batch and mini-batch", ["full_batch", "mini_batch"],
              "S-Fig 2"),
    _training("fig_3", "SGD with augmentation: K = 1 against a large K, network and linearised model",
              ["augmented"], "S-Fig 3"),
    _training("fig_4", "ResNet without BatchNorm, and with BatchNorm and augmentation",
              ["resnet_no_bn", "resnet_bn"], "S-Figs 7 and 8 (left and right panels)"),
    _training("fig_5", "Best test accuracy against the training-set size for each K", ["data_scaling"],
              "S-Fig 4"),
    Entry("fig_6", "Linear probes on the layer-1 and layer-2 features", note="longer version only",
          plot=f"{FIGURES}:fig_6", inputs=_probe_inputs,
          params=lambda config: {**config["probes"], "network": stand_in_network(config, [config["probes"]["source"]])},
          configured=lambda config: source_experiment(config, "probes") is not None),
    Entry("fig_7", "First-layer filters' change from initialisation", note="longer version only",
          plot=f"{FIGURES}:fig_7", inputs=_filter_inputs,
          params=lambda config: {**config["filters"], "network": stand_in_network(config, [config["filters"]["source"]])},
          configured=lambda config: source_experiment(config, "filters") is not None, environment="torch"),
    _training("fig_8", "Iterative linearisation with Adam solving each linearisation", ["adam"], "S-Fig 5"),
    Entry("fig_9", "Damped Gauss-Newton on a 1-D quintic: test RMSE against the damping", note="S-Fig 6",
          plot=f"{FIGURES}:fig_9", inputs=_damping_inputs, params=lambda config: config["damping"],
          configured=lambda config: bool(config.get("damping"))),
]


# --- the claims C1-C13, in the order the claims file lists them ---------------------------------

def _runs_of(*experiments):
    return lambda config: {"runs": run_files(config, experiments)}


def _thresholds(config):
    return {"thresholds": config["claim_thresholds"]}


def _claims(function, inputs, configured, params=_thresholds, environment="report"):
    return ClaimSet(f"{CLAIMS}:{function}", inputs, params=params, configured=configured,
                    environment=environment)


def _with(*experiments):
    return lambda config: all(e in config.get("experiments", {}) for e in experiments)


CLAIM_SETS = [
    _claims("full_batch_claims", _runs_of("full_batch"), _with("full_batch")),
    _claims("mini_batch_claims", _runs_of("mini_batch"), _with("mini_batch")),
    _claims("batch_mode_claims", lambda config: {"full_batch": run_files(config, ["full_batch"]),
                                                 "mini_batch": run_files(config, ["mini_batch"])},
            _with("full_batch", "mini_batch")),
    _claims("augmented_claims", _runs_of("augmented"), _with("augmented")),
    _claims("resnet_claims", lambda config: {"without BatchNorm": run_files(config, ["resnet_no_bn"]),
                                             "with BatchNorm": run_files(config, ["resnet_bn"])},
            _with("resnet_no_bn", "resnet_bn")),
    _claims("scaling_claims", _runs_of("data_scaling"), _with("data_scaling"),
            params=lambda config: {**_thresholds(config), "fitted": config["experiments"]["data_scaling"].get(
                "stop_at_train_accuracy", 0.999)}),
    _claims("probe_claims", _probe_inputs,
            lambda config: source_experiment(config, "probes") is not None),
    _claims("filter_claims",
            lambda config: {"checkpoints": run_files(config, [source_experiment(config, "filters")], "checkpoints")},
            lambda config: source_experiment(config, "filters") is not None,
            params=lambda config: {**_thresholds(config), "filters": config["filters"]}, environment="torch"),
    _claims("adam_claims", _runs_of("adam"), _with("adam")),
    _claims("damping_claims", lambda config: {"summaries": damping_files(config)},
            lambda config: bool(config.get("damping")), params=lambda config: config["damping"]),
    _claims("identity_claims", lambda config: {"identity": identity_files(config)},
            lambda config: bool(config.get("identity_check"))),
    _claims("best_accuracy_claims", lambda config: {"runs": run_files(config, config.get("experiments", {}))},
            lambda config: bool(config.get("experiments"))),
]
