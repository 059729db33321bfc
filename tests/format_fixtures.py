"""Writers of tiny dataset files in the real formats, for tests that must run offline.

Each writer produces a genuine file of its format from numpy arrays, written from the format's
own description rather than from the reader under test, so that a round trip checks the reader
against the format and not against itself. Images are passed in as (N, C, H, W) uint8 and labels
as 0..9; each writer converts them to the layout and conventions of its file.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import pickle
import tarfile
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.io
from PIL import Image

# --- IDX (MNIST, Fashion-MNIST, KMNIST) -------------------------------------------------------

# The third byte of an IDX magic number names the element type; data are big-endian.
IDX_TYPE_CODES = {
    np.dtype(np.uint8): 0x08,
    np.dtype(np.int8): 0x09,
    np.dtype(">i2"): 0x0B,
    np.dtype(">i4"): 0x0C,
    np.dtype(">f4"): 0x0D,
    np.dtype(">f8"): 0x0E,
}


def idx_bytes(array: np.ndarray) -> bytes:
    """The bytes of an IDX file: 0x00 0x00, type code, ndim, big-endian uint32 dims, data."""
    big_endian = array.astype(array.dtype.newbyteorder(">"))
    type_code = IDX_TYPE_CODES[big_endian.dtype]
    header = bytes([0, 0, type_code, array.ndim]) + np.array(array.shape, dtype=">u4").tobytes()
    return header + big_endian.tobytes()


def gzip_bytes(payload: bytes, level: int = 9, mtime: int = 0) -> bytes:
    """A gzip file of ``payload``. Another level or mtime gives other archive bytes of the same
    content, as a distribution's recompression of a published file does."""
    return gzip.compress(payload, compresslevel=level, mtime=mtime)


def write_idx(path: str | Path, array: np.ndarray, gz: bool = True) -> Path:
    path = Path(path)
    payload = idx_bytes(array)
    path.write_bytes(gzip.compress(payload) if gz else payload)
    return path


# --- CIFAR-10 python version ------------------------------------------------------------------

CIFAR10_DIR = "cifar-10-batches-py"
CIFAR10_LABEL_NAMES = [
    "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck",
]


def _cifar_rows(images: np.ndarray) -> np.ndarray:
    """(N, 3, 32, 32) -> (N, 3072): the red plane, then green, then blue, each row-major."""
    return np.stack([
        np.concatenate([image[channel].ravel() for channel in range(3)]) for image in images
    ]).astype(np.uint8)


def _add_pickle(archive: tarfile.TarFile, name: str, contents: dict) -> None:
    payload = pickle.dumps(contents)
    info = tarfile.TarInfo(f"{CIFAR10_DIR}/{name}")
    info.size = len(payload)
    archive.addfile(info, io.BytesIO(payload))


def _cifar_batch(label: str, images: np.ndarray, labels: np.ndarray) -> dict:
    # Bytes keys: the real batches are Python 2 pickles, read with encoding="bytes".
    return {
        b"batch_label": label.encode(),
        b"labels": [int(y) for y in labels],
        b"data": _cifar_rows(images),
        b"filenames": [f"image_{i}.png".encode() for i in range(len(labels))],
    }


def write_cifar10_archive(path: str | Path, x_train: np.ndarray, y_train: np.ndarray,
                          x_test: np.ndarray, y_test: np.ndarray) -> Path:
    """cifar-10-python.tar.gz: the training set split over data_batch_1..5, plus test_batch."""
    path = Path(path)
    train_parts = zip(np.array_split(x_train, 5), np.array_split(y_train, 5))
    with tarfile.open(path, "w:gz") as archive:
        for number, (images, labels) in enumerate(train_parts, start=1):
            _add_pickle(archive, f"data_batch_{number}",
                        _cifar_batch(f"training batch {number} of 5", images, labels))
        _add_pickle(archive, "test_batch", _cifar_batch("testing batch 1 of 1", x_test, y_test))
        _add_pickle(archive, "batches.meta", {
            b"label_names": [name.encode() for name in CIFAR10_LABEL_NAMES],
            b"num_cases_per_batch": int(np.ceil(len(y_train) / 5)),
            b"num_vis": 3072,
        })
    return path


# --- SVHN cropped digits ----------------------------------------------------------------------

def write_svhn_mat(path: str | Path, x: np.ndarray, y: np.ndarray) -> Path:
    """A MATLAB file with X as (32, 32, 3, N) uint8 and y as (N, 1), digit 0 stored as 10."""
    path = Path(path)
    digits = np.asarray(y).reshape(-1, 1)
    scipy.io.savemat(str(path), {
        "X": np.ascontiguousarray(np.transpose(x, (2, 3, 1, 0))).astype(np.uint8),
        "y": np.where(digits == 0, 10, digits).astype(np.uint8),
    })
    return path


# --- CIFAR-10 C-scores ------------------------------------------------------------------------

def write_cscores(path: str | Path, scores: np.ndarray, labels: np.ndarray) -> Path:
    path = Path(path)
    with path.open("wb") as handle:  # a handle, so numpy adds no ".npz" to the name
        np.savez(handle, scores=scores, labels=labels)
    return path


# --- Tiny ImageNet ----------------------------------------------------------------------------

TINYIMAGENET_ROOT = "tiny-imagenet-200"


def jpeg_bytes(image: np.ndarray) -> bytes:
    """A JPEG of a (3, H, W) colour or (H, W) grayscale uint8 image (the real set has both)."""
    pixels = image if image.ndim == 2 else np.transpose(image, (1, 2, 0))
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels, dtype=np.uint8)).save(
        buffer, format="JPEG", quality=100)
    return buffer.getvalue()


def write_tinyimagenet_zip(path: str | Path, images_by_wnid_train: dict[str, list[np.ndarray]],
                           val_items: list[tuple[str, np.ndarray]]) -> Path:
    """tiny-imagenet-200.zip: wnids.txt in the order given, train/<wnid>/images/<wnid>_<i>.JPEG
    with a boxes file beside it, and val/images/val_<i>.JPEG labelled by val/val_annotations.txt."""
    path = Path(path)
    root = TINYIMAGENET_ROOT
    annotations = "".join(
        f"val_{i}.JPEG\t{wnid}\t0\t0\t63\t63\n" for i, (wnid, _) in enumerate(val_items))
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{root}/wnids.txt", "".join(f"{w}\n" for w in images_by_wnid_train))
        for wnid, images in images_by_wnid_train.items():
            boxes = "".join(f"{wnid}_{i}.JPEG\t0\t0\t63\t63\n" for i in range(len(images)))
            archive.writestr(f"{root}/train/{wnid}/{wnid}_boxes.txt", boxes)
            for i, image in enumerate(images):
                archive.writestr(f"{root}/train/{wnid}/images/{wnid}_{i}.JPEG", jpeg_bytes(image))
        for i, (_, image) in enumerate(val_items):
            archive.writestr(f"{root}/val/images/val_{i}.JPEG", jpeg_bytes(image))
        archive.writestr(f"{root}/val/val_annotations.txt", annotations)
    return path


# --- OpenML cache (openml-python 0.15.1) ------------------------------------------------------

OML_NAMESPACE = "http://openml.org/openml"
ET.register_namespace("oml", OML_NAMESPACE)


def openml_dataset_dir(cache_root: str | Path, dataset_id: int) -> Path:
    """Where openml keeps a dataset of the www.openml.org server under its root cache directory."""
    return Path(cache_root) / "org" / "openml" / "www" / "datasets" / str(dataset_id)


def _oml_document(root_tag: str, fields: list[tuple[str, object]] | None = None) -> ET.Element:
    root = ET.Element(f"{{{OML_NAMESPACE}}}{root_tag}")
    for tag, value in fields or []:
        ET.SubElement(root, f"{{{OML_NAMESPACE}}}{tag}").text = str(value)
    return root


def _write_xml(path: Path, root: ET.Element) -> None:
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def arff_text(relation: str, frame: pd.DataFrame, nominal: tuple[str, ...] = ()) -> str:
    """A dense ARFF file of numeric columns (repr() keeps every float exactly) and integer-coded
    ``nominal`` columns (a classification target: OpenML's {0,1} labels)."""
    header = [f"@RELATION '{relation}'", ""]
    header += [f"@ATTRIBUTE '{column}' " + (_nominal_values(frame[column]) if column in nominal else "NUMERIC")
               for column in frame.columns]
    rows = [",".join(str(int(v)) if column in nominal else repr(float(v)) for column, v in zip(frame.columns, row))
            for row in frame.itertuples(index=False)]
    return "\n".join(header + ["", "@DATA"] + rows) + "\n"


def _nominal_values(column: pd.Series) -> str:
    return "{" + ",".join(str(int(v)) for v in sorted(column.unique())) + "}"


def _description(dataset_id: int, name: str, target: str, arff_md5: str) -> ET.Element:
    # No oml:parquet_url, so the client reads the ARFF file instead of fetching a parquet file.
    file_id = 1_000_000 + dataset_id
    return _oml_document("data_set_description", [
        ("id", dataset_id),
        ("name", name),
        ("version", 1),
        ("description", "Test fixture written by tests/format_fixtures.py"),
        ("format", "ARFF"),
        ("upload_date", "2024-01-01T00:00:00"),
        ("licence", "Public"),
        ("url", f"https://api.openml.org/data/v1/download/{file_id}/{name}.arff"),
        ("file_id", file_id),
        ("default_target_attribute", target),
        ("visibility", "public"),
        ("status", "active"),
        ("md5_checksum", arff_md5),
    ])


def _features(frame: pd.DataFrame, target: str, nominal: tuple[str, ...] = ()) -> ET.Element:
    root = _oml_document("data_features")
    for index, column in enumerate(frame.columns):
        feature = ET.SubElement(root, f"{{{OML_NAMESPACE}}}feature")
        fields = [("index", index), ("name", column),
                  ("data_type", "nominal" if column in nominal else "numeric")]
        fields += [("nominal_value", int(v)) for v in sorted(frame[column].unique()) if column in nominal]
        fields += [("is_target", str(column == target).lower()),
                   ("is_ignore", "false"), ("is_row_identifier", "false"),
                   ("number_of_missing_values", int(frame[column].isna().sum()))]
        for tag, value in fields:
            ET.SubElement(feature, f"{{{OML_NAMESPACE}}}{tag}").text = str(value)
    return root


def write_openml_cache(cache_root: str | Path, dataset_id: int, frame: pd.DataFrame,
                       target: str, classification: bool = False) -> Path:
    """The files openml 0.15.1 reads from its cache for get_dataset(download_data=True,
    download_features_meta_data=True, download_qualities=False): description.xml,
    features.xml and dataset.arff, the description carrying the ARFF file's md5. A
    ``classification`` set has a nominal target (integer class codes in ``frame``)."""
    directory = openml_dataset_dir(cache_root, dataset_id)
    directory.mkdir(parents=True, exist_ok=True)
    name = f"fixture_{dataset_id}"
    nominal = (target,) if classification else ()
    arff = arff_text(name, frame, nominal).encode("utf-8")
    (directory / "dataset.arff").write_bytes(arff)
    arff_md5 = hashlib.md5(arff).hexdigest()
    _write_xml(directory / "description.xml", _description(dataset_id, name, target, arff_md5))
    _write_xml(directory / "features.xml", _features(frame, target, nominal))
    return directory


# --- CelebA -----------------------------------------------------------------------------------

def write_celeba_files(directory: str | Path, attributes: pd.DataFrame, partition: list[int],
                       images: list[np.ndarray]) -> Path:
    """list_attr_celeba.txt (count line, names line, ±1 rows with the file name first),
    list_eval_partition.txt ("<file> <0|1|2>") and img_align_celeba.zip of the JPEGs."""
    directory = Path(directory)
    names = list(attributes.index)
    rows = [" ".join([name] + [f"{2 * int(v) - 1:2d}" for v in row])
            for name, row in zip(names, attributes.to_numpy())]
    (directory / "list_attr_celeba.txt").write_text(
        f"{len(names)}\n{' '.join(attributes.columns)} \n" + "\n".join(rows) + "\n")
    (directory / "list_eval_partition.txt").write_text(
        "".join(f"{name} {code}\n" for name, code in zip(names, partition)))
    with zipfile.ZipFile(directory / "img_align_celeba.zip", "w") as archive:
        for name, image in zip(names, images):
            archive.writestr(f"img_align_celeba/{name}", jpeg_bytes(image))
    return directory


# --- Waterbirds -------------------------------------------------------------------------------

def write_waterbirds_tar(path: str | Path, metadata: pd.DataFrame,
                         images: dict[str, np.ndarray]) -> Path:
    """waterbird_complete95_forest2water2.tar.gz: metadata.csv (img_id, img_filename, y, split,
    place, place_filename) and the JPEGs under their species folders."""
    path = Path(path)
    root = "waterbird_complete95_forest2water2"

    def add(archive: tarfile.TarFile, name: str, payload: bytes) -> None:
        info = tarfile.TarInfo(f"{root}/{name}")
        info.size = len(payload)
        archive.addfile(info, io.BytesIO(payload))

    with tarfile.open(path, "w:gz") as archive:
        for name, image in images.items():
            add(archive, name, jpeg_bytes(image))
        add(archive, "metadata.csv", metadata.to_csv(index=False).encode())
    return path
