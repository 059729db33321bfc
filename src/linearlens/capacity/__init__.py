"""Capacity and generalisation: Rademacher bounds of linear classes in tangent features, their
optimised reparametrisations, and the complexity measures of trained networks (George thesis ch. 6).

Import from the modules: this file stays empty so that a job's code inputs hold only what it uses."""
