"""A run family: a group of runs of one document declared once (George ch. 6's alignment runs, one
per network, setting and seed). The declaration says which config group it reads, how that group
expands to runs, what each run writes, and how its job runs; rules/families.smk generates one rule
per configured family from it (every job benchmarked, its log and benchmark named after its first
output or its ``job_name``), and the manifests ask it for the files a figure or claim set reads.
Each document's families sit beside its manifest (``manifests/<document>_runs.py``).

Torch-free: the workflow reads it when it builds the DAG.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from . import paths

DOCUMENTS = ("telescoping", "iterative_linearisation", "george_thesis", "karp_thesis")  # in report order
WILDCARD = re.compile(r"\{(\w+)\}")


def spec_as_params(group_config: dict, spec: dict) -> dict:
    """The usual job params: the run's spec."""
    return {"spec": spec}


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


@dataclass(frozen=True)
class RunFamily:
    document: str
    chapter: str  # "ch6" in a thesis; "" in a paper
    name: str  # its folder under the chapter's runs and its config group, unless ``folder``, ``group`` say otherwise
    # Its config group in, {run id: run spec} out; each id is ``run_id`` with its wildcards filled in.
    grid: Callable[[dict], dict[str, dict]]
    run_id: str  # how a run is named under the family's folder: "{family}/{setting}/seed{seed}"
    outputs: dict[str, str]  # output name -> what follows the run id in its file name: {"rows": ".csv"}
    verb: str = "run"  # the rule is <document>_<chapter>_<verb>_<name>
    script: str = ""  # the job, src/scripts/<script>: <rule>.py unless given
    group: str = ""  # the config group, when it is not ``name``; CHAPTER: the chapter's whole config
    folder: str = ""  # its folder under the chapter's runs, when it is not ``name`` (two families may share one)
    # Whether this configuration runs it, given its config group (present: a group may hold no runs).
    configured: Callable[[dict], bool] = always
    # (config group, the run's wildcards, its spec) -> the job's named input files (prepared
    # datasets, another family's outputs of the same run).
    inputs: Callable[[dict, dict, dict], dict[str, str]] = no_inputs
    # (config group, run spec) -> the job's params; the rule puts each in canonical form.
    params: Callable[[dict, dict], dict] = spec_as_params
    device: bool = False  # computes on the configured device: a `device` param, and a GPU under CUDA
    budget: str = ""  # what a cluster job asks for: a name in linearlens.cluster.BUDGETS; "" the profile's default
    resumable: bool = False  # keeps training state (``state_of``) that a retried job resumes
    # A resumable job whose script names its own state files (several runs or stages to a job): the
    # folder it keeps them in, a pattern over its wildcards under the chapter's state folder
    # ("growth/{setting}"; "": that folder itself). None: one file per run (``state_of``).
    state_folder: str | None = None
    builds_models: bool = True  # its spec names zoo models the job builds: their modules are code inputs
    threads: str = "train"  # the kind in the config's `threads:` its job takes; "" for one thread
    environment: str = "torch"  # envs/<environment>.yaml
    rule_name: str = ""  # its rule, when it is not named <document>_<chapter>_<verb>_<name>
    # False: its runs lie in the chapter's runs themselves, the first part of a run id naming their
    # folder (telescoping's smoother runs, one folder per configured family of runs)
    own_folder: bool = True
    # Outputs that name a config value, as {name: its values} from the config group: such an output
    # is one file per value (a run's checkpoints: {"epoch": group["checkpoints"]}).
    expands: Callable[[dict], dict[str, list]] | None = None
    # The param that carries the device inside it (``{..., "device": ...}``), for a device family
    # whose script reads it there rather than from a `device` param (IL's runs, as first written)
    device_in: str = ""
    # False: the script's name is a param Snakemake does not record, so a rule that becomes a family
    # keeps its recorded params and its jobs do not rerun (the code trigger still follows the script)
    records_script: bool = True
    # What its jobs' log, benchmark and (one file a job) training state are named after, a pattern
    # over its wildcards under the document's logs, job benchmarks and state, when not after its
    # first output and its run id ("lmc/pretrained/seed{seed}/pretrain")
    job_name: str = ""
    # (config group, the job's wildcards, its spec) -> its params, for a family whose params read a
    # wildcard its spec does not carry (the LMC branch a job trains); None: ``params``
    job_params: Callable[[dict, dict, dict], dict] | None = None
    # config group -> further outputs like ``outputs``, for a family whose files depend on its config
    # (telescoping's tabular runs: one fitted ensemble per boosting library configured)
    configured_outputs: Callable[[dict], dict[str, str]] | None = None
    # Whether its jobs read an image-index dataset's photos (the spec's ``dataset``) from its source's
    # archive: the archive is then an input, named by the workflow's datasets (George ch. 5's spurious runs)
    reads_photos: bool = False

    @property
    def rule(self) -> str:
        return self.rule_name or "_".join(part for part in (self.document, self.chapter, self.verb, self.name) if part)

    @property
    def script_file(self) -> str:
        return self.script or f"{self.rule}.py"

    def config_group(self, document_config: dict) -> dict | None:
        """Its group of the document's config; None when this configuration does not run it."""
        parent = (document_config.get(self.chapter) or {}) if self.chapter else document_config
        group = (parent or None) if self.group == CHAPTER else parent.get(self.group or self.name)
        return group if group is not None and self.configured(group) else None

    @property
    def _folder(self) -> str:
        return (self.folder or self.name) if self.own_folder else ""

    @property
    def runs_folder(self) -> str:
        return paths.runs(self.document, self.chapter, self._folder)

    def output(self, name: str, run_id: str | None = None) -> str:
        """The file ``name`` of run ``run_id``; without a run id, the pattern with its wildcards."""
        return f"{self.runs_folder}/{run_id or self.run_id}{self.outputs[name]}"

    def output_patterns(self, group_config: dict | None = None) -> dict[str, str | list[str]]:
        """Each output's pattern, with those its config group adds (``configured_outputs``); one that
        names an expanded config value, the list of its files."""
        added = self.configured_outputs(group_config) if self.configured_outputs and group_config is not None else {}
        values = self.expands(group_config) if self.expands and group_config is not None else {}
        return {name: self._expanded(f"{self.runs_folder}/{self.run_id}{suffix}", values)
                for name, suffix in {**self.outputs, **added}.items()}

    @staticmethod
    def _expanded(pattern: str, values: dict[str, list]) -> str | list[str]:
        name = next((name for name in WILDCARD.findall(pattern) if name in values), None)
        if name is None:
            return pattern
        return [pattern.replace(f"{{{name}}}", str(value)) for value in values[name]]

    def outputs_of(self, name: str, run_ids) -> list[str]:
        """The file ``name`` of each run, in the order given."""
        return [self.output(name, run_id) for run_id in run_ids]

    def state_of(self, run_id: str) -> str:
        """Where run ``run_id`` keeps its training state while it trains."""
        return f"{paths.state(self.document, self.chapter, self._folder, run_id)}.pt"

    def job_state(self, wildcards: dict) -> str:
        """The `state` param of the job the wildcards name: its run's state file, or its state folder."""
        if self.state_folder is None and self.job_name:
            return f"{paths.state(self.document, self.chapter, self.job_name.format(**wildcards))}.pt"
        if self.state_folder is None:
            return self.state_of(self.id_of(wildcards))
        return paths.state(self.document, self.chapter, self.state_folder.format(**wildcards))

    def log(self) -> str:
        """Its jobs' log, a pattern with its wildcards."""
        if self.job_name:
            return paths.log(self.document, self.chapter, self.job_name)
        return paths.log_of(self.output(next(iter(self.outputs))))

    def benchmark(self) -> str:
        """Its jobs' benchmark (time, memory), a pattern with its wildcards."""
        if self.job_name:
            return paths.job_benchmark(self.document, self.chapter, self.job_name)
        return paths.benchmark_of(self.output(next(iter(self.outputs))))

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

    def job_params_of(self, group_config: dict, wildcards: dict, spec: dict) -> dict:
        """The params of the job the wildcards name."""
        if self.job_params is None:
            return self.params(group_config, spec)
        return self.job_params(group_config, wildcards, spec)


def declared_families() -> list[RunFamily]:
    """Every run family the documents declare (each manifest lists its own as ``FAMILIES``)."""
    return [family for document in DOCUMENTS
            for family in getattr(importlib.import_module(f"linearlens.manifests.{document}"), "FAMILIES", [])]
