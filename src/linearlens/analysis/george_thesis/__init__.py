"""Analysis for Thomas George's PhD thesis (2023), one module per chapter (shared by the figures and the
claims). Appendix figures live with their chapter: A in ch4, C in ch5, B in ch6."""
