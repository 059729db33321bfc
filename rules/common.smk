# Shared set-up: configuration checks, the library on the import path, wildcard constraints,
# and the helpers every rule file uses.
import os
import re
import sys
from pathlib import Path

SRC = Path(workflow.basedir) / "src"
# Jobs import the library from this checkout even when it is not pip-installed (conda envs,
# cluster nodes); the Snakefile itself imports it below.
os.environ.update(
    PYTHONPATH=os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
)
sys.path.insert(0, str(SRC))

from linearlens.config import validate_config
from linearlens.data.registry import OPENML_MARKER, RAW_DIR, SOURCES, raw_paths
from linearlens.train.runtime import HEAP_ENVIRONMENT

# Jobs keep freed heap blocks instead of page-faulting them back every step (see HEAP_ENVIRONMENT);
# a variable the user set wins.
for variable, value in HEAP_ENVIRONMENT.items():
    os.environ.setdefault(variable, value)


validate_config(
    config,
    Path(workflow.basedir) / "config" / "schema" / "config.schema.yaml",
    source=f"configuration ({', '.join(map(str, workflow.configfiles)) or 'config'})",
)

# The four documents, in report order. Paper rule files add their figures and claims here.
PAPERS = {
    "telescoping": "Jeffares, Curth & van der Schaar (NeurIPS 2024): Deep learning through a telescoping lens",
    "iterative_linearisation": "Goldwaser & Ge: Understanding sparse feature updates in deep networks using iterative linearisation",
    "george_thesis": "Thomas George (PhD thesis, 2023): Deep networks training and generalization, insights from linearization",
    "karp_thesis": "Stefani Karp (PhD thesis, 2024): Adapting to structure and using structure to adapt",
}
FIGURES = {paper: [] for paper in PAPERS}  # PNG targets; PDF and JSON sidecar beside each
CLAIMS = {paper: None for paper in PAPERS}  # results/<paper>/claims.json once the paper lands

DATASETS = config["datasets"]
INIT_MODELS = config.get("init_models", {})
NTK_EXTRACTIONS = config.get("ntk_extractions", {})
TREE_ENSEMBLES = config.get("tree_ensembles", {})
TREE_KERNEL_EXTRACTIONS = config.get("tree_kernel_extractions", {})
if set(NTK_EXTRACTIONS) & set(TREE_KERNEL_EXTRACTIONS):
    raise ValueError("configuration: ntk_extractions and tree_kernel_extractions share the names "
                     f"{sorted(set(NTK_EXTRACTIONS) & set(TREE_KERNEL_EXTRACTIONS))}; both write "
                     "to results/kernels/<name>/")
DOWNLOADED_SOURCES = [n for n, s in SOURCES.items() if s.files]
OPENML_IDS = [str(s.openml_id) for s in SOURCES.values() if s.openml_id is not None]


def alternatives(names):
    """A wildcard constraint that matches exactly these names (none: matches nothing)."""
    return "|".join(re.escape(str(name)) for name in sorted(names)) or "(?!)"


wildcard_constraints:
    name=alternatives(DATASETS),
    model=alternatives(INIT_MODELS),
    extraction=alternatives(NTK_EXTRACTIONS),
    ensemble=alternatives(TREE_ENSEMBLES),
    tree_extraction=alternatives(TREE_KERNEL_EXTRACTIONS),
    source=alternatives(DOWNLOADED_SOURCES),
    dataset_id=alternatives(OPENML_IDS),


def lib_code(*subpackages):
    """The library files a rule's result depends on, as inputs: editing one reruns the rule."""
    files = [SRC / "linearlens" / "__init__.py"]
    for subpackage in subpackages:
        path = SRC / "linearlens" / subpackage
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path.with_suffix(".py")]
    return [str(f) for f in files]


def raw_inputs(name):
    """Raw files the dataset ``name`` is prepared from (none for offline sources)."""
    spec = DATASETS[name]
    return [str(p) for p in raw_paths(spec["source"], spec.get("source_options"))]


def prepared(name):
    return f"results/data/{name}.npz"


def datasets_for(paper):
    return [name for name, spec in DATASETS.items() if paper in spec["papers"]]


def paper_outputs(paper):
    """Everything a paper's target builds: its datasets, figures and claims file."""
    outputs = [prepared(name) for name in datasets_for(paper)] + FIGURES[paper]
    return outputs + ([CLAIMS[paper]] if CLAIMS[paper] else [])


def kernel_outputs():
    """Every configured kernel extraction: kernel and summary."""
    return [f"results/kernels/{name}/{file}" for name in NTK_EXTRACTIONS
            for file in ("ntk.npz", "summary.json")] + \
        [f"results/kernels/{name}/{file}" for name in TREE_KERNEL_EXTRACTIONS
         for file in ("tree_kernel.npz", "summary.json")]


def threads_for(kind):
    return config.get("threads", {}).get(kind, 1)


def gpu_resources():
    """Resources for jobs that run on the configured device. They ask for a GPU only when the
    config insists on CUDA (the SLURM executor turns gpu=1 into --gpus=1) and then go to the
    partition named by $SLURM_GPU_PARTITION, if set, instead of the profile's partition."""
    if config["device"] != "cuda":
        return {"gpu": 0}
    gpu_partition = os.environ.get("SLURM_GPU_PARTITION")
    return {"gpu": 1, **({"slurm_partition": gpu_partition} if gpu_partition else {})}


def report_figures():
    return [figure for figures in FIGURES.values() for figure in figures]


def report_claims():
    return [claims for claims in CLAIMS.values() if claims]


# --- telescoping lens ---------------------------------------------------------------------------

from linearlens.experiments.settings import family_runs
from linearlens.experiments.telescoping import settings_grid

TELESCOPING = config.get("telescoping", {})
APPROXIMATION = TELESCOPING.get("approximation")
APPROXIMATION_RUNS = settings_grid(APPROXIMATION) if APPROXIMATION else {}


def approximation_runs():
    """One record file per (setting, learning rate, seed) of Figs 2, 7, 8."""
    return [f"results/telescoping/runs/approximation/{setting}/lr{lr}/seed{seed}.csv"
            for setting, lr in APPROXIMATION_RUNS for seed in APPROXIMATION["seeds"]]


GROKKING = TELESCOPING.get("grokking", {})
DOUBLE_DESCENT = TELESCOPING.get("double_descent", {})
# Every family of smoother runs, by the name its run files live under.
SMOOTHER_FAMILIES = {**GROKKING, **{f"dd_{name}": spec for name, spec in DOUBLE_DESCENT.items()}}
SMOOTHER_RUNS = {family: family_runs(spec) for family, spec in SMOOTHER_FAMILIES.items()}
# Which families each grokking figure shows (a figure is built when all of them are configured).
GROKKING_FIGURES = {"fig_4": ["polynomial", "large_init", "standard_init"], "fig_11": ["polynomial"],
                    "fig_12": ["large_init"], "fig_13": ["standard_init"]}


DOUBLE_DESCENT_FIGURES = {"fig_3": ["dd_cifar_catdog"], "fig_9": ["dd_mnist_noisy", "dd_mnist_clean"],
                          "fig_10": ["dd_mnist1d"]}


def smoother_runs(families):
    """One record file per (family, setting, seed) of the smoother families named."""
    return [f"results/telescoping/runs/{family}/{setting}/seed{seed}.csv"
            for family in families for setting in SMOOTHER_RUNS[family]
            for seed in SMOOTHER_FAMILIES[family]["seeds"]]


def telescoping_figure(name):
    return f"results/telescoping/figures/{name}.png"


TABULAR = TELESCOPING.get("tabular", {})
TABULAR_PANELS = TABULAR.get("panels", {})
# Each tabular figure with the panels it shows (Fig 5: houses; Fig 14: the three others).
TABULAR_FIGURES = {figure: [name for name, panel in TABULAR_PANELS.items() if panel["figure"] == figure]
                   for figure in ("fig_5", "fig_14")}
TABULAR_FIGURES = {figure: panels for figure, panels in TABULAR_FIGURES.items() if panels}


TABULAR_SEARCH = TABULAR.get("search", {})


def tabular_searches(panel):
    """The search results a panel's runs take their hyper-parameters from (none if not searched)."""
    return {model: f"results/telescoping/runs/tabular/{panel}/search_{model}.json"
            for model in TABULAR_SEARCH.get("models", [])}


def tabular_runs(panels):
    """One record file per (panel, seed) of the tabular study."""
    return [f"results/telescoping/runs/tabular/{panel}/seed{seed}.csv"
            for panel in panels for seed in TABULAR["seeds"]]


FIGURES["telescoping"].append(telescoping_figure("fig_1"))  # a drawing: built at every scale
if APPROXIMATION:
    FIGURES["telescoping"] += [telescoping_figure(f) for f in ("fig_2", "fig_7", "fig_8")]
FIGURES["telescoping"] += [telescoping_figure(f) for f, families in
                           {**GROKKING_FIGURES, **DOUBLE_DESCENT_FIGURES}.items()
                           if all(family in SMOOTHER_FAMILIES for family in families)]
from linearlens.experiments.lmc import branch_runs

LMC = TELESCOPING.get("lmc", {})
LMC_BRANCHES = branch_runs(LMC) if LMC else {}


def lmc_parent(branch, seed):
    return f"results/telescoping/runs/lmc/{branch}/seed{seed}/parent.pt"


def lmc_children_runs():
    """One interpolation file per (branch, outer seed, spawn step, inner seed) of Fig 6."""
    return [f"results/telescoping/runs/lmc/{branch}/seed{outer}/spawn{step}/inner{inner}.csv"
            for branch, run in LMC_BRANCHES.items() for outer in run["outer_seeds"]
            for step in run["spawn_steps"] for inner in run["inner_seeds"]]


def lmc_gradient_changes():
    return [f"results/telescoping/runs/lmc/{branch}/seed{outer}/gradient_change.csv"
            for branch, run in LMC_BRANCHES.items() for outer in run["outer_seeds"]]


FIGURES["telescoping"] += [telescoping_figure(f) for f in TABULAR_FIGURES]
if LMC:
    FIGURES["telescoping"].append(telescoping_figure("fig_6"))
if APPROXIMATION or SMOOTHER_FAMILIES or TABULAR or LMC:
    CLAIMS["telescoping"] = "results/telescoping/claims.json"


# --- iterative linearisation -------------------------------------------------------------------

from linearlens.experiments.iterative_linearisation import experiment_runs

IL = config.get("iterative_linearisation", {})
IL_EXPERIMENTS = IL.get("experiments", {})
IL_RUNS = {(experiment, setting): run for experiment, spec in IL_EXPERIMENTS.items()
           for setting, run in experiment_runs(spec).items()}
# Probes and filters read the checkpoints of their source experiment: built when it is configured.
IL_PROBES = IL.get("probes") if IL.get("probes", {}).get("source") in IL_EXPERIMENTS else None
IL_FILTERS = IL.get("filters") if IL.get("filters", {}).get("source") in IL_EXPERIMENTS else None
IL_DAMPING = IL.get("damping")
IL_DIR = "results/iterative_linearisation"
# The experiments each figure draws (a figure is built when all of them are configured).
IL_FIGURE_EXPERIMENTS = {"fig_2": ["full_batch", "mini_batch"], "fig_3": ["augmented"],
                         "fig_4": ["resnet_no_bn", "resnet_bn"], "fig_5": ["data_scaling"], "fig_8": ["adam"]}
IL_FIGURES = {figure: experiments for figure, experiments in IL_FIGURE_EXPERIMENTS.items()
              if all(experiment in IL_EXPERIMENTS for experiment in experiments)}


def il_figure(name):
    return f"{IL_DIR}/figures/{name}.png"


def il_runs(experiments, suffix="csv"):
    """One record file (or checkpoint file) per (experiment, setting, seed)."""
    return [f"{IL_DIR}/runs/{experiment}/{setting}/seed{seed}.{suffix}"
            for (experiment, setting) in IL_RUNS if experiment in experiments
            for seed in IL_EXPERIMENTS[experiment]["seeds"]]


def il_probe_runs():
    """One probe file per (setting, seed) of the runs the probes read."""
    source = IL_PROBES["source"]
    return [f"{IL_DIR}/runs/probes/{source}/{setting}/seed{seed}.csv"
            for (experiment, setting) in IL_RUNS if experiment == source for seed in IL_PROBES["seeds"]]


def il_damping_runs(suffix="csv"):
    return [f"{IL_DIR}/runs/damping/lambda{damping:g}.{suffix}" for damping in IL_DAMPING["dampings"]]


def il_provenance(experiments):
    return sorted({f"results/data/{IL_EXPERIMENTS[e]['dataset']}.json" for e in experiments})


FIGURES["iterative_linearisation"].append(il_figure("fig_1"))  # a drawing: built at every scale
FIGURES["iterative_linearisation"] += [il_figure(figure) for figure in IL_FIGURES]
if IL_PROBES:
    FIGURES["iterative_linearisation"].append(il_figure("fig_6"))
if IL_FILTERS:
    FIGURES["iterative_linearisation"].append(il_figure("fig_7"))
if IL_DAMPING:
    FIGURES["iterative_linearisation"].append(il_figure("fig_9"))
if IL_EXPERIMENTS or IL_DAMPING:
    CLAIMS["iterative_linearisation"] = f"{IL_DIR}/claims.json"

IL_RUN_CODE = lib_code("experiments/iterative_linearisation", "experiments/settings", "linearize", "models", "train",
                       "data/transforms")
