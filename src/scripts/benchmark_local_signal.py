"""Rule benchmark_local_signal: one epoch of Karp ch. 3's WRN and of its linearisation at θ₀ at each image size
(the runs' own training code, random images of the variants' shapes), and the chapter's cost extrapolated."""

import torch

from linearlens.benchmarks.local_signal import chapter_cost
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    device = choose_device(device)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True  # one fixed shape per run: the fastest kernels for it
    timing = snakemake.params.timing
    frame = chapter_cost(snakemake.params.spec, device, n_train=timing["n_train"], fraction=timing["fraction"])
    frame.to_csv(snakemake.output[0], index=False)
    for row in frame.itertuples():
        log.info("%s %s: %.2f s per epoch of %d images, %d runs of %d epochs: %.2f h", row.size, row.model,
                 row.epoch_seconds, timing["n_train"], row.runs, row.epochs, row.hours)
    log.info("the chapter's runs: %.1f h on %s", frame["hours"].sum(), frame["device"].iloc[0])
