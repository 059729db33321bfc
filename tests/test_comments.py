"""Comments, docstrings and schema descriptions say the fact itself: a reader of the repository has no
copy of the reproduction specs, so "spec §11.1" or "trap C5-2" tells them nothing. (Text that reaches
a figure or a claims file is left alone here: changing it would change an output.)"""

import ast
import io
import re
import tokenize
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

# "spec §3", "spec (§2)", "spec trap", "trap C5-2", "T-LVH-14", the specs' "CODE" and "DEFAULT"
OUTSIDE_REFERENCE = re.compile(
    r"\bspec\s*\(?(§|trap\b)|\btrap [A-Z]+\d*-\d+|\b[A-Z]-[A-Z]+-\d+\b|\bCODE\b|\bDEFAULTs?\b|\bQUICK\b")


def python_comments(text: str) -> list[str]:
    """The # comments and the docstrings of a Python source."""
    comments = [token.string for token in tokenize.generate_tokens(io.StringIO(text).readline)
                if token.type == tokenize.COMMENT]
    nodes = [node for node in ast.walk(ast.parse(text))
             if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)]
    return comments + [doc for node in nodes if (doc := ast.get_docstring(node))]


def line_comment(line: str) -> str:
    """The part of a YAML, Snakefile or Makefile line after its first # outside quotes."""
    quote = None
    for index, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[index:]
    return ""


def schema_descriptions(node) -> list[str]:
    if isinstance(node, dict):
        own = [node["description"]] if isinstance(node.get("description"), str) else []
        return own + [text for value in node.values() for text in schema_descriptions(value)]
    if isinstance(node, list):
        return [text for value in node for text in schema_descriptions(value)]
    return []


def explanations() -> dict[str, list[str]]:
    """Every comment, docstring and schema description of the repository's code and configuration."""
    found = {}
    for path in [*(ROOT / "src").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]:
        if path == Path(__file__).resolve():
            continue  # its own pattern and examples
        found[path] = python_comments(path.read_text())
    for path in [ROOT / "Snakefile", ROOT / "Makefile", *(ROOT / "rules").rglob("*.smk"),
                 *(ROOT / "config").glob("*.yaml"), *(ROOT / "profiles").rglob("*.yaml")]:
        found[path] = [line_comment(line) for line in path.read_text().splitlines()]
    for path in (ROOT / "config" / "schema").glob("*.yaml"):
        found[path] = schema_descriptions(yaml.safe_load(path.read_text()))
    return {str(path.relative_to(ROOT)): texts for path, texts in found.items()}


def test_no_comment_cites_a_document_outside_the_repository():
    citing = [f"{path}: {match.group(0)!r} in {text.strip()[:100]!r}"
              for path, texts in explanations().items() for text in texts
              for match in [OUTSIDE_REFERENCE.search(text)] if match]
    assert not citing, "say the fact itself:\n" + "\n".join(citing)


def test_the_reference_pattern_finds_spec_citations_and_nothing_else():
    for citation in ("spec §11.1", "(spec §1.5)", "spec (§3)", "trap C5-2", "spec trap C3-1", "T-LVH-14",
                     "(CODE 1000)", "spec DEFAULT", "(DEFAULTs)", "QUICK = full"):
        assert OUTSIDE_REFERENCE.search(citation), citation
    for fact in ("Example 4 (§2.4.1)", "the author's code", "a default", "T-shirt", "GPT-2", "ResNet-18",
                 "C-scores", "the spec's grid"):
        assert not OUTSIDE_REFERENCE.search(fact), fact


def test_the_scanners_read_comments_docstrings_and_descriptions_only():
    source = '"""Module, spec §1."""\nx = "spec §2"  # trap C5-2\ndef f():\n    """T-EK-9"""\n'
    assert python_comments(source) == ["# trap C5-2", "Module, spec §1.", "T-EK-9"]
    assert line_comment("why: 'spec §3 # not a comment'  # CODE") == "# CODE"
    assert line_comment("url: https://x.org/a#b") == ""
    assert schema_descriptions({"a": {"description": "T-NTK-4", "type": "string"}, "b": [{"description": "x"}]}) == [
        "T-NTK-4", "x"]
