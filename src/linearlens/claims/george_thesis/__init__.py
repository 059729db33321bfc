"""Claims for Thomas George's PhD thesis (2023), one module per chapter (as checks over measured numbers).
Appendix figures live with their chapter: A in ch4, C in ch5, B in ch6."""
