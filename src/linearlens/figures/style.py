"""One style and one way to save a figure: vector PDF, PNG, and a sidecar JSON that the report
reads (caption and data source). Every figure carries its data source, stand-ins named."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: cluster nodes and CI have no display

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402


def apply_style() -> None:
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
    plt.rcParams.update({"figure.dpi": 150, "savefig.bbox": "tight", "pdf.fonttype": 42})


def save_figure(fig: plt.Figure, png_path: str | Path, caption: str, data_source: str) -> None:
    """Write ``<stem>.png``, ``<stem>.pdf`` and ``<stem>.json``; stamp the data source on the figure."""
    png_path = Path(png_path)
    png_path.parent.mkdir(parents=True, exist_ok=True)
    fig.text(0.01, -0.02, f"Data: {data_source}", fontsize=7, color="0.35", ha="left", va="top", wrap=True)
    fig.savefig(png_path.with_suffix(".pdf"))
    fig.savefig(png_path.with_suffix(".png"))
    plt.close(fig)
    sidecar = {"figure": png_path.stem, "caption": caption, "data_source": data_source}
    png_path.with_suffix(".json").write_text(json.dumps(sidecar, indent=2) + "\n")


def save_table(frame, csv_path: str | Path, caption: str, data_source: str) -> None:
    """Write a table target: ``<stem>.csv`` and the same JSON sidecar as a figure's."""
    csv_path = Path(csv_path)
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(csv_path, index=False)
    sidecar = {"figure": csv_path.stem, "caption": caption, "data_source": data_source}
    csv_path.with_suffix(".json").write_text(json.dumps(sidecar, indent=2) + "\n")
