"""The HTML report: a summary of the run, then every figure and table of the four documents in the
documents' order. Built ones show their image or table, caption, data source and the verdicts of
the document's claims on them; the rest are listed one line each with why they are not built.
Ends with the provenance of every prepared dataset.

The workflow gives the inventory (``document_inventory``, at DAG time); the report job adds what
only it can know (``run_summary``: the commit, the run's wall time and job time)."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from . import paths
from .claims import FAILURE_LABELS, FAILURE_REASONS, ClaimCheck, read_claims
from .manifests.entries import BUILT, Entry, document_order

NOT_CONFIGURED = "not configured at this scale"  # the manifest says built; this config does not build it
UNLISTED_NOTE = "not in the document's manifest"


# --- inventory (DAG time) -----------------------------------------------------------------------



def _status(entry: Entry, target: str, built: set[str]) -> str:
    if target in built:
        return BUILT
    return NOT_CONFIGURED if entry.status == BUILT else entry.status


def _entry_record(entry: Entry, document: str, status: str, note: str) -> dict:
    return {"id": entry.id, "label": entry.label, "kind": entry.kind, "title": entry.title,
            "section": entry.section, "status": status, "note": note, "path": entry.path(document)}


def _unlisted_record(document: str, path: str) -> dict:
    """A built target the manifest does not list yet: shown anyway, so nothing built goes missing."""
    try:
        entry = Entry(Path(path).stem, "")
    except ValueError:  # not in the documents' numbering: shown under its file name
        kind = "table" if Path(path).stem.startswith("table_") else "figure"
        return {"id": Path(path).stem, "label": Path(path).stem, "kind": kind, "title": "", "section": "",
                "status": BUILT, "note": UNLISTED_NOTE, "path": path}
    return {**_entry_record(entry, document, BUILT, UNLISTED_NOTE), "path": path}


def document_inventory(document: str, title: str, entries: Iterable[Entry], built: Iterable[str]) -> dict:
    """A document's entries as plain records in the document's order, each with the status this
    configuration gives it: built (its target is among ``built``), not configured at this scale
    (the manifest builds it, this config does not), or the manifest's own status; with its note.
    Built targets the manifest does not list are added, so nothing built goes unshown. The order of
    ``built`` does not count: the records are the same for any config key order."""
    built = set(built)
    records = [_entry_record(entry, document, _status(entry, entry.path(document), built), entry.note)
               for entry in entries]
    listed = {record["path"] for record in records}
    records += [_unlisted_record(document, path) for path in sorted(built - listed)]
    records.sort(key=lambda record: document_order(record["id"]))
    return {"key": document, "title": title, "entries": records}


def config_digest(config: dict) -> str:
    """The first 12 hex digits of the sha256 of the config as sorted-key JSON (key order never counts)."""
    text = json.dumps(config, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


# --- the run (report job time) ------------------------------------------------------------------

@dataclass(frozen=True)
class RunSummary:
    commit: str  # "<sha> (uncommitted changes)", or "not a git checkout"
    config_digest: str
    wall_seconds: float | None  # since the current Snakemake invocation started; None: unknown
    job_seconds: float | None  # summed over the per-rule benchmark files; None: none found
    benchmark_files: int = 0  # how many benchmark files job_seconds sums


def _git(repo_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo_dir), *args], capture_output=True, text=True,
                          check=True, timeout=30).stdout.strip()


def git_commit(repo_dir: str | Path) -> str:
    """The checked-out commit, marked when tracked files differ from it (untracked files do not count)."""
    try:
        commit = _git(Path(repo_dir), "rev-parse", "HEAD")
        dirty = _git(Path(repo_dir), "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "not a git checkout"
    return f"{commit} (uncommitted changes)" if dirty else commit


def _log_start(path: Path) -> datetime.datetime | None:
    """Snakemake names its log after its local start time: 2026-11-24T235056.481776.snakemake.log."""
    stamp = path.name.removesuffix(".snakemake.log")
    for layout in ("%Y-%m-%dT%H%M%S.%f", "%Y-%m-%dT%H%M%S"):
        try:
            return datetime.datetime.strptime(stamp, layout)
        except ValueError:
            pass
    return None


def invocation_start(log_dir: str | Path, now: datetime.datetime,
                     stale_after: float = 600) -> datetime.datetime | None:
    """When the current Snakemake invocation started: its log is the newest in ``log_dir``. A newest
    log untouched for ``stale_after`` seconds belongs to an earlier run (this one keeps no log, as
    with a dry run or a direct call): None then, as when there is no log."""
    logs = [(start, path) for path in Path(log_dir).glob("*.snakemake.log") if (start := _log_start(path))]
    if not logs:
        return None
    start, path = max(logs)
    modified = datetime.datetime.fromtimestamp(path.stat().st_mtime)
    return start if (now - modified).total_seconds() <= stale_after else None


def benchmark_seconds(benchmark_dir: str | Path) -> tuple[float | None, int]:
    """Seconds summed over every row of the benchmark TSVs (the ``s`` column), and the file count."""
    total, files = 0.0, 0
    for path in sorted(Path(benchmark_dir).rglob("*.tsv")):
        lines = path.read_text().splitlines()
        if len(lines) < 2 or lines[0].split("\t")[0] != "s":
            continue
        try:
            total += sum(float(line.split("\t")[0]) for line in lines[1:] if line.strip())
        except ValueError:
            continue
        files += 1
    return (total if files else None), files


def run_summary(repo_dir: str | Path, workdir: str | Path, config_digest: str,
                now: datetime.datetime | None = None) -> RunSummary:
    """What the report job knows of its run; ``workdir`` holds .snakemake/log and the jobs' benchmark files."""
    now = now or datetime.datetime.now()
    start = invocation_start(Path(workdir) / ".snakemake" / "log", now)
    job_seconds, jobs = benchmark_seconds(Path(workdir) / paths.JOB_BENCHMARKS)
    return RunSummary(git_commit(repo_dir), config_digest,
                      (now - start).total_seconds() if start else None, job_seconds, jobs)


def describe_duration(seconds: float | None) -> str:
    """12 s, 4 min 05 s, 2 h 03 min; "unknown" when not measured."""
    if seconds is None:
        return "unknown"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


# --- LaTeX fragments as plain symbols -----------------------------------------------------------

GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
    "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ",
    "tau": "τ", "upsilon": "υ", "phi": "ϕ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ",
    "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}
SYMBOLS = {
    **GREEK,
    "nabla": "∇", "partial": "∂", "sum": "∑", "prod": "∏", "int": "∫", "top": "⊤", "intercal": "⊺",
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈", "sim": "∼",
    "simeq": "≃", "equiv": "≡", "propto": "∝", "ll": "≪", "gg": "≫", "cdot": "·", "times": "×",
    "div": "÷", "pm": "±", "mp": "∓", "circ": "∘", "otimes": "⊗", "oplus": "⊕", "odot": "⊙",
    "in": "∈", "notin": "∉", "subset": "⊂", "subseteq": "⊆", "cup": "∪", "cap": "∩",
    "emptyset": "∅", "forall": "∀", "exists": "∃", "neg": "¬", "infty": "∞", "ell": "ℓ",
    "to": "→", "rightarrow": "→", "leftarrow": "←", "Rightarrow": "⇒", "Leftrightarrow": "⇔",
    "mapsto": "↦", "ldots": "…", "dots": "…", "cdots": "⋯", "langle": "⟨", "rangle": "⟩",
    "|": "‖", "Vert": "‖", "lVert": "‖", "rVert": "‖", "vert": "|", "mid": "|", "star": "⋆",
    "dagger": "†", "prime": "′", "perp": "⊥", "hbar": "ℏ",
    "quad": "\u2003", "qquad": "\u2003\u2003", ",": "\u2009", ";": " ", ":": " ", " ": " ", "!": "",
    "\\": " ",
}
# Written as words in print: \log x, \max_i.
OPERATORS = {"log", "exp", "ln", "min", "max", "sup", "inf", "arg", "argmin", "argmax", "det", "tr",
             "lim", "sin", "cos", "tanh", "sign", "diag", "rank", "Var", "Cov", "Pr"}
DOUBLE_STRUCK = {"E": "𝔼", "R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "P": "ℙ", "1": "𝟙"}
ACCENTS = {"tilde": "\u0303", "hat": "\u0302", "widehat": "\u0302", "widetilde": "\u0303",
           "bar": "\u0304", "overline": "\u0305", "dot": "\u0307", "ddot": "\u0308", "vec": "\u20d7"}
# Commands whose argument is shown as it is: fonts and text.
PLAIN_ARGUMENT = {"mathrm", "mathbf", "mathit", "mathsf", "mathcal", "mathtt", "boldsymbol", "bm",
                  "text", "textrm", "textit", "textbf", "operatorname", "emph"}
DROPPED = {"left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr",
           "displaystyle", "limits", "nolimits"}
ESCAPED = set("{}%$&#_")
# Symbols that read as letters: a space between them and a variable only ends the command.
LETTERLIKE = set(GREEK) | {"nabla", "partial", "ell", "hbar", "sum", "prod", "int", "neg"}


class _LatexReader:
    """A small recursive reader: text, {groups}, \\commands and _/^ scripts, to HTML pieces."""

    def __init__(self, text: str):
        self.text, self.pos = text, 0

    def read(self, closing: str | None = None) -> str:
        """HTML up to the matching ``closing`` brace (or the end), which is consumed."""
        out = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == closing:
                self.pos += 1
                break
            out.append(self.atom())
        return "".join(out)

    def atom(self) -> str:
        char = self.text[self.pos]
        if char == "{":
            self.pos += 1
            return self.read("}")
        if char == "}":  # unmatched: braces are dropped
            self.pos += 1
            return ""
        if char == "\\":
            return self.command()
        if char in "_^" and self.is_script():
            self.pos += 1
            tag = "sub" if char == "_" else "sup"
            return f"<{tag}>{self.argument(word=True)}</{tag}>"
        self.pos += 1
        return str(escape(char))

    def is_script(self) -> bool:
        """``_`` after a word of two or more letters is an identifier (fig_3, test_accuracy), not a
        subscript; a script needs something to attach to and something after it."""
        previous, following = self.text[self.pos - 1:self.pos], self.text[self.pos + 1:self.pos + 2]
        if not previous.strip() or previous == "_" or not following.strip() or following in "_^":
            return False
        if self.text[self.pos] == "^":
            return True
        before = re.search(r"(\\?)([A-Za-z0-9]*)$", self.text[:self.pos])
        return bool(before[1]) or len(before[2]) <= 1

    def argument(self, word: bool = False) -> str:
        """A command's or script's argument: a {group}, a \\command, or one character (a whole word
        after _ or ^: plain text writes p^test for p^{test})."""
        if self.pos >= len(self.text):
            return ""
        char = self.text[self.pos]
        if char in "{\\":
            return self.atom()
        match = re.compile(r"[-−+]?[^\W_]+").match(self.text, self.pos) if word else None
        end = match.end() if match else self.pos + 1
        piece, self.pos = self.text[self.pos:end], end
        return str(escape(piece))

    def skip_space_before_variable(self) -> None:
        """\\nabla f reads ∇f; \\alpha of the kernel keeps its space (a word, not a variable)."""
        match = re.compile(r"\s+(?=[^\W\d_](?![^\W_]))").match(self.text, self.pos)
        self.pos = match.end() if match else self.pos

    def command(self) -> str:
        match = re.compile(r"\\([A-Za-z]+|.)").match(self.text, self.pos)
        if not match:  # a trailing backslash
            self.pos += 1
            return "\\"
        self.pos = match.end()
        name = match[1]
        if name in ESCAPED:
            return str(escape(name))
        if name in SYMBOLS:
            if name in LETTERLIKE:
                self.skip_space_before_variable()
            return str(escape(SYMBOLS[name]))
        if name in OPERATORS or name in DROPPED:
            return name if name in OPERATORS else ""
        if name == "mathbb":
            plain = self.argument()
            return DOUBLE_STRUCK.get(plain, plain)
        if name in ACCENTS:
            return self.argument() + ACCENTS[name]
        if name in PLAIN_ARGUMENT:
            return self.argument()
        if name == "frac":
            return f"{_grouped(self.argument())}/{_grouped(self.argument())}"
        if name == "sqrt":
            return f"√{_grouped(self.argument())}"
        return str(escape(name))  # unknown: its name, without the backslash


def _grouped(html: str) -> str:
    """Parenthesised unless a single symbol or word: \\frac{a+b}{2} reads (a+b)/2."""
    plain = re.sub(r"<[^>]+>", "", html)
    return html if re.fullmatch(r"[^\W_]+", plain) or len(plain) <= 1 else f"({html})"


def latex_to_html(text: str | None) -> Markup:
    """Caption text with LaTeX fragments as plain symbols: \\alpha -> α, x^{2} -> x<sup>2</sup>,
    ∇f_{θ_{t−1}} -> ∇f<sub>θ<sub>t−1</sub></sub>, \\mathbb{E} -> 𝔼, braces and $ delimiters dropped.
    Everything else is escaped, so the result is safe to place in the page."""
    if text is None:
        return Markup("")
    text = re.sub(r"(?<!\\)\$(.+?)(?<!\\)\$", r"\1", str(text))  # $...$ math: keep the inside
    return Markup(_LatexReader(text).read())


# --- the page -----------------------------------------------------------------------------------

@dataclass
class ItemView:
    """One manifest entry as the page shows it."""
    document: str
    id: str
    label: str
    kind: str
    title: str
    section: str
    status: str
    note: str
    path: str
    caption: str = ""
    data_source: str = ""
    image: str | None = None  # a built figure, relative to the report
    table: Markup | None = None  # a built table, as HTML
    checks: list[ClaimCheck] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return f"{self.document}-{self.id}"

    @property
    def built(self) -> bool:
        return self.status == BUILT


@dataclass
class FidelityRow:
    """What one chapter's (or one paper section's) checks show at this scale."""
    document: str
    section: str
    holds: int = 0
    not_evaluated: int = 0
    fails: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAILURE_REASONS, 0))

    def add(self, check: ClaimCheck) -> None:
        if check.passed is None:
            self.not_evaluated += 1
        elif check.passed:
            self.holds += 1
        else:
            self.fails[check.failure_reason] += 1

    @property
    def failing(self) -> int:
        return sum(self.fails.values())


@dataclass
class DocumentView:
    key: str
    title: str
    scale: str
    items: list[ItemView]
    unplaced_checks: list[ClaimCheck]  # checks whose figure or table was not built
    checks: list[ClaimCheck]
    sections: dict[str, str] = field(default_factory=dict)  # entry id -> its section ("" in a paper's body)

    @property
    def short_name(self) -> str:
        return self.key.replace("_", " ")

    def fidelity(self) -> list[FidelityRow]:
        """The checks counted per section of the document, in the order the sections come."""
        rows: dict[str, FidelityRow] = {}
        for section in [*self.sections.values(), ""]:
            rows.setdefault(section or "main text", FidelityRow(self.short_name, section or "main text"))
        for check in self.checks:
            rows[self.sections.get(check.figure) or "main text"].add(check)
        return [row for row in rows.values() if row.holds + row.failing + row.not_evaluated]

    def count(self, kind: str, built: bool | None = None) -> int:
        return sum(item.kind == kind and (built is None or item.built == built) for item in self.items)

    def verdicts(self, passed: bool | None) -> int:
        return sum(check.passed is passed for check in self.checks)


def _sidecar(path: Path) -> dict:
    sidecar = path.with_suffix(".json")
    return json.loads(sidecar.read_text()) if sidecar.exists() else {}


def table_html(csv_path: str | Path, max_rows: int = 200) -> Markup:
    """A table target as an HTML table (numbers to 4 significant digits, long tables cut)."""
    import pandas as pd

    frame = pd.read_csv(csv_path)
    return Markup(frame.to_html(index=False, border=0, classes="data", na_rep="", max_rows=max_rows,
                                float_format=lambda value: f"{value:.4g}"))


def _item_view(document: str, record: dict, checks: list[ClaimCheck], report_dir: Path) -> ItemView:
    item = ItemView(document=document, **{key: record[key] for key in
                    ("id", "label", "kind", "title", "section", "status", "note", "path")})
    if not item.built:
        return item
    path = Path(item.path)
    meta = _sidecar(path)
    item.caption = meta.get("caption", "(no caption recorded)")
    item.data_source = meta.get("data_source", "(data source not recorded)")
    item.checks = [check for check in checks if check.figure == item.id]
    if item.kind == "table":
        item.table = table_html(path) if path.exists() else None
    else:
        item.image = os.path.relpath(path, report_dir)
    return item


def document_view(document: dict, claims_path: str | None, scale: str, report_dir: Path) -> DocumentView:
    claims = read_claims(claims_path) if claims_path and Path(claims_path).exists() else None
    checks = claims["checks"] if claims else []
    records = sorted(document["entries"], key=lambda record: document_order(record["id"]))
    items = [_item_view(document["key"], record, checks, report_dir) for record in records]
    built = {item.id for item in items if item.built}
    sections = {record["id"]: record["section"] for record in records}
    return DocumentView(document["key"], document["title"], claims["scale"] if claims else scale, items,
                        [check for check in checks if check.figure not in built], checks, sections)


def fidelity_markdown(views: list[DocumentView], scale: str) -> str:
    """The fidelity table as Markdown (the README quotes it): per document and section, the checks
    holding, failing by reason, and not evaluated at this scale."""
    header = (["document", "section", "hold", "fail"] + [f"fail: {label}" for label in FAILURE_LABELS.values()]
              + ["not evaluated"])
    legend = "; ".join(f"{FAILURE_LABELS[key]}: {reason}" for key, reason in FAILURE_REASONS.items())
    lines = [f"Claim checks at the {scale} scale. Failure reasons: {legend}.", "", "| " + " | ".join(header) + " |",
             "|" + "---|" * len(header)]
    for view in views:
        for row in view.fidelity():
            cells = [row.document, row.section, row.holds, row.failing, *row.fails.values(), row.not_evaluated]
            lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def describe_step(step: dict) -> str:
    """A provenance transform as one line: ``label_noise(rate=0.2, flipped=37, seed=0)``."""
    arguments = ", ".join(f"{key}={value}" for key, value in step.items() if key != "step")
    return f"{step['step']}({arguments})"


def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("linearlens", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        trim_blocks=True, lstrip_blocks=True,
    )
    environment.filters.update(describe_step=describe_step, latex=latex_to_html,
                               duration=describe_duration)
    return environment


def build_report(out_path: str | Path, documents: list[dict], claims: dict[str, str | None],
                 dataset_provenance: list, scale: str, run: RunSummary | None = None,
                 fidelity_path: str | Path | None = None) -> None:
    """Write the report to ``out_path``. ``documents`` are ``document_inventory`` records in
    report order (entry paths relative to the working directory); ``claims`` maps a document to
    its claims file; ``run`` is what the report job measured of its run (None: unknown). The
    fidelity table goes to ``fidelity_path`` too, as Markdown, when given."""
    out_path = Path(out_path)
    report_dir = out_path.parent
    report_dir.mkdir(parents=True, exist_ok=True)
    views = [document_view(document, claims.get(document["key"]), scale, report_dir) for document in documents]
    datasets = [
        {"name": Path(path).stem, "provenance": json.loads(Path(path).read_text())}
        for path in sorted(dataset_provenance)
    ]
    html = _environment().get_template("report.html.j2").render(
        documents=views, datasets=datasets, scale=scale, run=run, built=BUILT, reasons=FAILURE_REASONS,
        labels=FAILURE_LABELS, job_benchmarks=paths.JOB_BENCHMARKS)
    out_path.write_text(html)
    if fidelity_path is not None:
        Path(fidelity_path).write_text(fidelity_markdown(views, scale))
