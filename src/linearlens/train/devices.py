"""The device a job runs on, settled before torch touches CUDA.

A device job calls ``claim_device`` first. Under ``device: cuda`` it takes a GPU that no other
running job holds (an exclusive ``flock`` on that GPU's file in a machine-local folder, held until
the process ends, so a killed job frees its GPU too), makes it the only GPU torch sees
(``CUDA_VISIBLE_DEVICES``), and fails at once, saying how to choose the CPU on purpose, where torch
sees no CUDA device. Under SLURM the job's allocation is its GPU already: nothing is claimed.

The Snakefile counts the same GPUs (``gpu_ids``) to run that many GPU jobs at once. This module
imports torch only where a job checks CUDA: the DAG is built without torch."""

from __future__ import annotations

import fcntl
import logging
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

from ..errors import ExplainedFailure

GPU_IDS = "LINEARLENS_GPU_IDS"  # GPU ids to claim instead of the machine's (tests: fake ids on a CPU)
LOCK_FOLDER = "LINEARLENS_GPU_LOCKS"  # where the per-GPU lock files live; must be machine-local
DEFAULT_LOCK_FOLDER = Path("/tmp/linearlens-gpus")
SAFE_NAME = r"[^0-9A-Za-z_.-]"  # what a lock file's name keeps of a GPU id
RETRY_S = 2.0  # how often a job that found every GPU held tries again

log = logging.getLogger(__name__)
_held: dict[str, int] = {}  # GPU id: its lock file, open for this process's life (the OS frees it at the end)


class DeviceUnavailableError(ExplainedFailure, RuntimeError):
    """The config asks for a device this machine cannot give; the message says what to do."""


def gpu_ids() -> list[str]:
    """The GPUs jobs on this machine share: ``$LINEARLENS_GPU_IDS``, else ``$CUDA_VISIBLE_DEVICES``
    as the user set it, else nvidia-smi's list (NVML: CUDA stays uninitialised)."""
    for variable in (GPU_IDS, "CUDA_VISIBLE_DEVICES"):
        if variable in os.environ:
            return id_list(os.environ[variable])
    return _nvidia_smi_ids()


def id_list(text: str) -> list[str]:
    """Ids of a comma-separated list, read as CUDA reads CUDA_VISIBLE_DEVICES: up to the first
    empty or negative entry ("" and "-1" hide every GPU)."""
    ids = []
    for entry in (part.strip() for part in text.split(",")):
        if not entry or entry.startswith("-"):
            break
        ids.append(entry)
    return ids


def _nvidia_smi_ids() -> list[str]:
    try:
        listing = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):  # no driver, no GPU: nothing to share
        return []
    return [line.strip() for line in listing.stdout.splitlines() if line.strip()]


def claim_device(configured: str, rule: str) -> str:
    """The device string a job passes on, from the config's ``device``; call it before anything
    initialises CUDA. ``cuda``: this job's own GPU, or a clear failure without one; ``auto`` and
    ``cpu`` are returned as they are (``auto`` shares torch's default GPU, claiming none)."""
    if configured != "cuda":
        return configured
    on_slurm = "SLURM_JOB_ID" in os.environ
    if not on_slurm and (gpu := claim_gpu(rule)) is not None:
        log.info("rule %s holds GPU %s (CUDA_VISIBLE_DEVICES=%s) until it ends", rule, gpu, gpu)
    require_cuda(rule)
    if on_slurm:
        log.info("rule %s runs in SLURM job %s, on the GPU SLURM allocated (CUDA_VISIBLE_DEVICES=%s)",
                 rule, os.environ["SLURM_JOB_ID"], os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))
    elif "CUDA_VISIBLE_DEVICES" not in os.environ:
        log.warning("rule %s found no GPU list (no nvidia-smi, $CUDA_VISIBLE_DEVICES or $%s): it uses "
                    "torch's default GPU without claiming it", rule, GPU_IDS)
    return "cuda"


def require_cuda(rule: str | None = None) -> None:
    """Fail, in one line saying how to choose the CPU on purpose, where torch sees no CUDA device."""
    import torch

    if torch.cuda.is_available():
        return
    build = "a CPU-only build" if torch.version.cuda is None else f"CUDA {torch.version.cuda}"
    where = (f"host {socket.gethostname()}, torch {torch.__version__} ({build}), "
             f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')}")
    raise DeviceUnavailableError(
        f"{f'rule {rule}: ' if rule else ''}the config key `device` is 'cuda' but torch sees no CUDA "
        f"device ({where}); to run on the CPU on purpose, set `device: cpu` in the config "
        "(or add `--config device=cpu` to the snakemake command)")


def claim_gpu(rule: str) -> str | None:
    """Hold a GPU that no other running job holds and make it the only one this process and its
    children see; its id (None where no GPU is listed). While every GPU is held, waits for one."""
    if _held:  # claimed already: the same GPU (a second lock on it would wait for this process)
        return next(iter(_held))
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        raise RuntimeError("CUDA was initialised before the job claimed its GPU: call claim_device first")
    ids, listed_by_nvidia_smi = gpu_ids(), not ({GPU_IDS, "CUDA_VISIBLE_DEVICES"} & set(os.environ))
    if not ids:
        return None
    folder = lock_folder()
    locks = {gpu: folder / f"gpu-{re.sub(SAFE_NAME, '_', gpu)}.lock" for gpu in ids}  # ids may be UUIDs
    waiting = False
    while True:
        for gpu, path in locks.items():
            if _lock(path, gpu, rule):
                if listed_by_nvidia_smi:  # nvidia-smi numbers GPUs by PCI bus, CUDA by speed unless told
                    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
                os.environ["CUDA_VISIBLE_DEVICES"] = gpu
                return gpu
        if not waiting:
            log.warning("rule %s waits for a GPU: all of %s are held (%s)", rule, ",".join(ids),
                        "; ".join(f"{path.name}: {path.read_text().strip()}" for path in locks.values()))
            waiting = True
        time.sleep(RETRY_S)


def lock_folder() -> Path:
    """The machine-local folder of the GPUs' lock files, open to every user's jobs (like /tmp)."""
    folder = Path(os.environ.get(LOCK_FOLDER) or DEFAULT_LOCK_FOLDER)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if folder.stat().st_uid == os.getuid():
            folder.chmod(0o1777)
    except OSError as error:
        raise DeviceUnavailableError(
            f"cannot use {folder} for the GPUs' lock files ({error.strerror}); point ${LOCK_FOLDER} "
            "at a writable folder on a local disk (not a network file system)") from None
    return folder


def _lock(path: Path, gpu: str, rule: str) -> bool:
    """Take the lock at ``path`` without waiting and keep it for this process's life; False if
    another process holds it."""
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as error:
        raise DeviceUnavailableError(
            f"cannot open the GPU lock file {path} ({error.strerror}); point ${LOCK_FOLDER} at a "
            "folder every user's jobs can write") from None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        return False
    os.ftruncate(descriptor, 0)
    os.write(descriptor, f"{os.getpid()} {socket.gethostname()} {rule}\n".encode())
    _held[gpu] = descriptor
    return True

