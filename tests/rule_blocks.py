"""The rule blocks of the workflow's rule files, for tests that check what the rules declare."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rule_blocks() -> dict[str, str]:
    """{rule name: the text of its block} over every file in rules/."""
    return {m[1]: m[2] for path in sorted((ROOT / "rules").glob("*.smk"))
            for m in re.finditer(r"^rule (\w+):\n(.*?)(?=^rule |\Z)", path.read_text(), re.MULTILINE | re.DOTALL)}

