# Shared set-up: configuration checks, the library on the import path, wildcard constraints,
# and the helpers every rule file uses.
import dataclasses
import importlib
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

from linearlens import paths
from linearlens.canonical import canonical
from linearlens.cluster import budget_resources
from linearlens.code_inputs import function_code, module_code, refresh_records, script_code
from linearlens.config import scale_files, validate_config, workflow_config
from linearlens.families import DOCUMENTS
from linearlens.data.registry import OPENML_MARKER, RAW_DIR, SOURCES, get_source, raw_paths
from linearlens.data.spurious import IMAGE_ARCHIVES
from linearlens.train.heap import HEAP_ENVIRONMENT
from linearlens.scheduling import event_driven_scheduling

# A local run selects jobs when a job ends, from every ready job, not on Snakemake's job-rate timers
# (linearlens.scheduling; profiles/default says what the timers cost).
onstart:
    event_driven_scheduling(workflow)


# Jobs keep freed heap blocks instead of page-faulting them back every step (see HEAP_ENVIRONMENT);
# a variable the user set wins.
for variable, value in HEAP_ENVIRONMENT.items():
    os.environ.setdefault(variable, value)


# base <- scale overlay(s) <- the user's --configfile files <- --config values (linearlens.config).
# The composed configuration replaces what Snakemake merged from the command line, in place.
CONFIG_DIR = Path(workflow.basedir) / "config"
_composed = workflow_config(workflow.overwrite_configfiles, dict(workflow.config_settings.config), CONFIG_DIR)
config.clear()
config.update(_composed)
validate_config(
    config,
    CONFIG_DIR / "schema" / "config.schema.yaml",
    source=f"configuration (scale {config.get('scale')}: config/base.yaml and its overlays"
    + "".join(f", {path}" for path in workflow.overwrite_configfiles) + ")",
)
# Each module's code record (paths.code_record) current before any job's inputs are read, and only
# once the configuration is valid (an invalid one writes nothing).
refresh_records()

# The four documents, in report order, each with its manifest (every figure and table it has).
# Rule files add the figures and tables this config builds, and the claims file, here.
MANIFESTS = {document: importlib.import_module(f"linearlens.manifests.{document}") for document in DOCUMENTS}
PAPERS = {document: manifest.TITLE for document, manifest in MANIFESTS.items()}
FIGURES = {paper: [] for paper in PAPERS}  # PNG targets; PDF and JSON sidecar beside each
TABLES = {paper: [] for paper in PAPERS}  # CSV targets (paths.table)
CLAIMS = {paper: None for paper in PAPERS}  # the claims file (paths.claims) once the paper lands
# Outputs only a paper's opt-in target (paper_<paper>_unreleased) builds: they need inputs the
# workflow cannot make (Karp ch. 5's unreleased checkpoints), so "everything" runs to its end.
UNRELEASED = {paper: [] for paper in PAPERS}

DATASETS = config["datasets"]
INIT_MODELS = config.get("init_models", {})
NTK_EXTRACTIONS = config.get("ntk_extractions", {})
TREE_ENSEMBLES = config.get("tree_ensembles", {})
TREE_KERNEL_EXTRACTIONS = config.get("tree_kernel_extractions", {})
if set(NTK_EXTRACTIONS) & set(TREE_KERNEL_EXTRACTIONS):
    raise ValueError("configuration: ntk_extractions and tree_kernel_extractions share the names "
                     f"{sorted(set(NTK_EXTRACTIONS) & set(TREE_KERNEL_EXTRACTIONS))}; both write "
                     "the kernel extraction of that name")
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


def source_code(source):
    """Code inputs of a dataset's preparation: the script's closure and its source's reader."""
    reader = get_source(source).reader_module
    return sorted({*script_code("prepare_dataset.py"), *(module_code(reader) if reader else [])})


def raw_inputs(name):
    """Raw files the dataset ``name`` is prepared from (none for offline sources)."""
    spec = DATASETS[name]
    return [str(p) for p in raw_paths(spec["source"], spec.get("source_options"))]


def photo_archive(name):
    """{"archive": the raw archive an image-index dataset's runs read its photos from}; {} for a
    dataset whose prepared file holds its examples."""
    source = DATASETS[name]["source"]
    return {"archive": str(RAW_DIR / source / IMAGE_ARCHIVES[source])} if source in IMAGE_ARCHIVES else {}


def datasets_for(paper):
    return [name for name, spec in DATASETS.items() if paper in spec["papers"]]


def paper_outputs(paper):
    """Everything a paper's target builds: its datasets, figures and claims file."""
    outputs = [paths.prepared(name) for name in datasets_for(paper)] + FIGURES[paper]
    return released(paper, outputs) + ([CLAIMS[paper]] if CLAIMS[paper] else [])


def released(paper, outputs):
    """``outputs`` less those that need inputs the workflow cannot make (``UNRELEASED``)."""
    return [output for output in outputs if output not in UNRELEASED[paper]]


def released_datasets():
    """The configured datasets a run without the opt-in targets prepares."""
    unreleased = {output for outputs in UNRELEASED.values() for output in outputs}
    return [name for name in DATASETS if paths.prepared(name) not in unreleased]


def unreleased_noted(paper):
    """The paper's manifest entries, those only its opt-in target builds noted so (for the report)."""
    note = f"needs inputs that are not released; snakemake paper_{paper}_unreleased builds it"
    return [dataclasses.replace(entry, note=note) if entry.path(paper) in UNRELEASED[paper] else entry
            for entry in MANIFESTS[paper].ENTRIES]


def kernel_outputs():
    """Every configured kernel extraction: kernel and summary."""
    return [paths.kernel(name, file) for name in NTK_EXTRACTIONS for file in ("ntk.npz", "summary.json")] + \
        [paths.kernel(name, file) for name in TREE_KERNEL_EXTRACTIONS for file in ("tree_kernel.npz", "summary.json")]


# The kernel extractions' named inputs and params (rules/kernels.smk).

def configured_spec(specs, wildcard):
    """A params function: the canonical form of the spec in ``specs`` that the job's ``wildcard`` names."""
    return lambda wildcards: canonical(specs[getattr(wildcards, wildcard)])


def get_init_model_code(wildcards):
    """init_model.py's closure and the module of the zoo model it builds."""
    return script_code("init_model.py", INIT_MODELS[wildcards.model])


def get_ntk_extraction_inputs(wildcards):
    """The checkpoint an NTK extraction reads, and its probe set."""
    extraction = NTK_EXTRACTIONS[wildcards.extraction]
    return {"checkpoint": extraction["checkpoint"], "probe": paths.prepared(extraction["probe"]["dataset"])}


def get_tree_kernel_inputs(wildcards):
    """The fitted ensemble a tree-kernel extraction reads, and its probe set."""
    extraction = TREE_KERNEL_EXTRACTIONS[wildcards.tree_extraction]
    return {"ensemble": extraction["ensemble"], "probe": paths.prepared(extraction["probe"]["dataset"])}


def get_tree_ensemble_data(wildcards):
    return paths.prepared(TREE_ENSEMBLES[wildcards.ensemble]["dataset"])


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


def job_resources(budget, device=False):
    """A job's resources: its cluster budget's minutes and memory (linearlens.cluster), and for a
    job that computes on the configured device, a GPU under CUDA."""
    return {**budget_resources(budget), **(gpu_resources() if device else {})}


# On one machine, as many GPU jobs at once as it has GPUs (each job claims its own: see
# linearlens.train.devices), unless --resources gpu=N says otherwise. The limit is scoped `local`
# (profiles/default), so a cluster run never waits on it. With no GPU listed there is no limit:
# each device job then fails in its first seconds, saying so.
if config["device"] == "cuda" and "gpu" not in workflow.global_resources:
    from linearlens.train.devices import gpu_ids

    if gpu_count := len(gpu_ids()):
        workflow.global_resources["gpu"] = gpu_count


def report_figures():
    return [figure for paper, figures in FIGURES.items() for figure in released(paper, figures)]


def report_claims():
    return [claims for claims in CLAIMS.values() if claims]


# --- the manifests: what rules/manifests.smk generates (linearlens.manifests.generated) ------------

from linearlens.manifests import generated


def built_entries(document):
    """The entries of a document this configuration builds."""
    return generated.built_entries(MANIFESTS[document], config.get(document, {}))


# George ch. 5's θ₀ preparation (rules/george_thesis/ch5.smk).
def get_difficulty_architecture(wildcards):
    return config["george_thesis"]["ch5"]["difficulty"]["architectures"][wildcards.architecture]


def get_difficulty_init_code(wildcards):
    return script_code("init_model.py", get_difficulty_architecture(wildcards))


def get_difficulty_init_spec(wildcards):
    return canonical({"model": get_difficulty_architecture(wildcards)["model"], "seed": int(wildcards.seed)})
