"""Training support: device choice, seeding, threads, float64, checkpoints (``runtime``); the
training loops, optimisers and schedules join here as the papers land."""

from .runtime import (
    choose_device, default_dtype, dtype_from_name, full_float32, full_float32_matmuls, load_checkpoint,
    save_checkpoint, seed_everything, set_threads,
)

__all__ = ["choose_device", "default_dtype", "dtype_from_name", "full_float32", "full_float32_matmuls",
           "load_checkpoint", "save_checkpoint", "seed_everything", "set_threads"]
