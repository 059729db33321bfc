"""The figures of Stefani Karp's thesis, plotted from run artefacts only (matplotlib and seaborn,
never torch): one module per chapter, appendix figures and tables with their chapter (A with
chapter 2, B with chapter 3, C with chapter 5)."""
