"""Fig 3.1 kept true: the listing's computation (vᵀFv of a KFAC and a dense FIM of a 10-output model, v
the model's parameters) as a doctest of the chapter's experiments module, and the thesis's listing
itself run with NNGeometry 0.4 against ours, in float64.

NNGeometry 0.4's ``FIM`` has no ``n_output`` argument (that argument belongs to the thesis-era 0.2/0.3 API): it
reads the output size from the model, so the listing runs without it. Its ``FIM`` is the closed-form
expectation over the labels ("classif_logits"), our ``variant="exact"``; the KFAC factors are split
differently between the two libraries but their Kronecker product, hence vᵀFv, is the same.
"""

import doctest

import pytest
import torch
from nngeometry.metrics import FIM
from nngeometry.object import PMatDense, PMatKFAC
from nngeometry.object.vector import PVector
from torch.utils.data import DataLoader, TensorDataset

import linearlens.experiments.george_thesis.ch3 as ch3
from linearlens.curvature import ParameterLayout, fisher
from linearlens.models.pooled_cnn import conv_pool_cnn


def test_the_listing_doctest_runs():
    result = doctest.testmod(ch3, raise_on_error=False)
    assert result.attempted >= 8 and result.failed == 0


def thesis_listing(model, loader, representation):
    """Fig 3.1's lines as printed, less ``n_output=10`` (gone in NNGeometry 0.4)."""
    try:
        F = FIM(model=model, loader=loader, representation=representation)
        v = PVector.from_model(model)
        return F.vTMv(v)
    finally:  # NNGeometry leaves its hooks on the model when it raises
        for module in model.modules():
            module._forward_hooks.clear()


@pytest.mark.parametrize("theirs, ours", [(PMatKFAC, "kfac"), (PMatDense, "dense")])
def test_the_thesis_listing_with_nngeometry_equals_ours(float64, theirs, ours):
    torch.manual_seed(3)
    model = conv_pool_cnn(in_channels=1, num_classes=10, width=3, image_size=4).double()
    x, y = torch.randn(12, 1, 4, 4), torch.randint(0, 10, (12,))
    expected = float(thesis_listing(model, DataLoader(TensorDataset(x, y), batch_size=5), theirs).detach())
    measured = float(fisher(model, x, representation=ours).vTMv(ParameterLayout(model).vector()))
    assert measured == pytest.approx(expected, rel=1e-10)
    assert expected > 0


def test_kfac_and_dense_differ_on_the_listing():
    """The two columns of the listing compute different numbers (KFAC approximates F)."""
    torch.manual_seed(3)
    model = conv_pool_cnn(in_channels=1, num_classes=10, width=3, image_size=4).double()
    x = torch.randn(12, 1, 4, 4, dtype=torch.float64)
    v = ParameterLayout(model).vector()
    kfac, dense = (float(fisher(model, x, representation=r).vTMv(v)) for r in ("kfac", "dense"))
    assert abs(kfac - dense) > 1e-3 * dense
