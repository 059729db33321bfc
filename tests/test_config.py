"""The configuration schema: every shipped config passes, mistakes fail naming the key, and
the schema, registry, environments and pyproject agree with each other."""

import ast
import copy
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
import referencing.exceptions
import tomllib
import yaml

from linearlens.config import ConfigError, config_errors, load_scale, load_schema, schema_registry, validate_config
from linearlens.data.registry import SOURCES
from rule_blocks import rule_blocks

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DIR = ROOT / "config" / "schema"
SCHEMA = SCHEMA_DIR / "config.schema.yaml"
DOCUMENTS = ["telescoping", "iterative_linearisation", "george_thesis", "karp_thesis"]
SCALES = ["quick", "paper", "smoke", "rehearsal"]


def _config(scale):
    return load_scale(scale)


@pytest.mark.parametrize("scale", SCALES)
def test_shipped_configs_are_valid(scale):
    """The split schema (entry point plus the files its $refs name) accepts every shipped scale."""
    validate_config(_config(scale), SCHEMA)


@pytest.mark.parametrize("scale", SCALES)
def test_each_scale_records_its_name(scale):
    assert _config(scale)["scale"] == scale


def test_schema_sources_are_the_registry():
    enum = load_schema(SCHEMA_DIR / "datasets.schema.yaml")["$defs"]["dataset"]["properties"]["source"]["enum"]
    assert sorted(enum) == sorted(SOURCES)


def test_quick_and_smoke_configs_need_no_download():
    for name in ("quick", "smoke"):
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
        (lambda c: c["benchmarks"]["optimisers"]["cases"]["tiny_vgg"].update(conv_factor="sua"),
         "benchmarks.optimisers.cases.tiny_vgg", "'conv_factor' was unexpected"),
        (lambda c: c["benchmarks"]["optimisers"].update(methods=["sgd", "kfca"]),
         "benchmarks.optimisers.methods.1", "is not one of"),
        (lambda c: c["benchmarks"]["optimisers"].update(methods=["kfac"]),
         "benchmarks.optimisers.methods", "does not contain items matching"),
        (lambda c: c["karp_thesis"]["ch5"]["growing"]["bert"].update(windw_end=3),
         "karp_thesis.ch5.growing.bert", "'windw_end' was unexpected"),
        (lambda c: c["karp_thesis"]["ch5"]["stacking"].update(objective="ul2"),
         "karp_thesis.ch5.stacking.objective", "is not one of"),
        (lambda c: c["iterative_linearisation"]["experiments"]["full_batch"]["settings"]["k5"].update(Kk=5),
         "iterative_linearisation.experiments.full_batch.settings.k5", "'Kk' was unexpected"),
        (lambda c: c["iterative_linearisation"]["experiments"]["full_batch"]["settings"]["k5"].update(K=0),
         "iterative_linearisation.experiments.full_batch.settings.k5.K", "is not valid under any of the given schemas"),
        (lambda c: c["iterative_linearisation"]["experiments"]["full_batch"].update(master_dtype="float16"),
         "iterative_linearisation.experiments.full_batch.master_dtype", "is not one of"),
        # telescoping.schema.yaml, and the optimiser it takes from shared.schema.yaml
        (lambda c: c["telescoping"].update(aproximation={}), "telescoping", "'aproximation' was unexpected"),
        (lambda c: c["telescoping"]["lmc"]["schedule"].update(lrr=0.1),
         "telescoping.lmc.schedule", "'lrr' was unexpected"),
        (lambda c: c["telescoping"]["approximation"]["settings"]["sgd"]["optimiser"].update(momentun=0.9),
         "telescoping.approximation.settings.sgd.optimiser", "'momentun' was unexpected"),
        (lambda c: c["telescoping"]["double_descent"]["mnist_noisy"].update(product_dtype="float16"),
         "telescoping.double_descent.mnist_noisy.product_dtype", "is not one of"),
        # iterative_linearisation.schema.yaml
        (lambda c: c["iterative_linearisation"].update(experiment={}),
         "iterative_linearisation", "'experiment' was unexpected"),
        (lambda c: c["iterative_linearisation"]["damping"]["drawn"].update(sample=2),
         "iterative_linearisation.damping.drawn", "'sample' was unexpected"),
        (lambda c: c["iterative_linearisation"]["identity_check"]["optimiser"].pop("lr"),
         "iterative_linearisation.identity_check.optimiser", "'lr' is a required property"),
        # the claim thresholds: each named, typed and required
        (lambda c: c["iterative_linearisation"]["claim_thresholds"].update(finite_k_gap="3"),
         "iterative_linearisation.claim_thresholds.finite_k_gap", "is not of type 'number'"),
        (lambda c: c["iterative_linearisation"]["claim_thresholds"].update(relinearisation_agreement="1e-6"),
         "iterative_linearisation.claim_thresholds.relinearisation_agreement", "is not of type 'number'"),
        (lambda c: c["iterative_linearisation"]["claim_thresholds"].update(probe_rise="yes"),
         "iterative_linearisation.claim_thresholds.probe_rise", "is not of type 'boolean'"),
        (lambda c: c["iterative_linearisation"]["claim_thresholds"].update(finite_k_gpa=3),
         "iterative_linearisation.claim_thresholds", "'finite_k_gpa' was unexpected"),
        (lambda c: c["iterative_linearisation"]["claim_thresholds"].pop("adam_gap"),
         "iterative_linearisation.claim_thresholds", "'adam_gap' is a required property"),
        (lambda c: c["iterative_linearisation"]["claim_thresholds"].update(adam_ranges=[[0.66, 0.73]]),
         "iterative_linearisation.claim_thresholds.adam_ranges", "is not valid under any of the given schemas"),
        (lambda c: c["karp_thesis"]["claim_thresholds"]["stability"].update(separated=None),
         "karp_thesis.claim_thresholds.stability.separated", "is not of type 'number'"),
        (lambda c: c["karp_thesis"]["claim_thresholds"]["local_signal"].update(against_thesis="no"),
         "karp_thesis.claim_thresholds.local_signal.against_thesis", "is not of type 'boolean'"),
        (lambda c: c["karp_thesis"]["claim_thresholds"]["toy"].update(final_ratio=[0.35]),
         "karp_thesis.claim_thresholds.toy.final_ratio", "is not valid under any of the given schemas"),
        (lambda c: c["karp_thesis"]["claim_thresholds"]["growing"].update(regret_ratio=0.5),
         "karp_thesis.claim_thresholds.growing", "'regret_ratio' was unexpected"),
        (lambda c: c["karp_thesis"]["claim_thresholds"].pop("structure"),
         "karp_thesis.claim_thresholds", "'structure' is a required property"),
        (lambda c: c["george_thesis"]["claim_thresholds"]["gaussian"].update(kl_ratio="10"),
         "george_thesis.claim_thresholds.gaussian.kl_ratio", "is not of type 'number'"),
        (lambda c: c["george_thesis"]["claim_thresholds"]["cifar"].update(paper_only_asserted="no"),
         "george_thesis.claim_thresholds.cifar.paper_only_asserted", "is not of type 'boolean'"),
        (lambda c: c["george_thesis"]["claim_thresholds"]["autoencoder"].update(epoch_shares=0.8),
         "george_thesis.claim_thresholds.autoencoder", "'epoch_shares' was unexpected"),
        (lambda c: c["george_thesis"]["claim_thresholds"].pop("kfe_tracking"),
         "george_thesis.claim_thresholds", "'kfe_tracking' is a required property"),
        (lambda c: c["george_thesis"]["claim_thresholds"]["difficulty"].update(turning_points=[1.25]),
         "george_thesis.claim_thresholds.difficulty.turning_points", "is too short"),
        # the thesis sections: optional, but closed until their chapters add keys
        (lambda c: c.update(george_thesis={"chapter_2": {}}), "george_thesis", "'chapter_2' was unexpected"),
        (lambda c: c.update(karp_thesis={"chapter_2": {}}), "karp_thesis", "'chapter_2' was unexpected"),
        (lambda c: c.update(george_thesis=[]), "george_thesis", "is not of type 'object'"),
        # shared.schema.yaml through the top-level keys
        (lambda c: c["ntk_extractions"]["mlp_tiny_init"]["probe"].update(split="val"),
         "ntk_extractions.mlp_tiny_init.probe.split", "is not one of"),
        (lambda c: c["benchmarks"]["iterative_linearisation"]["cases"]["tiny_lenet"]["optimiser"].update(nme="sgd"),
         "benchmarks.iterative_linearisation.cases.tiny_lenet.optimiser", "'nme' was unexpected"),
    ],
)
def test_invalid_config_names_the_key(mutate, key, expectation):
    config = copy.deepcopy(_config("smoke"))
    mutate(config)
    problems = config_errors(config, load_schema(SCHEMA))
    assert any(f"config key '{key}'" in p and expectation in p for p in problems), problems
    with pytest.raises(ConfigError, match=re.escape("invalid smoke.yaml:\n  ")) as raised:
        validate_config(config, SCHEMA, source="smoke.yaml")
    assert f"config key '{key}'" in str(raised.value)


@pytest.mark.parametrize("section", ["george_thesis", "karp_thesis"])
def test_thesis_sections_are_optional_and_may_be_empty(section):
    config = {key: value for key, value in _config("smoke").items() if key != section}
    validate_config(config, SCHEMA)
    validate_config({**config, section: {}}, SCHEMA)


def test_each_document_has_its_own_schema_file():
    properties = yaml.safe_load(SCHEMA.read_text())["properties"]
    for document in DOCUMENTS:
        assert properties[document] == {"$ref": f"{document}.schema.yaml"}
        section = yaml.safe_load((SCHEMA_DIR / f"{document}.schema.yaml").read_text())
        assert section["type"] == "object" and section["additionalProperties"] is False
    assert not set(DOCUMENTS) & set(yaml.safe_load(SCHEMA.read_text())["required"])


def _refs(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def test_every_schema_ref_resolves_to_a_file_in_the_schema_directory():
    """Every $ref names a file of config/schema/ (or the same file) and a pointer that exists there;
    the registry validate_config uses resolves it to the same; and no file is left unreferenced."""
    files = sorted(SCHEMA_DIR.glob("*.schema.yaml"))
    referenced = {SCHEMA.name}
    for path in files:
        schema = load_schema(path)
        resolver = schema_registry(schema).resolver(base_uri=schema["$id"])
        for ref in _refs(schema):
            file_name, _, pointer = ref.partition("#")
            target_path = SCHEMA_DIR / file_name if file_name else path
            assert "/" not in file_name and target_path.is_file(), f"{path.name}: {ref}"
            referenced.add(target_path.name)
            target = yaml.safe_load(target_path.read_text())
            for part in filter(None, pointer.split("/")):
                assert isinstance(target, dict) and part in target, f"{path.name}: {ref}"
                target = target[part]
            assert resolver.lookup(ref).contents == target, f"{path.name}: {ref}"
    assert referenced == {path.name for path in files}, f"never referenced: {sorted({p.name for p in files} - referenced)}"


def test_schema_refs_resolve_against_the_schema_files_directory(tmp_path, monkeypatch):
    """A copy of the schema directory elsewhere is self-contained: its files, not the repository's,
    are read, whatever the working directory."""
    for path in SCHEMA_DIR.glob("*.schema.yaml"):
        (tmp_path / path.name).write_text(path.read_text())
    (tmp_path / "george_thesis.schema.yaml").write_text(
        "type: object\nadditionalProperties: false\nproperties: {chapter_2: {type: object}}\n")
    monkeypatch.chdir(tmp_path)
    config = {**_config("smoke"), "george_thesis": {"chapter_2": {}}}
    validate_config(config, "config.schema.yaml")
    with pytest.raises(ConfigError, match="'chapter_2' was unexpected"):
        validate_config(config, SCHEMA)


def test_schema_refs_outside_the_schema_directory_are_not_retrieved(tmp_path):
    """Only files in the schema's directory are read: no network, no file beside the directory."""
    (tmp_path / "outside.schema.yaml").write_text("{}\n")  # would accept anything
    schema = {"$id": (tmp_path / "schema" / "config.schema.yaml").as_uri(),
              "properties": {"remote": {"$ref": "https://example.com/config.schema.yaml"},
                             "parent": {"$ref": "../outside.schema.yaml"}}}
    for key in schema["properties"]:
        with pytest.raises(referencing.exceptions.Unresolvable):
            config_errors({key: 1}, schema)


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


def _report_environment_imports():
    """{what: its import statements} of everything that runs in envs/report.yaml: the scripts of
    the rules written in rules/, and the plot and claim modules the manifests' generated rules run
    there (plus their generic scripts)."""
    imports = {}
    for rule, script in _scripts_of_rules_in("report.yaml").items():
        tree = ast.parse(script.read_text())
        imports[rule] = "\n".join(ast.unparse(node) for node in tree.body
                                  if isinstance(node, (ast.Import, ast.ImportFrom)))
    for document in ("telescoping", "iterative_linearisation", "george_thesis", "karp_thesis"):
        manifest = importlib.import_module(f"linearlens.manifests.{document}")
        functions = [entry.plot for entry in manifest.ENTRIES if entry.plot and entry.environment == "report"]
        functions += [claims.function for claims in getattr(manifest, "CLAIM_SETS", [])
                      if claims.environment == "report"]
        for function in functions:
            imports[function] = f"import {function.split(':')[0]}"
    for module in sorted((ROOT / "src" / "linearlens" / "analysis").rglob("*.py")):  # the torch-free layer
        dotted = ".".join(module.relative_to(ROOT / "src").with_suffix("").parts)
        imports[dotted] = f"import {dotted}"
    for script in ("plot_figure.py", "check_claims.py"):
        tree = ast.parse((ROOT / "src" / "scripts" / script).read_text())
        imports[script] = "\n".join(ast.unparse(node) for node in tree.body
                                    if isinstance(node, (ast.Import, ast.ImportFrom)))
    return imports


def test_report_environment_rules_import_without_the_training_libraries():
    """Under --sdm conda, plots and the report run in envs/report.yaml: their imports must load
    with the training libraries absent (those that need them use envs/torch.yaml)."""
    imports = _report_environment_imports()
    assert len(imports) >= 20
    blocker = ("import sys\n"
               "class Absent:\n"
               "    def find_spec(self, name, path, target=None):\n"
               f"        if name.split('.')[0] in {NOT_IN_REPORT_ENV!r}:\n"
               "            raise ImportError(f'{name} is not in envs/report.yaml')\n"
               "sys.meta_path.insert(0, Absent())\n")
    checks = "".join(f"try:\n    exec({statements!r}, {{}})\nexcept ImportError as error:\n"
                     f"    print({what!r}, error)\n" for what, statements in imports.items())
    result = subprocess.run([sys.executable, "-c", blocker + checks], capture_output=True, text=True, cwd=ROOT / "src")
    assert result.returncode == 0 and not result.stdout, result.stdout + result.stderr[-2000:]
