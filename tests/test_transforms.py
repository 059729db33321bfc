"""The dataset transforms: exact noise counts, class balance, seeded reproducibility, area means."""

import numpy as np
import pytest

from linearlens.data import transforms
from linearlens.data.prepare import prepare_dataset
from linearlens.data.prepared import data_label
from linearlens.data.registry import get_source


@pytest.mark.parametrize("rate", [0.0, 0.15, 0.2, 0.5, 1.0])
def test_label_noise_flips_exactly_round_rate_n(rate):
    y = np.repeat(np.arange(3), 67)  # n = 201, so rate * n is not an integer
    noisy, flipped = transforms.flip_labels(y, rate, num_classes=3, seed=1)
    assert len(flipped) == round(rate * len(y))
    assert np.count_nonzero(noisy != y) == round(rate * len(y))
    assert np.all(noisy[flipped] != y[flipped])
    assert noisy.min() >= 0 and noisy.max() <= 2


def test_label_noise_reaches_every_other_class():
    y = np.zeros(3000, dtype=np.int64)
    noisy, _ = transforms.flip_labels(y, 0.9, num_classes=4, seed=0)
    counts = np.bincount(noisy[noisy != 0], minlength=4)[1:]
    assert counts.min() > 0.28 * counts.sum()  # uniform over the three other classes


def test_balanced_subset_counts():
    y = np.concatenate([np.zeros(50), np.ones(80), np.full(30, 2)]).astype(int)
    index = transforms.balanced_subset(y, 31, seed=0)
    assert sorted(np.bincount(y[index]).tolist()) == [10, 10, 11]
    assert len(np.unique(index)) == 31


def test_balanced_subset_refuses_too_few():
    y = np.array([0] * 5 + [1] * 50)
    with pytest.raises(ValueError, match="class 0 has 5"):
        transforms.balanced_subset(y, 20, seed=0)


def test_a_regression_subset_is_drawn_at_random_not_from_the_smallest_targets():
    arrays, provenance = prepare_dataset({"n_train": 10, "n_test": 100}, get_source("quintic_regression"))
    assert len(arrays["y_train"]) == 10 and len(arrays["y_test"]) == 100
    full, _ = prepare_dataset({}, get_source("quintic_regression"))
    smallest = np.sort(full["y_test"])[:100]
    assert not np.array_equal(np.sort(arrays["y_test"]), smallest)
    assert [step["class_balanced"] for step in provenance["transforms"] if step["step"] == "subset"] == [False, False]


def test_split_is_reproducible_from_seed_and_disjoint():
    a = transforms.train_test_split_indices(100, 0.3, seed=7)
    b = transforms.train_test_split_indices(100, 0.3, seed=7)
    c = transforms.train_test_split_indices(100, 0.3, seed=8)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[1], c[1])
    train, test = a
    assert len(test) == 30 and not set(train) & set(test) and len(train) + len(test) == 100


def test_subsets_are_reproducible_from_seed():
    y = np.repeat(np.arange(10), 20)
    assert np.array_equal(transforms.balanced_subset(y, 50, 3), transforms.balanced_subset(y, 50, 3))
    assert not np.array_equal(transforms.random_subset(200, 50, 3), transforms.random_subset(200, 50, 4))


def test_select_classes_relabels_in_given_order():
    x = np.arange(6)[:, None]
    y = np.array([5, 3, 1, 5, 3, 0])
    x_kept, y_kept = transforms.select_classes(x, y, [3, 5])
    assert x_kept.ravel().tolist() == [0, 1, 3, 4]
    assert y_kept.tolist() == [1, 0, 1, 0]


def test_group_classes_and_unlisted_class():
    y = np.arange(10)
    assert transforms.group_classes(y, [range(5), range(5, 10)]).tolist() == [0] * 5 + [1] * 5
    with pytest.raises(ValueError, match="belong to no group"):
        transforms.group_classes(y, [[0, 1], [2, 3]])


def test_area_downsample_block_means_and_fractional_ratio():
    rng = np.random.default_rng(0)
    images = rng.random((2, 3, 28, 28))
    blocks = images.reshape(2, 3, 7, 4, 7, 4).mean(axis=(3, 5))
    assert np.allclose(transforms.area_downsample(images, (7, 7)), blocks, atol=1e-14)
    small = transforms.area_downsample(images, (8, 8))  # 28/8 = 3.5 pixels per cell
    assert small.shape == (2, 3, 8, 8)
    assert np.allclose(small.mean(axis=(2, 3)), images.mean(axis=(2, 3)), atol=1e-14)
    # First cell covers rows/cols [0, 3.5): three full pixels and half of the fourth.
    weights = np.array([1, 1, 1, 0.5]) / 3.5
    assert np.isclose(small[0, 0, 0, 0], weights @ images[0, 0, :4, :4] @ weights)


def test_grayscale_luma():
    images = np.zeros((1, 3, 2, 2))
    images[0, 1] = 1.0  # pure green
    assert np.allclose(transforms.grayscale(images), 0.587)


def test_standardise_uses_training_statistics_only():
    rng = np.random.default_rng(0)
    train = rng.normal(3.0, 2.0, size=(50, 1, 2, 2)).astype(np.float32)
    train[:, 0, 0, 0] = 1.0  # a constant pixel is only centred, not divided by zero
    test = train[:5] + 1.0
    new_train, new_test = transforms.standardise(train, test)
    flat = new_train.reshape(50, -1)
    assert new_train.shape == train.shape and new_train.dtype == np.float32
    np.testing.assert_allclose(flat.mean(0), 0, atol=1e-5)
    np.testing.assert_allclose(flat[:, 1:].std(0), 1, atol=1e-5)
    assert np.all(flat[:, 0] == 0)
    # the test split is shifted by 1 before scaling, so it moves by 1 / (training std), not its own
    shift = (new_test - new_train[:5]).reshape(5, -1)
    np.testing.assert_allclose(shift[:, 1:], np.broadcast_to(1 / train.reshape(50, -1)[:, 1:].std(0), (5, 3)), rtol=1e-4)
    np.testing.assert_allclose(shift[:, 0], 1.0)


def test_data_label_names_what_preparation_kept_and_what_it_stands_in_for():
    spec = {"source": "digits", "classes": [3, 5], "downsample": [4, 4], "test_fraction": 0.45,
            "label_noise": 0.2, "n_train": 150, "standin_for": "MNIST 3 vs 5 at 8x8 with 20% label noise"}
    arrays, provenance = prepare_dataset(spec, get_source("digits"))
    label = data_label(provenance)
    sizes = f"{len(arrays['y_train'])} train / {len(arrays['y_test'])} test"
    assert sizes.startswith("150 train")
    assert label == (f"{provenance['source_description']}: classes 3 vs 5, downsampled to 4×4, 20% label noise, "
                     f"{sizes} — stand-in for MNIST 3 vs 5 at 8x8 with 20% label noise")


def test_random_labels_redraw_a_share_of_labels_uniformly_over_all_classes():
    y = np.zeros(20000, dtype=np.int64)
    labels, redrawn = transforms.randomise_labels(y, 0.5, num_classes=4, seed=3)
    assert abs(len(redrawn) / len(y) - 0.5) < 0.02
    untouched = np.setdiff1d(np.arange(len(y)), redrawn)
    assert (labels[untouched] == 0).all()
    # a redrawn label is uniform over all four classes, its old one included
    shares = np.bincount(labels[redrawn], minlength=4) / len(redrawn)
    assert np.allclose(shares, 0.25, atol=0.02)
    again, _ = transforms.randomise_labels(y, 0.5, num_classes=4, seed=3)
    assert (again == labels).all()


# --- Large arrays, slice by slice (Tiny ImageNet at paper size: issue 42) ---------------------

@pytest.fixture
def small_slices(monkeypatch):
    """Slices of a few examples, so that small arrays cross several slice boundaries."""
    monkeypatch.setattr(transforms, "CHUNK_BYTES", 3 * 8 * 2 * 5 * 5)  # 3 examples of (2, 5, 5)


@pytest.mark.parametrize("dtype", [np.uint8, np.float64])
def test_rescale_pixels_equals_the_whole_array_division_bit_for_bit(small_slices, dtype):
    x = np.random.default_rng(0).integers(0, 256, size=(10, 2, 5, 5)).astype(dtype)
    if dtype == np.float64:
        x = x + np.random.default_rng(1).random(x.shape)  # values a float32 cannot hold
    expected = (x / 255.0).astype(np.float32)
    assert transforms.rescale_pixels(x, 255.0).tobytes() == expected.tobytes()


def test_standardise_channels_matches_the_whole_array_statistics_to_float32_rounding(small_slices):
    rng = np.random.default_rng(2)
    x_train = (rng.random((10, 2, 5, 5)) * [[[[3.0]], [[0.5]]]] + 7.0).astype(np.float32)
    x_test = rng.random((4, 2, 5, 5)).astype(np.float32)
    axes = (0, 2, 3)
    mean = x_train.mean(axis=axes, keepdims=True, dtype=np.float64)
    std = x_train.std(axis=axes, keepdims=True, dtype=np.float64)
    expected = [((x - mean) / std).astype(np.float32) for x in (x_train, x_test)]

    train_copy, test_copy = x_train.copy(), x_test.copy()
    result = transforms.standardise_channels(x_train, x_test)
    for got, want in zip(result, expected):
        np.testing.assert_array_max_ulp(got, want, maxulp=1)
    np.testing.assert_array_equal(x_train, train_copy)  # not in place unless asked

    in_place = transforms.standardise_channels(train_copy, test_copy, in_place=True)
    assert in_place[0] is train_copy and in_place[1] is test_copy
    for got, want in zip(in_place, expected):
        np.testing.assert_array_max_ulp(got, want, maxulp=1)


def test_standardise_channels_in_place_copies_inputs_of_another_dtype():
    x = np.arange(2 * 2 * 3, dtype=np.float64).reshape(2, 2, 3)
    before = x.copy()
    train, _ = transforms.standardise_channels(x, x[:1], in_place=True)
    assert train.dtype == np.float32 and train is not x
    np.testing.assert_array_equal(x, before)
