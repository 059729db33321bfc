"""Glue between a Snakemake job and the library: logging to the rule's log file and clean
failure messages. Scripts in ``src/scripts`` use it and stay a few lines long."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import resource
import sys

from .errors import ExplainedFailure

PROGRESS_INTERVAL = "LINEARLENS_PROGRESS_EVERY_S"  # seconds between a training job's progress lines



@contextlib.contextmanager
def logged_job(snakemake):
    """Log to the rule's ``log:`` file and to stderr; exit non-zero on any failure."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if snakemake.log:
        handlers.append(logging.FileHandler(snakemake.log[0], mode="w"))
    # Every line names its job: on the console, several jobs' progress lines interleave.
    logging.basicConfig(level=logging.INFO, handlers=handlers, force=True,
                        format=f"%(asctime)s {job_label(snakemake)} %(levelname)s %(message)s")
    logger = logging.getLogger(snakemake.rule)
    interval = getattr(snakemake, "config", {}).get("progress_every_s")
    if interval is not None:  # read by train.progress; not a param, so changing it reruns nothing
        os.environ[PROGRESS_INTERVAL] = str(interval)
    try:
        yield logger
        logger.info("CPU time of this job: %.1f s", _cpu_seconds())
    except ExplainedFailure as error:  # its message says what to do: no traceback
        logger.error("%s", error)
        raise SystemExit(1) from None
    except Exception:
        logger.exception("job failed")
        raise SystemExit(1) from None


def job_label(snakemake) -> str:
    """``rule[wildcard values]``, e.g. ``iterative_linearisation_run[augmented/k800/0]``."""
    wildcards = getattr(snakemake, "wildcards", None)
    values = "/".join(str(v) for v in wildcards) if wildcards else ""
    return f"{snakemake.rule}[{values}]" if values else snakemake.rule


def _cpu_seconds() -> float:
    """User and system time of this process and its finished children, start-up included (the
    benchmark files sample it every few seconds and miss the last interval)."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


def inputs_version(paths) -> str:
    """A digest of a job's input files (its data, starting weights and the library files it
    imports): a saved training state is resumed only by a job whose inputs are the same."""
    digest = hashlib.sha256()
    for path in sorted(map(str, paths)):
        with open(path, "rb") as handle:
            digest.update(path.encode() + b"\0" + hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()
