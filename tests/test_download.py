"""Checksummed downloads: a corrupt file and an unreachable URL both fail with a message that
says what to do, and leave nothing partial behind. Sockets are blocked for the whole suite."""

import hashlib
import time

import numpy as np
import pytest

from linearlens.data.download import DatasetUnavailableError, RemoteFile, fetch, verify
from linearlens.data.fixtures import gzip_bytes, idx_bytes
from linearlens.data.idx import read_idx

REMOTE = RemoteFile("train-labels-idx1-ubyte.gz", "https://example.org/mnist/train-labels-idx1-ubyte.gz",
                    "md5:d53e105ee54ea40749a09fcbcd1e9432")


def _assert_explains(message: str, remote: RemoteFile, destination) -> None:
    for part in (remote.filename, remote.url, remote.checksum, str(destination)):
        assert part in message


def test_offline_fetch_fails_fast_and_leaves_no_file(tmp_path):
    destination = tmp_path / "raw" / "mnist" / REMOTE.filename
    started = time.monotonic()
    with pytest.raises(DatasetUnavailableError) as error:
        fetch(REMOTE, destination)
    assert time.monotonic() - started < 20
    _assert_explains(str(error.value), REMOTE, destination)
    leftovers = list(destination.parent.iterdir()) if destination.parent.exists() else []
    assert leftovers == []


def test_existing_file_with_wrong_checksum_is_refused(tmp_path):
    destination = tmp_path / REMOTE.filename
    destination.write_bytes(b"not the MNIST labels")
    with pytest.raises(DatasetUnavailableError, match="Checksum mismatch") as error:
        fetch(REMOTE, destination)
    _assert_explains(str(error.value), REMOTE, destination)


def test_existing_file_with_right_checksum_is_used_without_network(tmp_path):
    payload = b"exact bytes"
    remote = RemoteFile("f.bin", "https://example.org/f.bin", "sha256:" + hashlib.sha256(payload).hexdigest())
    destination = tmp_path / "f.bin"
    destination.write_bytes(payload)
    assert fetch(remote, destination) == destination
    assert verify(remote, destination) == remote.checksum


def test_missing_file_is_named(tmp_path):
    with pytest.raises(DatasetUnavailableError, match="missing") as error:
        verify(REMOTE, tmp_path / REMOTE.filename)
    _assert_explains(str(error.value), REMOTE, tmp_path / REMOTE.filename)


# --- hand-placed files recompressed by a distribution ------------------------------------------

LABELS = idx_bytes(np.arange(10, dtype=np.uint8))
PUBLISHED = gzip_bytes(LABELS, level=9, mtime=0)
RECOMPRESSED = gzip_bytes(LABELS, level=1, mtime=1_600_000_000)


def md5(data: bytes) -> str:
    return "md5:" + hashlib.md5(data).hexdigest()


def labels_remote(content_checksum: str | None) -> RemoteFile:
    return RemoteFile(REMOTE.filename, REMOTE.url, md5(PUBLISHED), content_checksum=content_checksum)


def test_recompressed_file_with_the_published_content_is_accepted(tmp_path):
    assert RECOMPRESSED != PUBLISHED
    remote = labels_remote(md5(LABELS))
    destination = tmp_path / remote.filename
    destination.write_bytes(RECOMPRESSED)
    assert fetch(remote, destination) == destination  # no download attempted: sockets are blocked
    assert verify(remote, destination) == f"{md5(LABELS)} (decompressed content)"
    np.testing.assert_array_equal(read_idx(destination), np.arange(10))


def test_published_archive_is_still_accepted_by_its_own_checksum(tmp_path):
    remote = labels_remote(md5(LABELS))
    destination = tmp_path / remote.filename
    destination.write_bytes(PUBLISHED)
    assert verify(remote, destination) == remote.checksum


def test_refused_file_lists_every_checksum_tried(tmp_path):
    other_labels = idx_bytes(np.arange(10, dtype=np.uint8)[::-1])
    remote = labels_remote(md5(LABELS))
    destination = tmp_path / remote.filename
    destination.write_bytes(gzip_bytes(other_labels, level=1))
    with pytest.raises(DatasetUnavailableError, match="Checksum mismatch") as error:
        verify(remote, destination)
    message = str(error.value)
    _assert_explains(message, remote, destination)
    assert f"archive: expected {md5(PUBLISHED)}, got {md5(gzip_bytes(other_labels, level=1))}" in message
    assert f"decompressed content: expected {md5(LABELS)}, got {md5(other_labels)}" in message


def test_refused_file_that_is_not_gzip_says_so(tmp_path):
    remote = labels_remote(md5(LABELS))
    destination = tmp_path / remote.filename
    destination.write_bytes(LABELS)  # the content, never compressed
    with pytest.raises(DatasetUnavailableError, match="Checksum mismatch") as error:
        verify(remote, destination)
    assert f"decompressed content: expected {md5(LABELS)}, got none (not a gzip file)" in str(error.value)


def test_refused_file_cut_off_says_so(tmp_path):
    remote = labels_remote(md5(LABELS))
    destination = tmp_path / remote.filename
    destination.write_bytes(RECOMPRESSED[:-12])
    with pytest.raises(DatasetUnavailableError, match="got none \\(gzip stream cut off or corrupt"):
        verify(remote, destination)


def test_without_a_content_checksum_a_recompressed_file_is_refused(tmp_path):
    remote = labels_remote(None)
    destination = tmp_path / remote.filename
    destination.write_bytes(RECOMPRESSED)
    with pytest.raises(DatasetUnavailableError, match="Checksum mismatch") as error:
        verify(remote, destination)
    message = str(error.value)
    assert f"archive: expected {md5(PUBLISHED)}, got {md5(RECOMPRESSED)}" in message
    assert "no checksum of the decompressed content is published" in message
