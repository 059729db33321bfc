"""The zoo's names: each model a spec can name (``{"name": <zoo name>, **constructor arguments}``)
is a function of a module of ``linearlens.models`` marked ``@zoo_model``, and the zoo knows it by
that function's name. The marks are read from the source (no import, no torch): the workflow uses
them to list a job's model code among the job's code inputs; ``zoo`` uses them to import that
module alone. So adding a model to a new module reruns no result, and the modules' other functions
are their helpers, never models."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parent


def zoo_model(constructor):
    """Marks a model constructor as a zoo name (nothing else: ``zoo_modules`` finds the mark in the
    source)."""
    return constructor


def _marked(node: ast.stmt) -> bool:
    return isinstance(node, ast.FunctionDef) and any(
        isinstance(decorator, ast.Name) and decorator.id == zoo_model.__name__ for decorator in node.decorator_list)


@lru_cache(maxsize=None)
def zoo_modules() -> dict[str, str]:
    """Each zoo name with the module of ``linearlens.models`` that defines it."""
    names: dict[str, str] = {}
    for path in sorted(MODELS_DIR.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if _marked(node):
                if node.name in names:
                    raise ValueError(f"zoo name {node.name!r} is defined in both {names[node.name]} and {path.stem}")
                names[node.name] = path.stem
    return names


def model_module(name: str) -> str:
    """The dotted module that defines the zoo model ``name``."""
    modules = zoo_modules()
    if name not in modules:
        raise ValueError(f"model spec names {name!r}; the zoo has {sorted(modules)}")
    return f"linearlens.models.{modules[name]}"


def named_models(tree) -> set[str]:
    """The zoo names of every model spec (a dict with a "name" under a key "model") in a nested
    structure of dicts and lists, such as a run's settings."""
    found: set[str] = set()
    if isinstance(tree, dict):
        for key, value in tree.items():
            if key == "model" and isinstance(value, dict) and "name" in value:
                found.add(value["name"])
            found |= named_models(value)
    elif isinstance(tree, (list, tuple)):
        for value in tree:
            found |= named_models(value)
    return found
