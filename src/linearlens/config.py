"""Workflow configuration: validation against the JSON schema with messages that name the key.

jsonschema does the checking; this module only says, for each violation, which key is wrong
and what the schema expected there.
"""

from __future__ import annotations

from pathlib import Path

import jsonschema
import yaml


class ConfigError(ValueError):
    """The configuration does not match the schema."""


def load_schema(path: str | Path) -> dict:
    return yaml.safe_load(Path(path).read_text())


def _key_path(error: jsonschema.ValidationError) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "<top level>"


def _describe(error: jsonschema.ValidationError) -> str:
    line = f"config key '{_key_path(error)}': {error.message}"
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    if description and error.validator != "additionalProperties":
        line += f" (expected: {description})"
    return line


def config_errors(config: dict, schema: dict) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path])
    return [_describe(error) for error in errors]


def validate_config(config: dict, schema_path: str | Path, source: str = "config") -> None:
    """Raise ``ConfigError`` listing every violation of the schema, each naming its key."""
    problems = config_errors(config, load_schema(schema_path))
    if problems:
        raise ConfigError(f"invalid {source}:\n  " + "\n  ".join(problems))
