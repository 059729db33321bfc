"""The README and the pages in docs/: every relative link reaches a file and, with an anchor, one of
its headings; the README stays short enough to read."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]+\]\(([^)\s]+)\)")


def anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {anchor(heading) for heading in re.findall(r"^#+ (.*)$", page.read_text(), re.MULTILINE)}


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # a web address: tests never touch the network
        path, _, fragment = target.partition("#")
        destination = (page.parent / path) if path else page
        if not destination.exists() or (fragment and destination.suffix == ".md"
                                        and fragment not in anchors(destination)):
            broken.append(target)
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_relative_link_reaches_its_file_and_heading(page):
    assert broken_links(page) == []


def test_a_broken_link_and_a_missing_heading_are_caught(tmp_path):
    (tmp_path / "other.md").write_text("# A heading, with punctuation\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md#a-heading-with-punctuation) [no file](gone.md) "
                    "[no heading](other.md#elsewhere) [web](https://example.org/x.md)\n")
    assert broken_links(page) == ["gone.md", "other.md#elsewhere"]


def test_the_readme_stays_under_300_lines():
    assert len((ROOT / "README.md").read_text().splitlines()) < 300
