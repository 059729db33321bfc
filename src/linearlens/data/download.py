"""Checksummed downloads of raw dataset files into ``resources/``.

pooch does the work: it streams to a temporary file, checks the hash, retries, and only then
moves the file into place, so a failed or corrupt download never leaves a partial file behind.
This module adds the one thing pooch does not: an error that tells a researcher what to do.
"""

from __future__ import annotations

import gzip
import hashlib
import zlib
from dataclasses import dataclass
from pathlib import Path

import pooch

from ..errors import ExplainedFailure

# Connect timeout is short so that an offline machine fails in seconds; the read timeout is long
# because CIFAR-10 and SVHN are hundreds of megabytes.
CONNECT_TIMEOUT_S = 5
READ_TIMEOUT_S = 120
RETRIES = 2
GZIP_MAGIC = b"\x1f\x8b"
CONTENT_BLOCK_BYTES = 1 << 20  # decompressed content is hashed a block at a time, not held whole
GIT_BLOB = "git-blob-sha1"


@dataclass(frozen=True)
class RemoteFile:
    """One file of a dataset: where it comes from and the checksum it must have."""

    filename: str
    url: str
    # "md5:<hex>" or "sha256:<hex>", the form pooch understands, or "git-blob-sha1:<hex>" for a
    # file pinned by its blob id in a git repository (checked after the download). None only where
    # the publisher gives no checksum; the file's reader then validates its contents instead.
    checksum: str | None
    # The same form, of a gzip file's decompressed content, where it is published: a copy that a
    # distribution recompressed has other archive bytes but this content, and is accepted by it.
    content_checksum: str | None = None


class DatasetUnavailableError(ExplainedFailure, RuntimeError):
    """A dataset file could not be downloaded or failed its checksum."""


def manual_placement_help(remote: RemoteFile, destination: Path, reason: str) -> str:
    content = (f"  content:  {remote.content_checksum} (decompressed; a recompressed copy with this "
               f"content is accepted)\n" if remote.content_checksum else "")
    return (
        f"{reason}\n"
        f"  file:     {remote.filename}\n"
        f"  URL:      {remote.url}\n"
        f"  checksum: {remote.checksum or 'none published (contents are validated on read)'}\n"
        f"{content}"
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
        registry={destination.name: None if _is_git_blob(remote.checksum) else remote.checksum},
        urls={destination.name: remote.url},
        retry_if_failed=RETRIES,
    )
    downloader = pooch.HTTPDownloader(timeout=(CONNECT_TIMEOUT_S, READ_TIMEOUT_S))
    try:
        path = Path(fetcher.fetch(destination.name, downloader=downloader))
    except Exception as error:  # network errors, HTTP errors, hash mismatch: all mean "not here"
        raise DatasetUnavailableError(
            manual_placement_help(
                remote, destination, f"Could not download {remote.filename}: {error}"
            )
        ) from error
    if _is_git_blob(remote.checksum):
        try:
            verify(remote, path)
        except DatasetUnavailableError:
            path.unlink()  # never leave a file that fails its checksum in place
            raise
    return path


def _is_git_blob(checksum: str | None) -> bool:
    return bool(checksum) and checksum.startswith(f"{GIT_BLOB}:")


def git_blob_sha1(path: Path) -> str:
    """The id git gives the file's content: sha1 of "blob <size>\\0" followed by the bytes."""
    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    with path.open("rb") as stored:
        for block in iter(lambda: stored.read(CONTENT_BLOCK_BYTES), b""):
            digest.update(block)
    return f"{GIT_BLOB}:{digest.hexdigest()}"


def verify(remote: RemoteFile, path: str | Path) -> str:
    """Check ``path`` against the known checksums; return the one it matched.

    The archive's checksum is tried first, then that of its decompressed content where published
    (returned marked as such, since the archive bytes differ from the published ones). Without any
    published checksum, return the file's sha256 marked as unverified, so the provenance still pins
    exactly which bytes a result was made from.
    """
    path = Path(path)
    if not path.exists():
        raise DatasetUnavailableError(manual_placement_help(remote, path, f"{path} is missing."))
    if remote.checksum is None and remote.content_checksum is None:
        return f"sha256:{pooch.file_hash(str(path), alg='sha256')} (unverified)"
    tried = []
    if remote.checksum is not None:
        found = _archive_checksum(path, remote.checksum)
        if found == remote.checksum:
            return remote.checksum
        tried.append(f"archive: expected {remote.checksum}, got {found}")
    if remote.content_checksum is not None:
        found = _content_checksum(path, remote.content_checksum)
        if found == remote.content_checksum:
            return f"{remote.content_checksum} (decompressed content)"
        tried.append(f"decompressed content: expected {remote.content_checksum}, got {found}")
    else:
        tried.append("no checksum of the decompressed content is published")
    raise DatasetUnavailableError(
        manual_placement_help(
            remote,
            path,
            f"Checksum mismatch for {path}: {'; '.join(tried)}. "
            "The file is corrupt or a different version; delete it and download it again.",
        )
    )


def _archive_checksum(path: Path, like: str) -> str:
    """The file's checksum by the algorithm of ``like`` ("md5:<hex>"), in the same form."""
    if _is_git_blob(like):
        return git_blob_sha1(path)
    algorithm = like.split(":", 1)[0]
    return f"{algorithm}:{pooch.file_hash(str(path), alg=algorithm)}"


def _content_checksum(path: Path, like: str) -> str:
    """The checksum of the file's gzip-decompressed content, in the form of ``like``, or why
    there is none."""
    with path.open("rb") as stored:
        if stored.read(2) != GZIP_MAGIC:
            return "none (not a gzip file)"
    algorithm = like.split(":", 1)[0]
    digest = hashlib.new(algorithm)
    try:
        with gzip.open(path, "rb") as content:
            for block in iter(lambda: content.read(CONTENT_BLOCK_BYTES), b""):
                digest.update(block)
    except (EOFError, gzip.BadGzipFile, zlib.error) as error:
        return f"none (gzip stream cut off or corrupt: {error})"
    return f"{algorithm}:{digest.hexdigest()}"
