"""A job's code inputs (the import closure of its script, read from the source) against what Python
really imports when it runs the script's imports, and parameters in a canonical form."""

import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from linearlens import paths
from linearlens.canonical import canonical
from linearlens.code_inputs import function_code, import_closure, module_closure, script_code, syntax_digest
from linearlens.models.names import model_module, named_models, zoo_modules

SRC = Path(__file__).resolve().parents[1] / "src"
SCRIPTS = sorted((SRC / "scripts").glob("*.py"))


def record(source: str) -> str:
    """The code input that stands for a file under src/."""
    return paths.code_record(source)


def imported_library_files(script: Path) -> set[Path]:
    """The library files loaded when the script's import statements run (in a fresh interpreter)."""
    probe = ("import ast, sys\n"
             f"tree = ast.parse(open({str(script)!r}).read())\n"
             "exec(compile(ast.Module([n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))], []),"
             " 'imports', 'exec'))\n"
             "print('\\n'.join(m.__file__ for name, m in sys.modules.items()"
             " if name.split('.')[0] == 'linearlens' and getattr(m, '__file__', None)))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=SRC, check=True)
    return {Path(line).resolve() for line in result.stdout.split()}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_the_closure_holds_every_module_the_script_imports(script):
    """Every module Python loads for the script is in its closure; the closure may hold more only
    through imports that run later (inside functions), never unrelated modules."""
    closure = set(import_closure(script))
    loaded = imported_library_files(script)
    assert loaded <= closure, sorted(map(str, loaded - closure))
    assert script.resolve() in closure


def test_package_inits_stay_thin_so_closures_stay_small():
    """Importing one module of a package does not pull in its siblings."""
    closure = {path.relative_to(SRC).as_posix() for path in module_closure("linearlens.kernels.trees")}
    assert closure == {"linearlens/__init__.py", "linearlens/kernels/__init__.py", "linearlens/kernels/trees.py"}


def test_relative_and_from_package_imports_are_followed(tmp_path):
    package = tmp_path / "linearlens"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "a.py").write_text("from . import b\nfrom ..c import thing\n")
    (package / "sub" / "b.py").write_text("def later():\n    from linearlens.sub import d\n")
    (package / "sub" / "d.py").write_text("import linearlens.sub.a\n")  # a cycle back to a
    (package / "c.py").write_text("thing = 1\n")
    (package / "unused.py").write_text("")
    names = {path.relative_to(tmp_path).as_posix() for path in import_closure(package / "sub" / "a.py", tmp_path)}
    assert names == {"linearlens/__init__.py", "linearlens/sub/__init__.py", "linearlens/sub/a.py",
                     "linearlens/sub/b.py", "linearlens/sub/d.py", "linearlens/c.py"}


def test_the_zoo_finds_each_model_in_its_own_module():
    modules = zoo_modules()
    assert modules["mlp"] == "mlp" and modules["resnet18"] == "resnet" and modules["polynomial_net"] == "polynomial"
    assert model_module("lenet") == "linearlens.models.lenet"
    with pytest.raises(ValueError, match="the zoo has"):
        model_module("no_such_model")
    run = {"model": {"name": "mlp"}, "teacher": {"model": {"name": "lenet", "channels": 4}}, "models": ["x"]}
    assert named_models(run) == {"mlp", "lenet"}


def test_only_marked_functions_are_models():
    """The zoo is the marked constructors, each in its module; the helpers beside them are not."""
    modules = zoo_modules()
    assert set(modules) == {"mlp", "autoencoder", "small_cnn", "conv_pool_cnn", "lenet", "polynomial_net", "resnet",
                            "cifar_resnet", "resnet20", "resnet18", "imagenet_resnet18", "resnet50", "wide_resnet",
                            "vgg", "transformer_lm"}
    assert not {"initialise_", "plain_attention", "under_functorch", "grow", "stack_on_top"} & set(modules)


@pytest.mark.parametrize("config", sorted((SRC.parent / "config").glob("*.yaml")), ids=lambda path: path.name)
def test_every_model_a_configuration_names_is_in_the_zoo(config):
    assert named_models(yaml.safe_load(config.read_text())) <= set(zoo_modules())


def test_canonical_params_ignore_key_order_but_keep_it_for_iteration():
    first = canonical({"b": {"y": 1, "x": [2, {"q": 3, "p": 4}]}, "a": 0})
    second = canonical({"a": 0, "b": {"x": [2, {"p": 4, "q": 3}], "y": 1}})
    assert repr(first) == repr(second)  # what Snakemake compares
    assert list(first) == ["b", "a"] and first == second
    assert repr(canonical({"a": 1})) != repr(canonical({"a": 2}))
    restored = pickle.loads(pickle.dumps(first))  # how a job receives its params
    assert restored == first and list(restored) == ["b", "a"]


def test_the_job_wrapper_makes_no_reader_or_device_helper_every_jobs_code():
    """Every script imports ``linearlens.workflow``: what it imports is code of every job, so
    editing a downloader or the GPU lock would rerun every figure. It imports only the errors."""
    closure = {path.relative_to(SRC).as_posix() for path in module_closure("linearlens.workflow")}
    assert closure == {"linearlens/__init__.py", "linearlens/errors.py", "linearlens/workflow.py"}


MANIFEST_RULE = re.compile(r"_plot_|_draw_|_claims$|^report$")  # they read runs; they build no model


def models_missing_from_code_inputs(job: dict) -> dict[str, list[str]]:
    """{model: its module files} for each zoo model a job's params name whose module is not among its
    inputs, so that editing the model's module would not rerun the job that builds it."""
    missing = {}
    for name in sorted(named_models(job["params"])):
        files = {record(path.relative_to(SRC).as_posix()) for path in module_closure(model_module(name))}
        if files - set(job["input"]):
            missing[name] = sorted(files - set(job["input"]))
    return missing


def test_a_job_missing_a_model_module_is_found():
    job = {"rule": "r", "params": {"spec": {"model": {"name": "vgg"}}},
           "input": [record(path.relative_to(SRC).as_posix()) for path in module_closure("linearlens.models.zoo")]}
    assert models_missing_from_code_inputs(job) == {"vgg": [record("linearlens/models/vgg.py")]}
    job["input"].append(record("linearlens/models/vgg.py"))
    assert models_missing_from_code_inputs(job) == {}


@pytest.mark.workflow
@pytest.mark.parametrize("configfile, targets", [
    ("config/smoke.yaml", ["all", "benchmarks"]),
    ("config/paper.yaml", ["paper_telescoping", "paper_iterative_linearisation", "paper_george_thesis",
                           "paper_karp_thesis", "benchmarks"]),
], ids=["smoke", "paper"])
def test_every_job_that_builds_a_model_reruns_when_its_module_changes(tmp_path, configfile, targets):
    """A run names its models in its params; the zoo builds them from their modules, which the source
    scan of its script cannot see: each must be one of the job's code inputs."""
    planned = tmp_path / "jobs.jsonl"
    subprocess.run([sys.executable, str(Path(__file__).with_name("planned_jobs.py")), str(planned), *targets,
                    "-n", "--forceall", "--cores", "1", "--configfile", configfile],
                   cwd=SRC.parent, capture_output=True, text=True, check=True)
    jobs = [json.loads(line) for line in planned.read_text().splitlines()]
    assert len(jobs) > 100
    missing = {job["rule"]: found for job in jobs
               if not MANIFEST_RULE.search(job["rule"]) and (found := models_missing_from_code_inputs(job))}
    assert missing == {}


def test_a_rule_s_code_inputs_hold_its_script_closure_and_the_models_its_specs_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the records are written under the working directory's results/
    plain = script_code("init_model.py")
    vgg = record("linearlens/models/vgg.py")
    assert record("scripts/init_model.py") in plain and vgg not in plain
    assert vgg in script_code("init_model.py", {"model": {"name": "vgg"}})
    assert script_code("init_model.py", {"name": "vgg"}) == plain  # a bare model spec names no model
    assert record("linearlens/figures/george_thesis/ch6.py") in function_code(
        "plot_figure.py", "linearlens.figures.george_thesis.ch6:plot_fig_6_2")
    optimisers = "linearlens.benchmarks.optimisers:run_optimiser_benchmark"
    benchmark = function_code("benchmark_method.py", optimisers)
    assert record("linearlens/benchmarks/optimisers.py") in benchmark and vgg not in benchmark
    assert all((tmp_path / path).is_file() for path in benchmark)
    assert vgg in function_code(
        "benchmark_method.py", optimisers, specs=[{"cases": {"vgg11": {"model": {"name": "vgg", "depth": 11}}}}])


def test_a_remembered_closure_is_recomputed_when_one_of_its_files_changes(tmp_path, monkeypatch):
    """Jobs of one rule share their script's closure, computed once per process; an edit to one of its
    files (a test that changes a module between two calls) recomputes it, an unrelated file does not,
    and neither do deleted records or another working directory go unnoticed."""
    from linearlens import code_inputs

    source, work, other = tmp_path / "src", tmp_path / "work", tmp_path / "other"
    for folder in (source, work, other):
        folder.mkdir()
    monkeypatch.setattr(code_inputs, "SOURCE_ROOT", source)
    monkeypatch.chdir(work)
    used, unrelated = source / "used.py", source / "unrelated.py"
    used.write_text("")
    unrelated.write_text("")
    computed = []

    def closure():
        computed.append(True)
        return {used}

    assert code_inputs._remembered(("probe",), closure) == [record("used.py")]
    assert code_inputs._remembered(("probe",), closure) == [record("used.py")] and len(computed) == 1
    unrelated.write_text("x = 1\n")
    code_inputs._remembered(("probe",), closure)
    assert len(computed) == 1
    stat = used.stat()
    os.utime(used, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    code_inputs._remembered(("probe",), closure)
    assert len(computed) == 2
    (work / record("used.py")).unlink()  # results/ deleted: the record is written again
    code_inputs._remembered(("probe",), closure)
    assert len(computed) == 3 and (work / record("used.py")).is_file()
    monkeypatch.chdir(other)  # records are relative to the working directory: a new answer
    assert code_inputs._remembered(("probe",), closure) == [record("used.py")] and len(computed) == 4
    assert (other / record("used.py")).is_file()


MODULE = '''"""A module."""

import math

CAPTION = "a caption that reaches a figure"


def area(radius):
    """The disc's area."""
    return math.pi * radius**2  # πr²
'''


@pytest.mark.parametrize("edit, reruns", [
    (lambda text: text.replace("# πr²", "# the area of a disc"), False),
    (lambda text: text.replace('"""The disc\'s area."""', '"""Area of a disc of the given radius."""'), False),
    (lambda text: text.replace('"""A module."""', '"""A module of discs."""\n\n'), False),
    (lambda text: text.replace("radius**2", "radius ** 2"), False),
    (lambda text: text.replace("radius**2", "radius**3"), True),
    (lambda text: text.replace("a caption", "the caption"), True),
    (lambda text: text.replace("import math", "import math\nimport os"), True),
], ids=["comment", "docstring", "module docstring and blank lines", "layout", "code", "string", "import"])
def test_a_record_is_rewritten_when_what_the_file_runs_changes_and_only_then(tmp_path, monkeypatch, edit, reruns):
    """A job reruns when its code input's mtime moves: an edit to comments, docstrings or layout
    leaves the record as it was; an edit to the code, a string the code uses, or an import rewrites it."""
    from linearlens import code_inputs

    monkeypatch.chdir(tmp_path)
    module = tmp_path / "module.py"
    module.write_text(MODULE)
    written = Path(code_inputs.code_record(module, root=tmp_path))
    os.utime(written, ns=(0, 0))
    module.write_text(edit(MODULE))
    later = module.stat().st_mtime_ns + 1_000_000_000  # an edit a second later (mtimes tick coarsely)
    os.utime(module, ns=(later, later))
    assert module.read_text() != MODULE
    assert code_inputs.code_record(module, root=tmp_path) == str(written)
    assert (written.stat().st_mtime_ns != 0) == reruns
    assert (syntax_digest(module) in written.read_text()) and (written.read_text().split()[1] == "module.py")


def test_a_file_is_parsed_again_only_when_its_mtime_or_size_moved(tmp_path, monkeypatch):
    """The digest noted beside a record stands while the file's mtime and size are those it was taken
    at; a process that finds it so parses nothing."""
    from linearlens import code_inputs

    monkeypatch.chdir(tmp_path)
    module = tmp_path / "module.py"
    module.write_text(MODULE)
    code_inputs.code_record(module, root=tmp_path)
    parsed = []
    monkeypatch.setattr(code_inputs, "syntax_digest", lambda path: parsed.append(path) or "d" * 64)
    monkeypatch.setattr(code_inputs, "_RECORDS", {})  # a new process
    code_inputs.code_record(module, root=tmp_path)
    assert parsed == []
    stat = module.stat()
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    record = code_inputs.code_record(module, root=tmp_path)
    assert parsed == [module] and Path(record).read_text() == "d" * 64 + "  module.py\n"


def test_every_record_is_current_before_the_dag_is_built_and_a_broken_module_stops_no_other(tmp_path, monkeypatch):
    from linearlens import code_inputs

    source = tmp_path / "src"
    (source / "linearlens").mkdir(parents=True)
    (source / "scripts").mkdir()
    (source / "linearlens" / "good.py").write_text("X = 1\n")
    (source / "linearlens" / "half_edited.py").write_text("def f(:\n")
    (source / "scripts" / "job.py").write_text("import linearlens.good\n")
    monkeypatch.chdir(tmp_path)
    assert code_inputs.refresh_records(source) == [record("linearlens/good.py"), record("scripts/job.py")]
    with pytest.raises(SyntaxError, match="half_edited"):
        code_inputs.code_record(source / "linearlens" / "half_edited.py", root=source)
