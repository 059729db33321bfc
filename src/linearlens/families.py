"""A run family: a group of runs of one document declared once (George ch. 6's alignment runs, one
per network, setting and seed). The declaration says which config group it reads, how that group
expands to runs, what each run writes, and how its job runs; rules/families.smk generates one rule
per configured family from it (every job benchmarked, its log and benchmark named after its first
output that names no expanded value, or its ``log_name``), and the manifests ask it for the files a
figure or claim set reads. Each document's families sit beside its manifest (``manifests/<document>_runs.py``).

Torch-free: the workflow reads it when it builds the DAG.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass

from . import paths

DOCUMENTS = ("telescoping", "iterative_linearisation", "george_thesis", "karp_thesis")  # in report order
WILDCARD = re.compile(r"\{(\w+)\}")


def spec_as(name: str, of=None):
    """Params that are the run's spec (or what ``of`` makes of it), as the one param ``name``."""
    return lambda group_config, wildcards, spec: {name: of(spec) if of else spec}


def spec_keys(group_config: dict, wildcards: dict, spec: dict) -> dict:
    """Params that are the run's spec, one param per key."""
    return spec


def no_inputs(group_config: dict, wildcards: dict, spec: dict) -> dict:
    return {}


def always(group_config: dict) -> bool:
    return True


def spec_data(group_config: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    """The run's prepared dataset, named by its spec."""
    return {"data": paths.prepared(spec["dataset"])}


def per_seed(spec_of):
    """A grid of one run per seed of the group, each with the spec ``spec_of(group)``."""
    return lambda group_config: {f"seed{seed}": spec_of(group_config) for seed in group_config["seeds"]}


def one_run(run_id: str):
    """A grid of a single run named ``run_id``, its spec the whole group."""
    return lambda group_config: {run_id: group_config}


CHAPTER = "<chapter>"  # a family's ``group`` when it reads its chapter's whole config
CHAPTER_RUNS = ""  # a family's ``folder`` when its runs lie in the chapter's runs themselves
RUN_NAME = "<run>"  # in a family's ``state``: its run's name, folder and run id ("alignment/{family}/seed{seed}")
RUN_STATE = f"{RUN_NAME}.pt"  # the usual ``state``: one file a run, named after the run
CHAPTER_STATE = ""  # a family's ``state`` when its script names its own files in the chapter's state folder


@dataclass(frozen=True)
class RunFamily:
    document: str
    chapter: str  # "ch6" in a thesis; "" in a paper
    name: str  # its rule <document>_<chapter>_run_<name>, its runs' folder and its config group, unless given below
    # Its config group in, {run id: run spec} out; each id is ``run_id`` with its wildcards filled in.
    grid: Callable[[dict], dict[str, dict]]
    run_id: str  # how a run is named under the family's folder: "{family}/{setting}/seed{seed}"
    outputs: dict[str, str]  # output name -> what follows the run id in its file name: {"rows": ".csv"}
    _: KW_ONLY

    # -- Names, where ``name`` does not give them --
    rule_name: str = ""  # its rule (the name the rule had before families, or another verb than "run")
    group: str = ""  # its config group; CHAPTER: the chapter's whole config
    # Its folder under the chapter's runs (two families may share one); CHAPTER_RUNS: the chapter's
    # runs themselves, the first part of a run id naming the folder (telescoping's smoother runs);
    # None: its name
    folder: str | None = None
    # What its jobs' log and benchmark are named after, a pattern over its wildcards under the
    # document's logs and job benchmarks, when not after its first output that names no expanded
    # value ("lmc/pretrained/seed{seed}/pretrain"); required when every output names one
    log_name: str = ""

    # -- What a configuration makes of it --
    # Whether this configuration runs it, given its config group (present: a group may hold no runs).
    configured: Callable[[dict], bool] = always
    # Outputs that name a config value, as {name: its values} from the config group: such an output
    # is one file per value (a run's checkpoints: {"epoch": group["checkpoints"]}), or one output
    # per value where its name carries the value too (a fitted ensemble per boosting library
    # configured: "ensemble_{library}")
    expands: Callable[[dict], dict[str, list]] | None = None

    # -- Its job --
    # (config group, the run's wildcards, its spec) -> the job's named input files (prepared
    # datasets, another family's outputs of the same run). The rule adds the photo archive of a
    # prepared image-index dataset, and as code the zoo models the spec names (the job builds them).
    inputs: Callable[[dict, dict, dict], dict[str, str]] = no_inputs
    # (config group, the run's wildcards, its spec) -> the job's params, each put in canonical form
    # by the rule; the wildcards serve params the spec does not carry (the LMC branch a job trains).
    params: Callable[[dict, dict, dict], dict] = spec_as("spec")
    script: str = ""  # the job, src/scripts/<script>: <rule>.py unless given
    environment: str = "torch"  # envs/<environment>.yaml
    threads: str = "train"  # the kind in the config's `threads:` its job takes; "" for one thread
    device: bool = False  # computes on the configured device: a `device` param, and a GPU under CUDA
    budget: str = ""  # what a cluster job asks for: a name in linearlens.cluster.BUDGETS; "" the profile's default
    # Where a job keeps the training state a retried job resumes (its `state` param; not an output,
    # so it survives a killed job): a pattern over its wildcards under the chapter's state folder,
    # RUN_NAME standing for the run's name; a file (RUN_STATE: one a run), or a folder its script names
    # its own files in (several runs or stages to a job; CHAPTER_STATE: the chapter's state folder
    # itself). None: it keeps none.
    state: str | None = None

    # -- Kept from the hand-written rule a family replaced, so the jobs it made do not rerun --
    # False: the script's name is a param Snakemake does not record (the code trigger still follows
    # the script)
    records_script: bool = True
    # The param that carries the device inside it (``{..., "device": ...}``), for a device family
    # whose script reads it there rather than from a `device` param (IL's runs, as first written)
    device_in: str = ""

    @property
    def rule(self) -> str:
        return self.rule_name or "_".join(part for part in (self.document, self.chapter, "run", self.name) if part)

    @property
    def script_file(self) -> str:
        return self.script or f"{self.rule}.py"

    @property
    def resumable(self) -> bool:
        return self.state is not None

    def config_group(self, document_config: dict) -> dict | None:
        """Its group of the document's config; None when this configuration does not run it."""
        parent = (document_config.get(self.chapter) or {}) if self.chapter else document_config
        group = (parent or None) if self.group == CHAPTER else parent.get(self.group or self.name)
        return group if group is not None and self.configured(group) else None

    @property
    def _folder(self) -> str:
        return self.name if self.folder is None else self.folder

    @property
    def runs_folder(self) -> str:
        return paths.runs(self.document, self.chapter, self._folder)

    def expanded(self, name: str) -> list[str]:
        """The wildcards of output ``name`` that its run id does not name: the config values it is
        expanded over (``expands``), one file per value."""
        run_wildcards = WILDCARD.findall(self.run_id)
        return [key for key in WILDCARD.findall(self.outputs[name]) if key not in run_wildcards]

    def output(self, name: str, run_id: str | None = None, /, **values) -> str:
        """The file ``name`` of run ``run_id`` (without a run id, the pattern with its wildcards), the
        expanded values it names given as ``values`` (``output("checkpoints", epoch=10)``); ``name``
        and ``run_id`` positional, so that a value may be called either."""
        expanded = self.expanded(name)
        if set(values) != set(expanded):
            raise ValueError(f"{self.rule}: output {name!r} takes the values {expanded}, given {sorted(values)}")
        path = f"{self.runs_folder}/{run_id or self.run_id}{self.outputs[name]}"
        for key, value in values.items():
            path = path.replace(f"{{{key}}}", str(value))
        return path

    def output_patterns(self, group_config: dict | None = None) -> dict[str, str | list[str]]:
        """Each output's pattern; given its config group, one that names an expanded config value
        (``expands``) is the list of its files, or one output per value if its name has the value too."""
        values = self.expands(group_config) if self.expands and group_config is not None else {}
        patterns = {}
        for name, suffix in self.outputs.items():
            pattern = f"{self.runs_folder}/{self.run_id}{suffix}"
            wildcard = next((f"{{{key}}}" for key in WILDCARD.findall(pattern) if key in values), None)
            if wildcard is None:
                patterns[name] = pattern
            elif wildcard in name:
                patterns.update({name.replace(wildcard, str(value)): pattern.replace(wildcard, str(value))
                                 for value in values[wildcard[1:-1]]})
            else:
                patterns[name] = [pattern.replace(wildcard, str(value)) for value in values[wildcard[1:-1]]]
        return patterns

    def outputs_of(self, name: str, run_ids) -> list[str]:
        """The file ``name`` of each run, in the order given."""
        return [self.output(name, run_id) for run_id in run_ids]

    def state_path(self, wildcards: dict) -> str:
        """Where the job the wildcards name keeps its training state (``state``)."""
        run = "/".join(part for part in (self._folder, self.run_id) if part)
        return paths.state(self.document, self.chapter, self.state.replace(RUN_NAME, run).format(**wildcards))

    @property
    def _logged_output(self) -> str | None:
        """The output its log and benchmark are named after: the first that names no expanded value
        (a log named after one would carry a wildcard its job does not have)."""
        return next((name for name in self.outputs if not self.expanded(name)), None)

    def __post_init__(self):
        if not self.log_name and self._logged_output is None:
            raise ValueError(f"{self.rule}: every output names an expanded value, so its log and benchmark "
                             "cannot be named after one; give the family a log_name over its run's wildcards")

    def log(self) -> str:
        """Its jobs' log, a pattern with its wildcards."""
        if self.log_name:
            return paths.log(self.document, self.chapter, self.log_name)
        return paths.log_of(self.output(self._logged_output))

    def benchmark(self) -> str:
        """Its jobs' benchmark (time, memory), a pattern with its wildcards."""
        if self.log_name:
            return paths.job_benchmark(self.document, self.chapter, self.log_name)
        return paths.benchmark_of(self.output(self._logged_output))

    def param_names(self, group_config: dict, grid: dict[str, dict]) -> list[str]:
        """The names of its jobs' params, which every run of the grid must share: the rule declares
        them once, so a run with other keys would lose some or fail when its job runs."""
        names = None
        for run_id, spec in grid.items():
            keys = list(self.params(group_config, self.wildcards_of(run_id), spec))
            if names is None:
                names, first = keys, run_id
            elif set(keys) != set(names):
                raise ValueError(f"{self.rule}: run {run_id!r} has the params {sorted(keys)}, run {first!r} "
                                 f"{sorted(names)}; every run of a family must have the same params")
        return names or []

    def id_of(self, wildcards: dict) -> str:
        return self.run_id.format(**wildcards)

    def wildcards_of(self, run_id: str) -> dict[str, str]:
        """The wildcards that name run ``run_id``."""
        pattern = re.compile("".join(f"(?P<{part}>.+?)" if i % 2 else re.escape(part)
                                     for i, part in enumerate(WILDCARD.split(self.run_id))))
        match = pattern.fullmatch(run_id)
        if match is None:
            raise ValueError(f"{self.rule}: run id {run_id!r} does not have the form {self.run_id!r}")
        return match.groupdict()

    def wildcard_values(self, run_ids) -> dict[str, set[str]]:
        """{wildcard: the values it takes} over the given runs: the rule's wildcard constraints."""
        values = {name: set() for name in WILDCARD.findall(self.run_id)}
        for run_id in run_ids:
            for name, value in self.wildcards_of(run_id).items():
                values[name].add(value)
        return values


def declared_families() -> list[RunFamily]:
    """Every run family the documents declare (each manifest lists its own as ``FAMILIES``)."""
    return [family for document in DOCUMENTS
            for family in getattr(importlib.import_module(f"linearlens.manifests.{document}"), "FAMILIES", [])]
