"""The HTML report: every figure and table the run produced, grouped by paper, each with its
caption, its data source and the verdicts of the paper's claims for it, plus the provenance of
every prepared dataset."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from .claims import ClaimCheck, read_claims


@dataclass
class FigureEntry:
    name: str
    image: str  # path relative to the report
    caption: str
    data_source: str
    checks: list[ClaimCheck] = field(default_factory=list)


@dataclass
class PaperSection:
    key: str
    title: str
    scale: str | None
    figures: list[FigureEntry]
    unplaced_checks: list[ClaimCheck]  # checks whose figure produced no file


def describe_step(step: dict) -> str:
    """A provenance transform as one line: ``label_noise(rate=0.2, flipped=37, seed=0)``."""
    arguments = ", ".join(f"{key}={value}" for key, value in step.items() if key != "step")
    return f"{step['step']}({arguments})"


def _figure_entry(path: Path, report_dir: Path, checks: list[ClaimCheck]) -> FigureEntry:
    sidecar = path.with_suffix(".json")
    meta = json.loads(sidecar.read_text()) if sidecar.exists() else {}
    return FigureEntry(
        name=path.stem,
        image=os.path.relpath(path, report_dir),
        caption=meta.get("caption", "(no caption recorded)"),
        data_source=meta.get("data_source", "(data source not recorded)"),
        checks=[check for check in checks if check.figure == path.stem],
    )


def paper_section(key: str, title: str, figure_paths: list[Path], claims_path: Path | None,
                  report_dir: Path) -> PaperSection:
    claims = read_claims(claims_path) if claims_path and claims_path.exists() else None
    checks = claims["checks"] if claims else []
    figures = [_figure_entry(path, report_dir, checks) for path in sorted(figure_paths)]
    placed = {figure.name for figure in figures}
    return PaperSection(key, title, claims["scale"] if claims else None, figures,
                        [check for check in checks if check.figure not in placed])


def build_report(out_path: str | Path, papers: dict[str, str], figures: dict[str, list],
                 claims: dict[str, str | None], dataset_provenance: list, scale: str) -> None:
    """Write the report to ``out_path``; ``papers`` maps a paper key to its title."""
    out_path = Path(out_path)
    report_dir = out_path.parent
    report_dir.mkdir(parents=True, exist_ok=True)
    sections = [
        paper_section(key, title, [Path(p) for p in figures.get(key, [])],
                      Path(claims[key]) if claims.get(key) else None, report_dir)
        for key, title in papers.items()
    ]
    datasets = [
        {"name": Path(path).stem, "provenance": json.loads(Path(path).read_text())}
        for path in sorted(dataset_provenance)
    ]
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("linearlens", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
    )
    environment.filters["describe_step"] = describe_step
    html = environment.get_template("report.html.j2").render(
        sections=sections, datasets=datasets, scale=scale)
    out_path.write_text(html)
