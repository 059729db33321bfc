"""Kernels of trained models: the empirical NTK (layer-wise Gram identity), tree kernels of
gradient-boosted ensembles, and the tools to compare them (alignment, CKA, spectra).

Import from the modules: this file stays empty so that a job's code inputs hold only what it uses."""
