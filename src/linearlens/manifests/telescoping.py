"""Jeffares, Curth & van der Schaar (NeurIPS 2024), Deep learning through a telescoping lens: its
figures, the runs each reads, and the claim sets checked on them. Each function of a config below
takes the ``telescoping:`` section of the config."""

from __future__ import annotations

from .. import paths
from ..experiments.settings import branch_runs
from .entries import ClaimSet, Entry
from .telescoping_runs import (  # noqa: F401 (FAMILIES: rules/families.smk generates their rules)
    FAMILIES,
    RUN_APPROXIMATION,
    RUN_LMC_CHILDREN,
    RUN_LMC_PARENT,
    RUN_SMOOTHER,
    RUN_TABULAR,
    approximation_grid,
    children_grid,
    parent_grid,
    smoother_families,
    smoother_ids,
)

TITLE = "Jeffares, Curth & van der Schaar (NeurIPS 2024): Deep learning through a telescoping lens"
FIGURES = "linearlens.figures.telescoping"
CLAIMS = "linearlens.claims.telescoping"


def provenance(*datasets) -> list[str]:
    """The provenance records of the prepared datasets named, each once."""
    return [paths.provenance(name) for name in dict.fromkeys(datasets)]


# --- the run layout: one record file per run ----------------------------------------------------

def approximation_runs(config) -> list[str]:
    """One record file per (setting, learning rate, seed) of Figs 2, 7, 8."""
    return RUN_APPROXIMATION.outputs_of("rows", approximation_grid(config["approximation"]))


def smoother_runs(config, families) -> list[str]:
    """One record file per (family, setting, seed) of the smoother families named."""
    return RUN_SMOOTHER.outputs_of("rows", smoother_ids(config, families))


def tabular_panels(config, figure=None) -> list[str]:
    """The tabular panels (of one figure: Fig 5 houses, Fig 14 the three others)."""
    panels = config.get("tabular", {}).get("panels", {})
    return [name for name, panel in panels.items() if figure in (None, panel["figure"])]


def tabular_runs(config, panels) -> list[str]:
    """One record file per (panel, seed) of the tabular study."""
    runs = [f"{panel}/seed{seed}" for panel in panels for seed in config["tabular"]["seeds"]]
    return RUN_TABULAR.outputs_of("records", runs)


def lmc_children_runs(config) -> list[str]:
    """One interpolation file per (branch, outer seed, spawn step, inner seed) of Fig 6."""
    return RUN_LMC_CHILDREN.outputs_of("curve", children_grid(config["lmc"]))


def lmc_gradient_changes(config) -> list[str]:
    return RUN_LMC_PARENT.outputs_of("gradient_change", parent_grid(config["lmc"]))


# --- what each figure reads ---------------------------------------------------------------------

def _approximation_inputs(config):
    return {"runs": approximation_runs(config), "provenance": provenance(config["approximation"]["dataset"])}


def _smoother_inputs(families):
    def inputs(config):
        datasets = [smoother_families(config)[family]["dataset"] for family in families]
        return {"runs": smoother_runs(config, families), "provenance": provenance(*datasets)}
    return inputs


def _smoother_configured(families):
    return lambda config: all(family in smoother_families(config) for family in families)


def _tabular_inputs(figure):
    def inputs(config):
        panels = tabular_panels(config, figure)
        datasets = [config["tabular"]["panels"][panel]["dataset"] for panel in panels]
        return {"runs": tabular_runs(config, panels), "provenance": provenance(*datasets)}
    return inputs


def _lmc_inputs(config):
    branches = branch_runs(config["lmc"])
    datasets = [config["lmc"]["dataset"]] + [run["pretrain_dataset"] for run in branches.values()
                                             if "pretrain_dataset" in run]
    return {"children": lmc_children_runs(config), "gradient_changes": lmc_gradient_changes(config),
            "provenance": provenance(*datasets)}


def _has(key):
    return lambda config: bool(config.get(key))


def _approximation(figure_id, title, section="", *, plot):
    return Entry(figure_id, title, section, plot=f"{FIGURES}:{plot}", inputs=_approximation_inputs,
                 params=lambda config: config["approximation"]["settings"], configured=_has("approximation"))


def _grokking(figure_id, title, families, caption, section="", *, plot):
    return Entry(figure_id, title, section, plot=f"{FIGURES}:{plot}", caption=caption,
                 inputs=_smoother_inputs(families), params=lambda config: config["grokking"],
                 configured=_smoother_configured(families))


def _double_descent(figure_id, title, families, caption, section=""):
    return Entry(figure_id, title, section, plot=f"{FIGURES}:double_descent_figure", caption=caption,
                 inputs=_smoother_inputs(families), configured=_smoother_configured(families))


def _tabular(figure_id, title, caption, section=""):
    return Entry(figure_id, title, section, plot=f"{FIGURES}:tabular_figure", caption=caption,
                 inputs=_tabular_inputs(figure_id),
                 params=lambda config: {"panels": config["tabular"]["panels"], "search": config["tabular"].get("search"),
                                        "hidden": config["tabular"]["network"]["model"]["hidden"]},
                 configured=lambda config: bool(tabular_panels(config, figure_id)))


GROKKING_FAMILIES = ("polynomial", "large_init", "standard_init")

ENTRIES = [
    Entry("fig_1", "The telescoping model: a network's prediction as the sum of its per-step changes (a drawing)",
          plot=f"{FIGURES}:plot_schematic"),
    _approximation("fig_2", "Approximation error of the telescoping model against the model linearised at "
                   "initialisation", plot="fig_2"),
    _double_descent("fig_3", "Double descent on CIFAR-10 cat/dog, with the smoother's effective parameters",
                    ["dd_cifar_catdog"], "Fig 3: double descent on the CIFAR-10 cat/dog task (each run stops at 100% training accuracy, a "
                    "training-loss plateau or its epoch cap)"),
    _grokking("fig_4", "Grokking against effective parameters: polynomial task, large and standard initialisation",
              GROKKING_FAMILIES,
              "Fig 4: grokking and effective parameters. Polynomial regression with the KBGP24 network "
              "(left), MNIST-style binary task with large initialisation (second) and with standard "
              "initialisation, with and without sigmoid (right; test curves only).", plot="fig_4"),
    _tabular("fig_5", "Neural network against gradient-boosted trees on houses as the test set grows irregular",
             "Fig 5: network vs gradient boosting on 'houses' as irregular test rows are mixed in"),
    Entry("fig_6", "Linear mode connectivity and gradient stabilisation of ResNet-20", plot=f"{FIGURES}:fig_6",
          inputs=_lmc_inputs, params=lambda config: config["lmc"]["model"], configured=_has("lmc")),
    _approximation("fig_7", "Approximation error for five optimisation set-ups", "Appendix D.1", plot="fig_7"),
    _approximation("fig_8", "Test accuracy of the telescoping and linearised models", "Appendix D.1", plot="fig_8"),
    _double_descent("fig_9", "Double descent on MNIST 3 vs 5, with and without label noise",
                    ["dd_mnist_noisy", "dd_mnist_clean"],
                    "Fig 9: MNIST 3 vs 5 with 20% label noise (left) and without (right) (each run stops at 100% "
                    "training accuracy, a training-loss plateau or its epoch cap)", "Appendix D.2"),
    _double_descent("fig_10", "Double descent on MNIST-1D", ["dd_mnist1d"],
                    "Fig 10: double descent on MNIST-1D (classes 0, 1; 15% label noise; a fixed number of "
                    "epochs, no stopping rule)", "Appendix D.2"),
    _grokking("fig_11", "Polynomial grokking for other ε", ["polynomial"],
              "Fig 11: polynomial grokking for several ε.", "Appendix D.2", plot="fig_11"),
    _grokking("fig_12", "Grokking with large initialisation for other α", ["large_init"],
              "Fig 12: grokking with large initialisation for several α.", "Appendix D.2", plot="fig_12"),
    _grokking("fig_13", "Standard initialisation, with and without sigmoid: train and test", ["standard_init"],
              "Fig 13: standard initialisation, with and without sigmoid: train and test.", "Appendix D.2", plot="fig_13"),
    _tabular("fig_14", "Neural network against gradient-boosted trees on three more tabular datasets",
             "Fig 14: network vs gradient boosting on three more tabular datasets", "Appendix D.3"),
]

CLAIM_SETS = [
    ClaimSet(f"{CLAIMS}:approximation_claims", lambda config: {"runs": approximation_runs(config)},
             params=lambda config: config["approximation"]["settings"], configured=_has("approximation")),
    ClaimSet(f"{CLAIMS}:grokking_claims",
             lambda config: {"runs": smoother_runs(config, config["grokking"])},
             params=lambda config: config["grokking"], configured=_has("grokking")),
    ClaimSet(f"{CLAIMS}:double_descent_claims",
             lambda config: {"runs": smoother_runs(config, [f"dd_{name}" for name in config["double_descent"]])},
             params=lambda config: {f"dd_{name}": spec.get("stopping") for name, spec in config["double_descent"].items()},
             configured=_has("double_descent")),
    ClaimSet(f"{CLAIMS}:tabular_claims",
             lambda config: {"runs": tabular_runs(config, tabular_panels(config))},
             params=lambda config: config["tabular"]["panels"], configured=_has("tabular")),
    ClaimSet(f"{CLAIMS}:lmc_claims",
             lambda config: {"children": lmc_children_runs(config),
                             "gradient_changes": lmc_gradient_changes(config)},
             configured=_has("lmc")),
]
