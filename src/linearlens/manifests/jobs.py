"""What a plot or claims function of a manifest receives from its job: the files it reads by name
and the part of the config it needs. Standard library only."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field


@dataclass
class FigureJob:
    figure: str  # the manifest entry's id, e.g. fig_2
    inputs: dict[str, list[str]]  # the manifest entry's inputs: runs, "provenance", ...
    params: object  # the entry's slice of the document's config
    png_path: str  # save_figure writes the PDF and the JSON sidecar beside it
    caption: str  # the manifest's caption lead
    data_source: str  # the data the figure was made from, as named on the figure
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("figure"))


@dataclass
class ClaimsJob:
    inputs: dict[str, list[str]]  # the claim set's inputs, by name
    params: object  # the set's slice of the document's config
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("claims"))
