"""The configuration schema: every shipped config passes, mistakes fail naming the key, and
the schema, registry, environments and pyproject agree with each other."""

import ast
import copy
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from linearlens.config import ConfigError, config_errors, load_schema, validate_config
from linearlens.data.registry import SOURCES
from rule_blocks import rule_blocks

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "config" / "schema" / "config.schema.yaml"
CONFIGS = ["config.yaml", "paper.yaml", "smoke.yaml"]


def _config(name):
    return yaml.safe_load((ROOT / "config" / name).read_text())


@pytest.mark.parametrize("name", CONFIGS)
def test_shipped_configs_are_valid(name):
    validate_config(_config(name), SCHEMA)


@pytest.mark.parametrize("name", CONFIGS)
def test_config_scale_matches_file(name):
    assert _config(name)["scale"] == {"config.yaml": "quick", "paper.yaml": "paper", "smoke.yaml": "smoke"}[name]


def test_schema_sources_are_the_registry():
    enum = load_schema(SCHEMA)["$defs"]["dataset"]["properties"]["source"]["enum"]
    assert sorted(enum) == sorted(SOURCES)


def test_quick_and_smoke_configs_need_no_download():
    for name in ("config.yaml", "smoke.yaml"):
        for dataset, spec in _config(name)["datasets"].items():
            assert not SOURCES[spec["source"]].needs_download, f"{name}: {dataset} downloads"


@pytest.mark.parametrize(
    "mutate, key, expectation",
    [
        (lambda c: c.update(device="gpu"), "device", "is not one of"),
        (lambda c: c.update(scael="quick"), "<top level>", "'scael' was unexpected"),
        (lambda c: c["datasets"]["digits_3v5_tiny"].update(label_noise=1.5),
         "datasets.digits_3v5_tiny.label_noise", "greater than the maximum"),
        (lambda c: c["datasets"]["digits_3v5_tiny"].update(lable_noise=0.1),
         "datasets.digits_3v5_tiny", "'lable_noise' was unexpected"),
        (lambda c: c["datasets"]["digits_3v5_tiny"].update(source="cifar100"),
         "datasets.digits_3v5_tiny.source", "is not one of"),
        (lambda c: c["datasets"]["digits_3v5_tiny"].update(papers=["telescope"]),
         "datasets.digits_3v5_tiny.papers.0", "is not one of"),
        (lambda c: c["benchmarks"]["kernels"]["ntk"].update(methods=["nngeometry"]),
         "benchmarks.kernels.ntk.methods", "does not contain items matching"),
        (lambda c: c["benchmarks"]["kernels"]["trees"].pop("rows"),
         "benchmarks.kernels.trees", "'rows' is a required property"),
        (lambda c: c["iterative_linearisation"]["experiments"]["full_batch"]["settings"]["k5"].update(Kk=5),
         "iterative_linearisation.experiments.full_batch.settings.k5", "'Kk' was unexpected"),
        (lambda c: c["iterative_linearisation"]["experiments"]["full_batch"]["settings"]["k5"].update(K=0),
         "iterative_linearisation.experiments.full_batch.settings.k5.K", "is not valid under any of the given schemas"),
        (lambda c: c["iterative_linearisation"]["experiments"]["full_batch"].update(master_dtype="float16"),
         "iterative_linearisation.experiments.full_batch.master_dtype", "is not one of"),
    ],
)
def test_invalid_config_names_the_key(mutate, key, expectation):
    config = copy.deepcopy(_config("smoke.yaml"))
    mutate(config)
    problems = config_errors(config, load_schema(SCHEMA))
    assert any(f"config key '{key}'" in p and expectation in p for p in problems), problems
    with pytest.raises(ConfigError):
        validate_config(config, SCHEMA)


def _pins(requirements):
    return dict(re.match(r"([A-Za-z0-9_.\-]+)==(\S+)", r).groups() for r in requirements if "==" in r)


def test_conda_envs_pin_the_same_versions_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pinned = _pins(project["dependencies"])
    assert all("==" in requirement for requirement in project["dependencies"])
    for env_file in sorted((ROOT / "envs").glob("*.yaml")):
        env = yaml.safe_load(env_file.read_text())
        pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
        for package, version in _pins(pip_section).items():
            assert pinned.get(package) == version, f"{env_file.name}: {package}=={version}"


# What envs/report.yaml leaves out: rules in that environment must not need it.
NOT_IN_REPORT_ENV = ("torch", "sklearn", "xgboost", "openml", "mlxtend", "mnist1d")


def _scripts_of_rules_in(env_name):
    """{rule: its script's path} of every rule that runs in envs/<env_name>."""
    scripts = {}
    for rule, block in rule_blocks().items():
        script = re.search(r'"\.\./(src/scripts/\w+\.py)"', block)
        if f"envs/{env_name}" in block and script:
            scripts[rule] = ROOT / script[1]
    return scripts


def test_report_environment_rules_import_without_the_training_libraries():
    """Under --sdm conda, plots and the report run in envs/report.yaml: their scripts' imports must
    load with the training libraries absent (those that need them use envs/torch.yaml)."""
    scripts = _scripts_of_rules_in("report.yaml")
    assert len(scripts) >= 10
    blocker = ("import sys\n"
               "class Absent:\n"
               "    def find_spec(self, name, path, target=None):\n"
               f"        if name.split('.')[0] in {NOT_IN_REPORT_ENV!r}:\n"
               "            raise ImportError(f'{name} is not in envs/report.yaml')\n"
               "sys.meta_path.insert(0, Absent())\n")
    for rule, script in scripts.items():
        tree = ast.parse(script.read_text())
        imports = "\n".join(ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)))
        result = subprocess.run([sys.executable, "-c", blocker + imports], capture_output=True, text=True,
                                cwd=ROOT / "src")
        assert result.returncode == 0, f"{rule}: {result.stderr.strip().splitlines()[-1]}"
