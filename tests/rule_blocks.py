"""The rule blocks of the workflow's rule files, for tests that check what the rules declare."""

import re
from pathlib import Path

from linearlens.families import declared_families

ROOT = Path(__file__).resolve().parents[1]


def rule_blocks() -> dict[str, str]:
    """{rule name: the text of its block} over every file in rules/."""
    return {m[1]: m[2] for path in sorted((ROOT / "rules").glob("*.smk"))
            for m in re.finditer(r"^rule (\w+):\n(.*?)(?=^rule |\Z)", path.read_text(), re.MULTILINE | re.DOTALL)}


NESTED_RULE = re.compile(r"^ *rule( \w+)?:\n", re.MULTILINE)


def all_rule_blocks() -> dict[str, str]:
    """{rule: its block} over every rule file, rules inside `if` and `for` blocks included (a rule
    without a name takes the names its `name:` directive spells out; the run families' generated
    rule, whose name is computed, is left out: see device_rules)."""
    blocks = {}
    for path in sorted((ROOT / "rules").rglob("*.smk")):
        text = path.read_text()
        starts = list(NESTED_RULE.finditer(text))
        for start, end in zip(starts, [*starts[1:], None]):
            block = text[start.end():end.start() if end else len(text)]
            names = [start[1].strip()] if start[1] else re.findall(r'"(\w+)"', re.search(r"name:\n(.*)\n", block)[1])
            blocks.update(dict.fromkeys(names, block))
    return blocks


def device_rules() -> set[str]:
    """The rules whose code runs on the configured device, so that `device: cuda` must get them a GPU:
    the hand-written rules handed the device, and the run families that declare it."""
    handed_the_device = {rule for rule, block in all_rule_blocks().items() if 'config["device"]' in block}
    return handed_the_device | {family.rule for family in declared_families() if family.device}
