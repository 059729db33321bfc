"""Alignment, CKA, spectra, effective rank and kernel regression on Grams with known answers."""

import pytest
import torch

from linearlens.kernels.alignment import (
    alignment,
    centre,
    effective_rank,
    eigenvalues,
    kernel_regression,
    target_alignment,
    target_gram,
    trace_ratios,
)
from linearlens.train.runtime import default_dtype


@pytest.fixture(autouse=True)
def float64():
    with default_dtype("float64"):
        yield


def random_gram(n=12, c=None, seed=0):
    generator = torch.Generator().manual_seed(seed)
    rows = n * (c or 1)
    features = torch.randn(rows, 5, generator=generator)
    gram = features @ features.T
    return gram if c is None else gram.reshape(n, c, n, c)


@pytest.mark.parametrize("c", [None, 3])
@pytest.mark.parametrize("centred", [True, False])
def test_alignment_is_one_with_itself_and_scale_invariant(c, centred):
    a, b = random_gram(c=c), random_gram(c=c, seed=1)
    assert alignment(a, a, centred) == pytest.approx(1.0, abs=1e-12)
    assert alignment(3.7 * a, 0.2 * b, centred) == pytest.approx(alignment(a, b, centred).item(), rel=1e-12)
    assert 0 <= alignment(a, b, centred) <= 1


def test_centring_removes_the_mean_feature():
    features = torch.randn(10, 4) + 5.0  # a large common offset
    centred_features = features - features.mean(0)
    assert torch.allclose(centre(features @ features.T), centred_features @ centred_features.T)


def test_per_output_centring_centres_each_output_over_examples():
    features = torch.randn(6, 2, 4) + torch.tensor([3.0, -2.0])[None, :, None]  # Φ(x) per output
    gram = torch.einsum("iap,jbp->iajb", features, features)
    centred = features - features.mean(0, keepdim=True)
    expected = torch.einsum("iap,jbp->iajb", centred, centred)
    assert torch.allclose(centre(gram, per_output=True), expected)
    # The (n·c) × (n·c) convention of eq. 6.3.3 centres the stacked rows instead: a different Gram.
    stacked = features.reshape(12, 4) - features.reshape(12, 4).mean(0)
    assert torch.allclose(centre(gram, per_output=False).reshape(12, 12), stacked @ stacked.T)
    assert not torch.allclose(centre(gram, per_output=True), centre(gram, per_output=False))


def test_target_alignment_of_the_label_gram_is_one():
    labels = torch.tensor([0, 1, 2, 1, 0, 2, 2])
    assert target_alignment(target_gram(labels, 3), labels) == pytest.approx(1.0)
    assert target_alignment(target_gram(labels.double()), labels.double()) == pytest.approx(1.0)


def test_spectrum_effective_rank_and_trace_ratios():
    values = torch.tensor([4.0, 2.0, 1.0, 1.0])
    basis, _ = torch.linalg.qr(torch.randn(4, 4))
    gram = basis @ torch.diag(values) @ basis.T
    assert torch.allclose(eigenvalues(gram), values)
    assert effective_rank(torch.eye(7)) == pytest.approx(7.0)
    assert effective_rank(torch.diag(torch.tensor([1.0, 0, 0]))) == pytest.approx(1.0)
    assert torch.allclose(trace_ratios(gram), torch.tensor([0.5, 0.75, 0.875, 1.0]))


def test_kernel_regression_interpolates_without_ridge_and_shrinks_with_it():
    x = torch.randn(8, 3)
    gram = torch.exp(-torch.cdist(x, x) ** 2)
    y = torch.randn(8)
    assert torch.allclose(kernel_regression(gram, gram, y), y, atol=1e-8)
    shrunk = kernel_regression(gram, gram, y, ridge=1e3)
    assert shrunk.norm() < 0.05 * y.norm()
