"""Named data sources, their loaders in the real file formats, transforms and prepared datasets."""

from .download import DatasetUnavailableError, RemoteFile, fetch, verify
from .prepare import data_label, load_prepared, prepare_dataset, save_prepared
from .registry import SOURCES, Source, get_source, raw_paths

__all__ = [
    "DatasetUnavailableError", "RemoteFile", "SOURCES", "Source", "data_label", "fetch",
    "get_source", "load_prepared", "prepare_dataset", "raw_paths", "save_prepared", "verify",
]
