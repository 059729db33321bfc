"""Workflow configuration: its composition from a base and one overlay per scale (below), and its
validation against the JSON schema with messages that name the key.

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


# Scales: a base configuration with one overlay per scale (and the rehearsal over the paper's).
#
# A configuration is composed from layers, each a YAML mapping merged over the ones before it:
#   config/base.yaml <- the scale's overlays <- the user's own --configfile files <- --config values.
# Merging is Snakemake's: mappings merge key by key, recursively; anything else (a list, a number,
# null) replaces what was there. Five additions:
#   - a key set to REMOVE is deleted (null cannot say so: it is a value several settings use);
#     removing a key that is not there is an error, not a silent no-op;
#   - a mapping holding `REPLACE: true` replaces the mapping below instead of merging into it. Key
#     order reaches results (a figure draws its settings in config order, records store their
#     settings as written), and merging puts the keys a layer adds after the ones below it: a
#     scale whose keys come in another order states that mapping whole (or gives its ORDER);
#   - the datasets block of a scale's first overlay replaces the base's instead of merging into it,
#     so a paper run never inherits a stand-in. A later layer (the rehearsal, a user's file) merges
#     into the scale's datasets as into any block. A datasets entry set to FROM_BASE, in any layer, is
#     the base's entry of that name (a stand-in two scales share, stated once and taken only where named);
#   - a group of sibling entries may hold a `DEFAULTS` mapping: once every layer is merged, each
#     entry of the group is that mapping with the entry merged over it (the entry's values win).
#     The defaults' keys come first, in their order, then the entry's own: a layer changes a
#     default for every entry (or removes it), or sets a value in one entry alone;
#   - a mapping holding `ORDER: [key, ...]` has its keys in that order once every layer is merged
#     and the defaults applied (a setting the list names but a layer removed is skipped; keys it
#     leaves out follow, in their merged order, so a user's layer may add a setting). An entry whose keys interleave its group's defaults, or a scale that
#     orders a mapping differently, says so in one line instead of restating the mapping whole. In
#     a group's defaults it orders every entry (an entry's own list replaces it, as lists do).
# The scale is the last `scale:` the user's files or --config name; without one it is quick, so a
# user's own --configfile overlays the default configuration instead of replacing it.

CONFIG_DIR = Path(__file__).resolve().parents[2] / "config"
BASE = "base.yaml"
DEFAULT_SCALE = "quick"
SCALE_OVERLAYS = {
    "smoke": ("smoke.yaml",),
    "quick": ("quick.yaml",),
    "paper": ("paper.yaml",),
    "rehearsal": ("paper.yaml", "rehearsal.yaml"),
}
REMOVE = "__remove__"
REPLACE = "__replace__"
DEFAULTS = "__defaults__"
ORDER = "__order__"
FROM_BASE = "__base__"
REPLACED_PER_SCALE = ("datasets",)


def read_layer(path: str | Path) -> dict:
    """One configuration file as a mapping (an empty file is an empty layer)."""
    layer = yaml.safe_load(Path(path).read_text()) or {}
    if not isinstance(layer, dict):
        raise ConfigError(f"configuration file {path}: expected a mapping of keys, got {type(layer).__name__}")
    return _unshared(layer)


def _unshared(value):
    """``value`` rebuilt so that no two settings are one object: a YAML alias or merge (`<<: *x`)
    shares its anchor's mappings and lists, and a change to one would reach the other."""
    if isinstance(value, dict):
        return {key: _unshared(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unshared(item) for item in value]
    return value


def overlay(config: dict, layer: dict, path: str = "") -> dict:
    """``config`` with ``layer`` merged over it (a new mapping; neither argument changes)."""
    merged = dict(config)
    for key, value in layer.items():
        where = f"{path}.{key}" if path else str(key)
        if value == REMOVE:
            if key not in merged:
                raise ConfigError(f"config key {where!r}: {REMOVE} of a setting that is not there (a group's "
                                  f"{DEFAULTS} come in after every layer: an entry cannot remove one, only "
                                  f"set its own value; a layer may remove it from the {DEFAULTS})")
            del merged[key]
        elif isinstance(value, dict) and isinstance(merged.get(key), dict) and value.get(REPLACE) is not True:
            merged[key] = overlay(merged[key], value, where)
        else:
            merged[key] = _without_markers(value, where)
    return merged


def _without_markers(value, where: str):
    """A layer's new (or replacing) setting, its REPLACE markers gone. A REMOVE inside it has nothing
    to remove, not even a group's default (defaults apply after every layer): an error, not a no-op."""
    if not isinstance(value, dict):
        return value
    if REMOVE in value.values():
        removed = [key for key, item in value.items() if item == REMOVE]
        raise ConfigError(f"config key {where!r}: {REMOVE} of {removed} in a setting this layer adds or replaces: "
                          "there is nothing below it to remove")
    return {key: _without_markers(item, f"{where}.{key}") for key, item in value.items() if key != REPLACE}


def scale_files(scale: str, config_dir: str | Path = CONFIG_DIR) -> list[Path]:
    """The files a scale is made of, base first."""
    if scale not in SCALE_OVERLAYS:
        raise ConfigError(f"config key 'scale': {scale!r} is not one of {sorted(SCALE_OVERLAYS)}")
    return [Path(config_dir) / name for name in (BASE, *SCALE_OVERLAYS[scale])]


def compose(scale: str, user_layers=(), config_dir: str | Path = CONFIG_DIR) -> dict:
    """The configuration of ``scale`` with the user's layers merged over it, in order."""
    base, *overlays = (read_layer(path) for path in scale_files(scale, config_dir))
    config = base
    for index, layer in enumerate([*overlays, *user_layers]):
        # any layer's datasets may name a base entry; the scale's own replace the base's
        layer = {key: _taken_from_base(value, base.get(key, {}), key) if key in REPLACED_PER_SCALE else value
                 for key, value in layer.items()}
        if index == 0:
            config = {key: value for key, value in config.items()
                      if not (key in REPLACED_PER_SCALE and key in layer)}
        config = overlay(config, layer)
    return with_defaults_applied(config)


def _taken_from_base(block: dict, base_block: dict, key: str) -> dict:
    """A layer's ``block`` with each entry set to FROM_BASE replaced by the base's entry of that name."""
    if not isinstance(block, dict):
        return block
    missing = [name for name, value in block.items() if value == FROM_BASE and name not in base_block]
    if missing:
        raise ConfigError(f"config key '{key}': {FROM_BASE} names no entry of the base's {key}: {missing}")
    return {name: base_block[name] if value == FROM_BASE else value for name, value in block.items()}


def with_defaults_applied(config: dict, path: tuple = ()) -> dict:
    """``config`` with each group's ``DEFAULTS`` merged under every entry of the group, and gone, and
    each mapping's keys in its ``ORDER``."""
    defaults = config.get(DEFAULTS)
    expanded = {}
    for key, value in config.items():
        if key == DEFAULTS:
            continue
        if defaults is not None and isinstance(value, dict):
            value = overlay(defaults, value, ".".join(map(str, (*path, key))))
        expanded[key] = with_defaults_applied(value, (*path, key)) if isinstance(value, dict) else value
    return _in_stated_order(expanded, path)


def _in_stated_order(mapping: dict, path: tuple) -> dict:
    if ORDER not in mapping:
        return mapping
    order = mapping.pop(ORDER)
    where = f"config key {'.'.join(map(str, path)) or '<top level>'!r}: {ORDER}"
    if not isinstance(order, list) or len(set(map(str, order))) != len(order):
        raise ConfigError(f"{where} must be a list of distinct keys, got {order!r}")
    # keys the list leaves out (a setting a user's layer adds) follow, as a merge places new keys
    listed = {key: mapping[key] for key in order if key in mapping}
    return {**listed, **{key: value for key, value in mapping.items() if key not in listed}}


def load_scale(scale: str, config_dir: str | Path = CONFIG_DIR) -> dict:
    """The shipped configuration of one scale (smoke, quick, paper, rehearsal)."""
    return compose(scale, config_dir=config_dir)


def selected_scale(layers) -> str:
    """The scale the last layer naming one selects; quick when none does."""
    named = [layer["scale"] for layer in layers if "scale" in layer]
    return named[-1] if named else DEFAULT_SCALE


def workflow_config(configfiles=(), overrides: dict | None = None, config_dir: str | Path = CONFIG_DIR) -> dict:
    """The configuration of a workflow run: the selected scale, then the user's ``--configfile``
    files, then the ``--config`` values. A scale's own file given as ``--configfile`` (the usual
    ``--configfile config/paper.yaml``) selects that scale and is not applied twice."""
    files = [(Path(path).resolve(), read_layer(path)) for path in configfiles]
    overrides = dict(overrides or {})
    scale = selected_scale([*(layer for _, layer in files), overrides])
    shipped = {path.resolve() for path in scale_files(scale, config_dir)}
    return compose(scale, [*(layer for path, layer in files if path not in shipped), overrides], config_dir)
