"""Analysis for Chapter 3 (NNGeometry). Torch-free summaries (pandas and numpy only) behind Figs 3.3-3.6
(quality of diagonal, quasi-diagonal, KFAC and EKFAC Fisher approximations: solve, mv, vTMv, trace) and Fig
3.7 (two-class NTK Gram and its kernel PCA over training). Issue 26 fills it. Figs 3.1 (code listing) and
3.2 (schematic) are drawings, in the figures module only."""
