"""One module per paper: a run's settings in, its records out (one file per run)."""
