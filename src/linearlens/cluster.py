"""What a job asks a cluster for: minutes and memory by the kind of work it does, declared where the
job is (a run family's ``budget``, a hand-written rule's ``job_resources(...)`` in rules/common.smk).
A job that names no budget gets the SLURM profile's default-resources (an hour, 4 GB).

Each attempt asks for its budget times the attempt number: SLURM kills a job over its time or memory,
and a retry with the same request fails the same way. The numbers are starting points, not
measurements, except where a comment says what was measured; on a cluster of your own, override one
rule with ``--set-resources RULE:runtime=... RULE:mem_mb=...``. Local runs ignore both.

Torch-free: the workflow reads it when it builds the DAG.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    minutes: int  # the first attempt's
    mem_mb: int  # the first attempt's

    def resources(self) -> dict:
        """Snakemake resources that grow with the attempt."""
        return {"runtime": lambda wildcards, attempt: self.minutes * attempt,
                "mem_mb": lambda wildcards, attempt: self.mem_mb * attempt}


BUDGETS = {
    # Preparing a dataset. Measured (tests/test_prepare_memory.py): Tiny ImageNet, the largest, peaks
    # near 6.2 GB at paper size.
    "data": Budget(60, 8000),
    # Making Karp ch. 3's image variants: a 64x64 variant is 1.2 GB of float16 pixels.
    "images": Budget(60, 16000),
    # A training run of hours at paper scale (the telescoping paper's, IL's, George ch. 4's, the tree
    # ensembles).
    "training": Budget(240, 8000),
    # The telescoping smoother. Measured (tests/test_smoother_memory.py): six p × n float64 arrays at
    # the step's peak, 15.7 GB at the paper's widest double-descent MLP (width 5,000, p = 330,001,
    # n = 1,000 train + 1,000 test).
    "smoother": Budget(240, 18000),
    # Kernels, curvature and the benchmarks: N × N Grams and per-example Jacobians.
    "kernels": Budget(240, 16000),
    # Runs of many hours that save their state, so a retry resumes: George ch. 3's ResNet50 on Tiny
    # ImageNet (each job loads its 4.9 GB of images), ch. 5's ResNet18 and CelebA runs of up to 1,000
    # epochs, ch. 6's VGG19/ResNet18 runs of up to 3e5 steps; Karp ch. 2's 16 networks in lockstep to
    # 150,000 steps, ch. 3's WRN-10-10 for 200 epochs, ch. 5's grown BERT and UL2 models (hundreds of
    # H100-hours; each job saves its state every 30 min and at SLURM's SIGTERM; the corpus is held as
    # bytes: 32 GB covers a ~25 GB text).
    "long_training": Budget(720, 32000),
}


def budget_resources(budget: str) -> dict:
    """The resources of a named budget; none for "" (the profile's default-resources apply)."""
    if not budget:
        return {}
    if budget not in BUDGETS:
        raise ValueError(f"unknown cluster budget {budget!r}: one of {', '.join(BUDGETS)} (linearlens/cluster.py)")
    return BUDGETS[budget].resources()
