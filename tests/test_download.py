"""Checksummed downloads: a corrupt file and an unreachable URL both fail with a message that
says what to do, and leave nothing partial behind. Sockets are blocked for the whole suite."""

import hashlib
import time

import pytest

from linearlens.data.download import DatasetUnavailableError, RemoteFile, fetch, verify

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
