"""Torch-free summaries of Stefani Karp's thesis runs (pandas and numpy), shared by its figures and
claims: one module per chapter, appendix figures and tables with their chapter (A with chapter
2, B with chapter 3, C with chapter 5)."""
