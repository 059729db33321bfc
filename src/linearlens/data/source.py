"""A data source as the pipeline knows it: raw data in its original format (downloaded files, an
OpenML dataset, a package's bundled set or a seeded generator) and the reader that loads it.

The reader is named, ``"module:function"``, and imported only when the source is read: a preparation
job runs (and its code inputs list) its own source's reader, not every reader the registry knows,
and the job receives its source as a record in its params. So registering a new source, or editing
another source's entry, reruns nothing that does not use it.
"""

from __future__ import annotations

import importlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .download import RemoteFile

RAW_DIR = Path("resources/raw")
# Written once an OpenML dataset is in the openml cache; the download rule's output.
OPENML_MARKER = "fetched.json"
OPENML_CACHE_DIR = Path("resources/openml")


@dataclass(frozen=True)
class Source:
    name: str
    description: str
    # "images" (N, C, H, W), "signals" (N, L), "tabular" (N, D), "scores" (per-example values of
    # another set), "image_index" (labels and archive members of images too many to hold),
    # "weights" (a pretrained network's state dict; read by the runs that start from it),
    # "text" (byte tokens: train_tokens and validation_tokens streams)
    kind: str
    # "module:function" returning the arrays: called with the raw-file folder first when the source
    # has files, then ``reader_arguments`` and the options. None for OpenML sets (read from its cache).
    reader: str | None = None
    reader_arguments: dict = field(default_factory=dict)
    files: tuple[RemoteFile, ...] = ()
    openml_id: int | None = None
    pixel_max: float | None = None  # images are rescaled to [0, 1] by this
    options: dict = field(default_factory=dict)  # the options the reader accepts, with defaults
    # files needed only when a boolean option is on: {filename: option name}
    optional_files: dict = field(default_factory=dict)
    # OpenML sets: what the document used (task, rows, features, target), checked when prepared
    openml_expected: dict | None = None

    @property
    def needs_download(self) -> bool:
        return bool(self.files) or self.openml_id is not None

    @property
    def reader_module(self) -> str | None:
        return self.reader.split(":")[0] if self.reader else None

    def files_needed(self, options: dict | None = None) -> tuple[RemoteFile, ...]:
        """The remote files a load with ``options`` reads (SVHN's 1.3 GB extra set only on request)."""
        resolved = {**self.options, **(options or {})}
        return tuple(
            remote for remote in self.files
            if remote.filename not in self.optional_files
            or resolved.get(self.optional_files[remote.filename])
        )

    def read(self, raw_dir: Path, options: dict) -> dict[str, np.ndarray]:
        module, function = self.reader.split(":")
        reader = getattr(importlib.import_module(module), function)
        arguments = {**self.reader_arguments, **options}
        return reader(raw_dir, **arguments) if self.files else reader(**arguments)

    def record(self) -> dict:
        """The source as plain data, for a job's params (``from_record`` rebuilds it). Sources
        without OpenML expectations leave the key out, so their records (and jobs) stay as they were."""
        record = asdict(self)
        if record["openml_expected"] is None:
            del record["openml_expected"]
        return record

    @classmethod
    def from_record(cls, record: dict) -> Source:
        files = tuple(RemoteFile(**remote) for remote in record["files"])
        return cls(**{**record, "files": files})
