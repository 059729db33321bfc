"""The library code a job runs, read from the source: a rule's code inputs are the import closure of
its script within ``linearlens``, so editing or adding a module reruns exactly the results whose
code imports it.

A job's input is not the file itself but a record of its syntax digest (``paths.code_record``), rewritten
only when the digest changes: an edit to comments, docstrings or layout reruns nothing, since it
changes nothing a job computes.

The closure is computed from each file's syntax tree (no import, no torch), following every
``import`` statement wherever it stands, including those inside functions; a package's
``__init__.py`` counts whenever one of its modules is imported, because Python runs it. Modules that
a registry imports by name at run time (a model of the zoo, a data source's reader, a manifest's plot
function) are not visible in the source: ``script_code`` and ``function_code`` below add them from the job's
specs and its entry, ``source_code`` in rules/common.smk from the data source.
"""

from __future__ import annotations

import ast
import hashlib
import os
import socket
from functools import lru_cache
from pathlib import Path

from . import paths
from .models.names import model_module, named_models

PACKAGE = "linearlens"
SOURCE_ROOT = Path(__file__).resolve().parent.parent  # src/


def module_file(module: str, root: Path = SOURCE_ROOT) -> Path | None:
    """The file that defines a dotted module name under ``root``, or None if there is none."""
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _with_parents(module: str) -> list[str]:
    """``a.b.c`` runs ``a``, ``a.b`` and ``a.b.c``."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _imported_modules(path: Path, root: Path) -> set[str]:
    """Every library module an import statement in ``path`` names (parents included)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    own = _module_name(path, root) if path.is_relative_to(root) else ""
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    named: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            named.add(base)
            # ``from pkg import name``: name is a submodule or an attribute of pkg
            named.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    modules = set()
    for name in named:
        if name == PACKAGE or name.startswith(PACKAGE + "."):
            modules.update(m for m in _with_parents(name) if module_file(m, root))
    return modules


@lru_cache(maxsize=None)
def _direct_dependencies(path: Path, mtime_ns: int, root: Path) -> frozenset[Path]:
    """The library files ``path`` imports itself (cached until the file changes)."""
    return frozenset(module_file(module, root) for module in _imported_modules(path, root))


def import_closure(path: str | Path, root: Path = SOURCE_ROOT) -> list[Path]:
    """``path`` and every library file it imports, directly or not, sorted."""
    root = root.resolve()
    pending, seen = [Path(path).resolve()], set()
    while pending:  # a worklist, since modules may import each other in a cycle
        current = pending.pop()
        if current not in seen:
            seen.add(current)
            pending.extend(_direct_dependencies(current, current.stat().st_mtime_ns, root))
    return sorted(seen)


def module_closure(module: str, root: Path = SOURCE_ROOT) -> list[Path]:
    """The import closure of a dotted module name (its parent packages included)."""
    files = {module_file(m, root) for m in _with_parents(module)} - {None}
    if module_file(module, root) is None:
        raise ValueError(f"no module {module!r} under {root}")
    return sorted({f for file in files for f in import_closure(file, root)})


# --- a rule's code inputs, as paths relative to the working directory --------------------------

SCRIPTS = SOURCE_ROOT / "scripts"


def syntax_digest(path: Path) -> str:
    """sha256 of what a Python file runs: its syntax tree without docstrings. Comments, docstrings,
    blank lines and line breaks leave it unchanged; any other edit changes it (as does a Python
    release that changes the tree's shape: then every job reruns once)."""
    tree = ast.parse(Path(path).read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and \
                ast.get_docstring(node, clean=False) is not None:
            node.body = node.body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.dump(tree).encode()).hexdigest()


def code_record(path: Path, root: Path | None = None) -> str:
    """The record of a file's syntax digest that jobs take as input (relative to the working directory,
    where the workflow's results are), written only when its digest changed, so that its mtime is
    that of the last change to what the file runs."""
    stat = os.stat(path)
    known = (path, stat.st_mtime_ns, stat.st_size, os.getcwd())
    if known in _RECORDS and os.path.isfile(_RECORDS[known]):
        return _RECORDS[known]
    path = Path(path).resolve()
    source = path.relative_to(root or SOURCE_ROOT).as_posix()
    record = Path(paths.code_record(source))
    text = f"{_digest_of(path, stat, record.with_suffix('.stamp'))}  {source}\n"
    if not record.is_file() or record.read_text() != text:
        _write_atomically(record, text)
    _RECORDS[known] = str(record)
    return str(record)


_RECORDS: dict[tuple, str] = {}  # records checked in this process, by file, mtime, size and working directory


def refresh_records(root: Path | None = None) -> list[str]:
    """Bring the record of every library module and script up to date, before the DAG is built:
    Snakemake caches what a folder holds when it first looks, so a record first written while jobs'
    inputs are being evaluated could be taken for missing."""
    root = root or SOURCE_ROOT
    records = []
    for path in sorted(path for folder in (PACKAGE, "scripts") for path in (root / folder).rglob("*.py")):
        try:
            records.append(code_record(path, root))
        except SyntaxError:
            pass  # a module being edited: a job that imports it fails on it by name, no other job need
    return records


def _digest_of(path: Path, stat: os.stat_result, stamp_file: Path) -> str:
    """``syntax_digest(path)``, parsed only when the file's mtime or size differ from those noted in
    ``stamp_file`` with its last digest: a DAG of the whole pipeline reads some 250 modules, and
    parsing them all would cost each snakemake call ~2 s."""
    stamp = f"{stat.st_mtime_ns} {stat.st_size}"
    if stamp_file.is_file():
        noted, _, digest = stamp_file.read_text().rpartition(" ")
        if noted == stamp:
            return digest
    digest = syntax_digest(path)
    _write_atomically(stamp_file, f"{stamp} {digest}")
    return digest


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    written = path.with_name(f".{path.name}.{socket.gethostname()}.{os.getpid()}")  # unique on a cluster too
    written.write_text(text)
    os.replace(written, path)  # the jobs of a cluster run may refresh the same files at once


# A paper DAG asks the same few closures of its ~4,000 jobs; computed each time, they cost a paper dry
# run an eighth of its time. Each answer is kept with its files' mtimes and recomputed when one
# changed (a long-lived process, such as a test, may edit a module between two calls) or one of its
# records is gone (the results deleted).
_ANSWERS: dict[tuple, tuple[list[str], dict[Path, int]]] = {}


def _remembered(key: tuple, files_of) -> list[str]:
    """The code records of ``files_of()``, sorted, remembered per ``key`` and working directory while
    no file changes."""
    key = (*key, os.getcwd())
    answer = _ANSWERS.get(key)
    if answer is None or any(_mtime_ns(path) != stamp for path, stamp in answer[1].items()) or \
            not all(map(os.path.isfile, answer[0])):
        files = files_of()
        answer = _ANSWERS[key] = (sorted(map(code_record, files)), {path: _mtime_ns(path) for path in files})
    return list(answer[0])


def _mtime_ns(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return None


def _model_names(specs) -> tuple[str, ...]:
    """The zoo models ``specs`` name (under a key "model")."""
    return tuple(sorted(named_models(list(specs))))


def _model_files(models: tuple[str, ...]) -> set[Path]:
    return {file for name in models for file in module_closure(model_module(name))}


def script_code(script: str, *specs) -> list[str]:
    """A job's code inputs: the library files its script (``src/scripts/<script>``) imports, directly
    or not, and the modules of the zoo models its specs name (under a key "model": the zoo imports
    those by name at run time). Editing one of them reruns the job; adding or editing any other
    module does not."""
    return function_code(script, specs=specs)


def function_code(script: str, *functions: str, specs=()) -> list[str]:
    """Code inputs of a generated rule: its script's import closure, that of each module named by a
    "module:function" its manifest entry (or its benchmark) gives, and as ``script_code`` the modules
    of the zoo models its specs name."""
    models = _model_names(specs)

    def files_of():
        files = set(import_closure(SCRIPTS / script)) | _model_files(models)
        for function in functions:
            files.update(module_closure(function.split(":")[0]))
        return files
    return _remembered(("function", script, functions, models), files_of)


def module_code(module: str) -> list[str]:
    """The import closure of a module a job loads by name (a data source's reader)."""
    return _remembered(("module", module), lambda: module_closure(module))
