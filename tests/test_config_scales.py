"""Scales as overlays of one configuration: the composition's rules (a removal, the datasets
replaced per scale, a user's file merged over the scale) and the shipped overlays holding only what
differs from what they overlay."""

import pytest
import yaml

from linearlens.config import (
    CONFIG_DIR,
    DEFAULTS,
    FROM_BASE,
    ORDER,
    REMOVE,
    REPLACE,
    ConfigError,
    compose,
    load_scale,
    overlay,
    read_layer,
    validate_config,
    workflow_config,
)

SCHEMA = CONFIG_DIR / "schema" / "config.schema.yaml"


def leaves(mapping, path=()):
    """(path, value) of every non-mapping value, but inside a mapping that replaces the one below
    (it states its whole content, so it repeats what it keeps)."""
    for key, value in mapping.items():
        if isinstance(value, dict) and value.get(REPLACE) is True:
            continue
        if isinstance(value, dict) and value:
            yield from leaves(value, (*path, key))
        else:
            yield (*path, key), value


def value_at(mapping, path):
    for key in path:
        if not isinstance(mapping, dict) or key not in mapping:
            return KeyError
        mapping = mapping[key]
    return mapping


def repeated_values(layer: dict, below: dict) -> list[str]:
    """The settings of ``layer`` that repeat the value ``below`` already has."""
    return [".".join(map(str, path)) for path, value in leaves(layer)
            if value_at(below, path) == value and type(value_at(below, path)) is type(value)]


@pytest.mark.parametrize("scale, below", [("smoke", None), ("quick", None), ("paper", None), ("rehearsal", "paper")])
def test_an_overlay_never_repeats_what_it_overlays(scale, below):
    own = read_layer(CONFIG_DIR / f"{scale}.yaml")
    under = load_scale(below) if below else read_layer(CONFIG_DIR / "base.yaml")
    assert repeated_values(own, under) == []


def test_a_repeated_value_is_found():
    assert repeated_values({"a": {"b": 1, "c": [2]}, "d": 3}, {"a": {"b": 1, "c": [2, 3]}, "d": 3.0}) == ["a.b"]
    assert repeated_values({"a": {REPLACE: True, "b": 1}}, {"a": {"b": 1, "c": 2}}) == []


def test_a_replacing_mapping_keeps_its_own_keys_in_its_own_order():
    base = {"model": {"name": "mlp", "hidden": [8], "activation": "relu"}, "steps": 3}
    replaced = overlay(base, {"model": {REPLACE: True, "activation": "tanh", "name": "mlp"}})
    assert replaced == {"model": {"activation": "tanh", "name": "mlp"}, "steps": 3}
    assert list(replaced["model"]) == ["activation", "name"]
    merged = overlay(base, {"model": {"activation": "tanh", "width": 4}})
    assert list(merged["model"]) == ["name", "hidden", "activation", "width"]


def test_remove_deletes_a_setting_and_null_stays_a_value():
    base = {"a": 1, "b": {"c": 2, "d": None}, "e": 5}
    assert overlay(base, {"b": {"c": REMOVE}, "e": None}) == {"a": 1, "b": {"d": None}, "e": None}
    assert overlay(base, {"b": REMOVE, "f": {"h": 1}}) == {"a": 1, "e": 5, "f": {"h": 1}}
    assert base == {"a": 1, "b": {"c": 2, "d": None}, "e": 5}


def test_a_remove_in_a_setting_a_layer_adds_is_an_error_not_a_silent_no_op():
    # an entry new in a layer cannot remove its group's default: the defaults apply after every layer
    base = {"group": {DEFAULTS: {"model": "mlp", "steps": 3}, "old": {}}}
    with pytest.raises(ConfigError, match=r"group\.new.*__remove__ of \['model'\]"):
        overlay(base, {"group": {"new": {"model": REMOVE}}})
    with pytest.raises(ConfigError, match="__remove__"):
        overlay(base, {"group": {REPLACE: True, "old": {"steps": REMOVE}}})


def write_scales(directory, base, **overlays):
    (directory / "base.yaml").write_text(yaml.safe_dump(base))
    for scale, layer in overlays.items():
        (directory / f"{scale}.yaml").write_text(yaml.safe_dump(layer))


def test_a_scale_replaces_the_datasets_and_a_users_file_merges_into_them(tmp_path):
    write_scales(tmp_path, {"datasets": {"stand_in": {"n": 1}}, "steps": 3},
                 paper={"scale": "paper", "datasets": {"real": {"n": 2}}},
                 rehearsal={"scale": "rehearsal", "datasets": {"real": {"n": 1}}})
    assert compose("paper", config_dir=tmp_path)["datasets"] == {"real": {"n": 2}}
    assert compose("paper", [{"datasets": {"mine": {"n": 3}}}], tmp_path)["datasets"] == {
        "real": {"n": 2}, "mine": {"n": 3}}
    assert compose("rehearsal", config_dir=tmp_path) == {"scale": "rehearsal", "steps": 3, "datasets": {"real": {"n": 1}}}


def test_a_users_file_overlays_quick_unless_it_names_a_scale(tmp_path):
    write_scales(tmp_path, {"steps": 3, "width": 8}, quick={"scale": "quick"}, paper={"scale": "paper", "steps": 100})
    mine = tmp_path / "mine.yaml"
    mine.write_text("width: 16\n")
    assert workflow_config([mine], {}, tmp_path) == {"steps": 3, "width": 16, "scale": "quick"}
    assert workflow_config([mine], {"scale": "paper"}, tmp_path) == {"steps": 100, "width": 16, "scale": "paper"}
    assert workflow_config([tmp_path / "paper.yaml", mine], {"steps": 7}, tmp_path) == {
        "steps": 7, "width": 16, "scale": "paper"}


def test_the_shipped_command_lines_compose_the_shipped_scales():
    paper, rehearsal = CONFIG_DIR / "paper.yaml", CONFIG_DIR / "rehearsal.yaml"
    assert workflow_config() == load_scale("quick")
    assert workflow_config([paper]) == load_scale("paper")
    assert workflow_config([paper, rehearsal]) == load_scale("rehearsal")
    assert workflow_config([CONFIG_DIR / "smoke.yaml"]) == load_scale("smoke")


def test_each_scale_declares_its_own_datasets():
    base = read_layer(CONFIG_DIR / "base.yaml")["datasets"]
    for scale in ("smoke", "quick", "paper"):
        own = read_layer(CONFIG_DIR / f"{scale}.yaml")["datasets"]
        assert load_scale(scale)["datasets"] == {name: base[name] if entry == FROM_BASE else entry
                                                 for name, entry in own.items()}
    assert FROM_BASE not in read_layer(CONFIG_DIR / "paper.yaml")["datasets"].values()


def test_a_scale_takes_a_base_dataset_only_by_naming_it(tmp_path):
    write_scales(tmp_path, {"datasets": {"shared": {"n": 1}, "other": {"n": 2}}},
                 quick={"datasets": {"own": {"n": 3}, "shared": FROM_BASE}}, paper={"datasets": {"real": {"n": 4}}},
                 smoke={"datasets": {"missing": FROM_BASE}})
    assert compose("quick", config_dir=tmp_path)["datasets"] == {"own": {"n": 3}, "shared": {"n": 1}}
    assert list(compose("quick", config_dir=tmp_path)["datasets"]) == ["own", "shared"]
    assert compose("paper", config_dir=tmp_path)["datasets"] == {"real": {"n": 4}}
    with pytest.raises(ConfigError, match="names no entry of the base's datasets: \\['missing'\\]"):
        compose("smoke", config_dir=tmp_path)
    # a user's file over the paper may name one too
    assert compose("paper", [{"datasets": {"shared": FROM_BASE}}], config_dir=tmp_path)["datasets"] == {
        "real": {"n": 4}, "shared": {"n": 1}}


def test_an_unknown_scale_and_a_wrong_value_name_their_key():
    with pytest.raises(ConfigError, match="config key 'scale'"):
        workflow_config([], {"scale": "huge"})
    with pytest.raises(ConfigError, match="config key 'device'"):
        validate_config(workflow_config([], {"device": "gpu"}), SCHEMA)


def test_defaults_go_under_each_entry_once_every_layer_is_merged(tmp_path):
    base = {"scale": "quick", "runs": {DEFAULTS: {"dataset": None, "lr": 0.1, "seeds": [0]},
                                        "a": {"dataset": "x"}, "b": {"dataset": "y", "lr": 0.5, "extra": 1}}}
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base, sort_keys=False))
    (tmp_path / "quick.yaml").write_text(yaml.safe_dump({"runs": {DEFAULTS: {"seeds": [0, 1], "lr": REMOVE}, "a": {"lr": 0.2}}}))
    runs = compose("quick", config_dir=tmp_path)["runs"]
    # the overlay's default and removal reach both entries; an entry's own value wins
    assert runs == {"a": {"dataset": "x", "seeds": [0, 1], "lr": 0.2},
                    "b": {"dataset": "y", "lr": 0.5, "seeds": [0, 1], "extra": 1}}
    assert list(runs["a"]) == ["dataset", "seeds", "lr"]
    assert list(runs["b"]) == ["dataset", "seeds", "lr", "extra"]
    # counter-example: without the expansion the group would keep its defaults as an entry
    assert DEFAULTS not in runs and DEFAULTS in overlay(base, {})["runs"]


def test_removing_a_setting_that_is_not_there_fails_instead_of_leaving_a_default(tmp_path):
    base = {"runs": {DEFAULTS: {"lr": 0.1}, "a": {"dataset": "x"}}}
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    # the entry does not hold lr (its group's default does): a silent no-op would keep lr = 0.1
    (tmp_path / "quick.yaml").write_text(yaml.safe_dump({"runs": {"a": {"lr": REMOVE}}}))
    with pytest.raises(ConfigError, match=r"'runs\.a\.lr'"):
        compose("quick", config_dir=tmp_path)


def test_a_yaml_merge_shares_no_object_with_its_anchor(tmp_path):
    (tmp_path / "layer.yaml").write_text("a: &a {model: {width: 1}, sizes: [1]}\nb: {<<: *a, label: b}\n")
    layer = read_layer(tmp_path / "layer.yaml")
    assert list(layer["b"]) == ["model", "sizes", "label"]
    layer["b"]["model"]["width"] = 2
    layer["b"]["sizes"].append(2)
    assert layer["a"] == {"model": {"width": 1}, "sizes": [1]}


def test_an_order_places_the_defaults_among_an_entrys_own_keys(tmp_path):
    base = {"runs": {DEFAULTS: {"dataset": "x", "lr": 0.1, "seeds": [0]},
                     "a": {ORDER: ["size", "dataset", "steps", "lr", "seeds"], "size": 5, "steps": 3},
                     "b": {"steps": 4}}}
    write_scales(tmp_path, base, quick={"runs": {DEFAULTS: {"lr": REMOVE}, "b": {ORDER: ["steps", "seeds", "dataset"]}}})
    runs = compose("quick", config_dir=tmp_path)["runs"]
    # a named setting the quick scale removed (lr) is skipped; without an order the defaults come first
    assert list(runs["a"]) == ["size", "dataset", "steps", "seeds"]
    assert list(runs["b"]) == ["steps", "seeds", "dataset"]
    assert runs["a"] == {"size": 5, "dataset": "x", "steps": 3, "seeds": [0]}
    assert list(compose("quick", [{"runs": {"b": {ORDER: REMOVE}}}], tmp_path)["runs"]["b"]) == ["dataset", "seeds", "steps"]


def test_an_order_in_the_defaults_orders_every_entry_and_a_scale_reorders_without_restating(tmp_path):
    base = {"runs": {DEFAULTS: {ORDER: ["name", "lr"], "lr": 0.1}, "a": {"name": "a"}, "b": {"name": "b", "lr": 0.2}},
            "model": {"name": "mlp", "width": 8}}
    write_scales(tmp_path, base, quick={"model": {"activation": "tanh", ORDER: ["activation", "name", "width"]}})
    config = compose("quick", config_dir=tmp_path)
    assert [list(entry) for entry in config["runs"].values()] == [["name", "lr"], ["name", "lr"]]
    assert list(config["model"]) == ["activation", "name", "width"]


def test_keys_an_order_leaves_out_follow_it_so_a_users_layer_may_add_a_setting(tmp_path):
    base = {"runs": {DEFAULTS: {ORDER: ["name", "lr"], "lr": 0.1}, "a": {"name": "a"}}}
    write_scales(tmp_path, base, quick={})
    added = compose("quick", [{"runs": {"a": {"state_every_s": 0.5, "name": "b"}}}], tmp_path)["runs"]["a"]
    assert list(added.items()) == [("name", "b"), ("lr", 0.1), ("state_every_s", 0.5)]


@pytest.mark.parametrize("order, message", [
    (["name", "width", "name"], "must be a list of distinct keys"),
    ("name, width", "must be a list of distinct keys"),
])
def test_an_order_that_is_not_a_list_of_distinct_keys_is_an_error(tmp_path, order, message):
    write_scales(tmp_path, {"model": {ORDER: order, "name": "mlp", "width": 8}}, quick={})
    with pytest.raises(ConfigError, match=message):
        compose("quick", config_dir=tmp_path)


LINE_LENGTH = 120  # the code's (ruff line-length)


def test_config_lines_fit_the_code_line_length():
    long_lines = [
        f"{path.name}:{number}: {len(line)}"
        for path in sorted(CONFIG_DIR.glob("*.yaml"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if len(line) > LINE_LENGTH
    ]
    assert not long_lines, long_lines


def orders(mapping, path=()):
    """(path, listed keys) of every ORDER in a layer."""
    if ORDER in mapping:
        yield path, mapping[ORDER]
    for key, value in mapping.items():
        if isinstance(value, dict):
            yield from orders(value, (*path, key))


def keys_at(layers, path) -> set:
    """Every key that any layer gives the mapping at ``path``; for a group's defaults, those of
    every entry of the group too; for an entry, those of its group's defaults."""
    group, last = path[:-1], path[-1] if path else None
    found = set()
    for layer in layers:
        for mapping in (value_at(layer, path), value_at(layer, (*group, DEFAULTS)) if path else KeyError):
            if isinstance(mapping, dict):
                found |= set(mapping)
        parent = value_at(layer, group)
        if last == DEFAULTS and isinstance(parent, dict):
            found |= {key for entry in parent.values() if isinstance(entry, dict) for key in entry}
    return found


def misspelt_order_keys(layers) -> list[str]:
    """Keys an ORDER lists that no layer has there: a misspelt name is skipped like a removed one,
    and key order reaches results."""
    return [f"{'.'.join(map(str, path))}: {key}" for layer in layers for path, listed in orders(layer)
            for key in listed if key not in keys_at(layers, path)]


def test_every_key_an_order_lists_is_one_a_layer_has_there():
    layers = [read_layer(path) for path in sorted(CONFIG_DIR.glob("*.yaml"))]
    assert misspelt_order_keys(layers) == []
    misspelt = {"runs": {DEFAULTS: {ORDER: ["model", "widht"], "model": "mlp"}, "a": {"width": 2}}}
    assert misspelt_order_keys([misspelt]) == [f"runs.{DEFAULTS}: widht"]
