"""Checksummed downloads of raw dataset files into ``resources/``.

pooch does the work: it streams to a temporary file, checks the hash, retries, and only then
moves the file into place, so a failed or corrupt download never leaves a partial file behind.
This module adds the one thing pooch does not: an error that tells a researcher what to do.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pooch

# Connect timeout is short so that an offline machine fails in seconds; the read timeout is long
# because CIFAR-10 and SVHN are hundreds of megabytes.
CONNECT_TIMEOUT_S = 5
READ_TIMEOUT_S = 120
RETRIES = 2


@dataclass(frozen=True)
class RemoteFile:
    """One file of a dataset: where it comes from and the checksum it must have."""

    filename: str
    url: str
    # "md5:<hex>" or "sha256:<hex>", the form pooch understands. None only where the publisher
    # gives no checksum; the file's reader then validates its contents instead.
    checksum: str | None


class DatasetUnavailableError(RuntimeError):
    """A dataset file could not be downloaded or failed its checksum."""


def manual_placement_help(remote: RemoteFile, destination: Path, reason: str) -> str:
    return (
        f"{reason}\n"
        f"  file:     {remote.filename}\n"
        f"  URL:      {remote.url}\n"
        f"  checksum: {remote.checksum or 'none published (contents are validated on read)'}\n"
        f"To place it by hand, download the URL on a machine with network access, check its "
        f"checksum, and copy it to:\n  {destination}"
    )


def fetch(remote: RemoteFile, destination: str | Path) -> Path:
    """Download ``remote`` to ``destination`` unless a file with the right checksum is there."""
    destination = Path(destination)
    if destination.exists():
        verify(remote, destination)
        return destination
    fetcher = pooch.create(
        path=destination.parent,
        base_url="",
        registry={destination.name: remote.checksum},
        urls={destination.name: remote.url},
        retry_if_failed=RETRIES,
    )
    downloader = pooch.HTTPDownloader(timeout=(CONNECT_TIMEOUT_S, READ_TIMEOUT_S))
    try:
        return Path(fetcher.fetch(destination.name, downloader=downloader))
    except Exception as error:  # network errors, HTTP errors, hash mismatch: all mean "not here"
        raise DatasetUnavailableError(
            manual_placement_help(
                remote, destination, f"Could not download {remote.filename}: {error}"
            )
        ) from error


def verify(remote: RemoteFile, path: str | Path) -> str:
    """Check ``path`` against the known checksum; return the checksum on success.

    Without a published checksum, return the file's sha256 marked as unverified, so the
    provenance still pins exactly which bytes a result was made from.
    """
    path = Path(path)
    if not path.exists():
        raise DatasetUnavailableError(manual_placement_help(remote, path, f"{path} is missing."))
    if remote.checksum is None:
        return f"sha256:{pooch.file_hash(str(path), alg='sha256')} (unverified)"
    algorithm, expected = remote.checksum.split(":", 1)
    actual = pooch.file_hash(str(path), alg=algorithm)
    if actual != expected:
        raise DatasetUnavailableError(
            manual_placement_help(
                remote,
                path,
                f"Checksum mismatch for {path}: found {algorithm}:{actual}. "
                "The file is corrupt or a different version; delete it and download it again.",
            )
        )
    return remote.checksum
