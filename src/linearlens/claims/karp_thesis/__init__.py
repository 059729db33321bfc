"""The claims of Stefani Karp's thesis, checked against measured numbers: one module per chapter,
appendix figures and tables with their chapter (A with chapter 2, B with chapter 3, C with
chapter 5)."""
