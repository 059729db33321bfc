"""Experiments for Thomas George's PhD thesis (2023), one module per chapter (settings in, one record per run
out). Appendix figures live with their chapter: A in ch4, C in ch5, B in ch6."""
