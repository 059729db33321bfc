"""Rule plot_telescoping_schematic: Fig 1, a drawing of the telescoping model."""

from linearlens.figures.telescoping import plot_schematic
from linearlens.workflow import logged_job

with logged_job(snakemake):  # noqa: F821 (snakemake is injected by the script directive)
    plot_schematic(snakemake.output[0])  # noqa: F821
