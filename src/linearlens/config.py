"""Workflow configuration: validation against the JSON schema with messages that name the key.

jsonschema does the checking; this module only says, for each violation, which key is wrong
and what the schema expected there.

The schema is split over several YAML files in one directory (config/schema/): the entry point
refers to the others by relative ``$ref`` (``telescoping.schema.yaml``,
``shared.schema.yaml#/$defs/optimiser``). ``load_schema`` records the entry file's location as its
``$id``, and the validator's ``referencing.Registry`` reads the referenced files from that
directory, and only from there (no network).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

import jsonschema
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012


class ConfigError(ValueError):
    """The configuration does not match the schema."""


def load_schema(path: str | Path) -> dict:
    """The schema file at ``path``, with its ``file:`` URI as ``$id`` so relative ``$ref``s resolve."""
    path = Path(path).resolve()
    schema = yaml.safe_load(path.read_text())
    schema.setdefault("$id", path.as_uri())
    return schema


def _file_path(uri: str) -> Path:
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        raise ValueError(f"schema reference {uri!r} is not a file next to the schema")
    return Path(url2pathname(parts.path)).resolve()


def schema_registry(schema: dict) -> Registry:
    """A registry that retrieves the files a schema refers to from the directory of its ``$id``."""
    base = schema.get("$id", "")
    directory = _file_path(base).parent if base.startswith("file:") else None
    retrieved: dict[str, Resource] = {}

    def retrieve(uri: str) -> Resource:
        if uri not in retrieved:
            if directory is None:
                raise ValueError(f"schema reference {uri!r}: load the schema with load_schema to resolve it")
            path = _file_path(uri)
            if not path.is_relative_to(directory):
                raise ValueError(f"schema reference {uri!r} is outside the schema directory {directory}")
            contents = yaml.safe_load(path.read_text())
            retrieved[uri] = Resource.from_contents(contents, default_specification=DRAFT202012)
        return retrieved[uri]

    return Registry(retrieve=retrieve)


def _key_path(error: jsonschema.ValidationError) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "<top level>"


def _describe(error: jsonschema.ValidationError) -> str:
    line = f"config key '{_key_path(error)}': {error.message}"
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    if description and error.validator != "additionalProperties":
        line += f" (expected: {description})"
    return line


def config_errors(config: dict, schema: dict) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema, registry=schema_registry(schema))
    errors = sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path])
    return [_describe(error) for error in errors]


def validate_config(config: dict, schema_path: str | Path, source: str = "config") -> None:
    """Raise ``ConfigError`` listing every violation of the schema, each naming its key."""
    problems = config_errors(config, load_schema(schema_path))
    if problems:
        raise ConfigError(f"invalid {source}:\n  " + "\n  ".join(problems))
