"""The heap settings workflow jobs run with. Standard library only: the workflow reads them when it
builds the DAG, without importing torch."""

# glibc's malloc serves blocks above 128 kB with fresh mmaps and hands freed heap back to the OS, so
# a job that allocates and frees the same multi-MB tensors every step (the smoother's per-example
# Jacobian) page-faults them in again each step. These keep blocks up to 32 MB in the heap and up
# to 256 MB of it free. glibc reads them at process start (workflow jobs get them from
# rules/common.smk); other C libraries ignore them.
HEAP_ENVIRONMENT = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(256 << 20)}
