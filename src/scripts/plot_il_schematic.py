"""Rule plot_il_schematic: Fig 1, the spectrum of K (a drawing)."""

from linearlens.figures.iterative_linearisation import plot_schematic
from linearlens.workflow import logged_job

with logged_job(snakemake):  # noqa: F821 (snakemake is injected by the script directive)
    plot_schematic(snakemake.output[0])  # noqa: F821
