"""Which module of ``linearlens.models`` defines each zoo name, read from the source (no import, no
torch): a zoo name is a public function defined at a module's top level. The workflow uses it to
list a job's model code among the job's code inputs; ``zoo`` uses it to import that module alone."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parent
NOT_MODELS = {"__init__", "names", "zoo"}


@lru_cache(maxsize=None)
def zoo_modules() -> dict[str, str]:
    """Each zoo name with the module that defines it."""
    names: dict[str, str] = {}
    for path in sorted(MODELS_DIR.glob("*.py")):
        if path.stem in NOT_MODELS:
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
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
