"""Rule rehearse_gpu: a few steps of each heavy family of config/paper.yaml at paper size on the GPU
(benchmarks.rehearse_gpu), step time and peak memory to the benchmark table paths.benchmark("rehearse_gpu")."""

import tempfile
from pathlib import Path

from linearlens.benchmarks.rehearse_gpu import paper_rehearsals, rehearse
from linearlens.config import load_scale
from linearlens.train.devices import DeviceUnavailableError, claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    if device != "cuda":
        raise DeviceUnavailableError(
            f"rule {snakemake.rule}: it times paper-size steps on a GPU, and the config key `device` is "
            f"{device!r}; run it on a GPU machine with `--config device=cuda`")
    set_threads(snakemake.threads)
    device = choose_device(device)
    paper = load_scale("paper", Path(snakemake.input.config[0]).parent)
    with tempfile.TemporaryDirectory(prefix="rehearse_gpu_") as scratch:
        frame = rehearse(paper_rehearsals(paper, device, Path(scratch)), device, log=log)
    frame.to_csv(snakemake.output[0], index=False)
