"""Glue between a Snakemake job and the library: logging to the rule's log file and clean
failure messages. Scripts in ``src/scripts`` use it and stay a few lines long."""

from __future__ import annotations

import contextlib
import logging
import sys

from .data.download import DatasetUnavailableError

# Failures whose message already says what to do: print it, not a traceback.
EXPLAINED_FAILURES = (DatasetUnavailableError,)


@contextlib.contextmanager
def logged_job(snakemake):
    """Log to the rule's ``log:`` file and to stderr; exit non-zero on any failure."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if snakemake.log:
        handlers.append(logging.FileHandler(snakemake.log[0], mode="w"))
    logging.basicConfig(level=logging.INFO, handlers=handlers, force=True,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logger = logging.getLogger(snakemake.rule)
    try:
        yield logger
    except EXPLAINED_FAILURES as error:
        logger.error("%s", error)
        raise SystemExit(1) from None
    except Exception:
        logger.exception("job failed")
        raise SystemExit(1) from None
