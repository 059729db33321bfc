"""linearlens: linearised views of deep networks, as a reproducible pipeline library."""

__version__ = "0.1.0"
