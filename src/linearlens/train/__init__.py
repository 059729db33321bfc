"""Training support: device choice, seeding, threads, float64, checkpoints (``runtime``); the
training loops, optimisers and schedules join here as the papers land.

Import from the modules: this file stays empty so that a job's code inputs hold only what it uses."""
