"""Our Fisher representations against two published implementations, in float64:
NNGeometry 0.4 (the thesis's own library) and curvlinops 3.0.1. Both agree with us on the
matrices; where a library's operation means something else (its damping), the test spells out
that library's convention and checks it too.

Conventions used in the comparisons:
* F = (1/n) Σ_i E_y[∇ log p ∇ log pᵀ] (NNGeometry's ``classif_logits``, curvlinops' ``type-2`` with
  the mean-reduced cross-entropy); the empirical Fisher uses the observed labels.
* KFAC's factors are split differently by each library (NNGeometry scales A by √(c − 1) and B by
  its inverse; curvlinops divides A by the positions of a convolution, NNGeometry and we divide B),
  so the Kronecker products, not the factors, are compared.
* curvlinops is built with ``separate_weight_and_bias=False`` (its default drops the weight-bias
  cross terms) and used once per operator: ``compute_kronecker_factors`` adds onto factors
  already computed during construction.
* NNGeometry needs torch's default dtype float64 for a float64 model, and leaves its hooks on the
  model when it raises; ``nngeometry_matrix`` removes them either way.
"""

import pytest
import torch
from curvlinops import EFLinearOperator, EKFACLinearOperator, GGNLinearOperator, KFACLinearOperator
from nngeometry.layercollection import LayerCollection
from nngeometry.metrics import FIM
from nngeometry.object import PMatDense, PMatDiag, PMatEKFAC, PMatKFAC, PMatLowRank, PMatQuasiDiag
from nngeometry.object.vector import PVector
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from linearlens.curvature import Kronecker, fisher

TOLERANCE = 1e-10
CLASSES = 3


@pytest.fixture(autouse=True)
def _float64(float64):
    yield


def make_mlp():
    return nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 4, bias=False), nn.Tanh(),
                         nn.Linear(4, CLASSES))


def make_cnn():
    return nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.Tanh(),
                         nn.Conv2d(3, 2, 3, padding=1, stride=2, bias=False), nn.Tanh(),
                         nn.Flatten(), nn.Linear(8, CLASSES))


MODELS = {"mlp": (make_mlp, (5,)), "cnn": (make_cnn, (2, 4, 4))}


def data(name, n=6):
    make, shape = MODELS[name]
    torch.manual_seed(10)
    return make(), torch.randn(n, *shape), torch.randint(0, CLASSES, (n,))


def relative_error(a, b):
    return ((a - b).norm() / b.norm()).item()


def nngeometry_matrix(model, x, y, representation, **kwargs):
    loader = DataLoader(TensorDataset(x, y), batch_size=len(x))
    try:
        return FIM(model, loader, representation, **kwargs)
    finally:
        for module in model.modules():
            module._forward_hooks.clear()


def curvlinops_dense(operator, model, x, y, **kwargs):
    params = list(model.parameters())
    op = operator(model, nn.CrossEntropyLoss(reduction="mean"), params, [(x, y)], **kwargs)
    return op @ torch.eye(sum(p.numel() for p in params))


KRONECKER = dict(fisher_type="type-2", separate_weight_and_bias=False)


@pytest.mark.parametrize("name", MODELS)
def test_nngeometry_representations_equal_ours(name):
    model, x, y = data(name)
    for theirs, ours in [(PMatDense, "dense"), (PMatKFAC, "kfac"), (PMatQuasiDiag, "quasi_diag")]:
        expected = nngeometry_matrix(model, x, y, theirs).to_torch()
        assert relative_error(fisher(model, x, representation=ours).dense(), expected) < TOLERANCE, ours
    diagonal = nngeometry_matrix(model, x, y, PMatDiag).get_diag()
    assert relative_error(fisher(model, x, representation="diag").diag(), diagonal) < TOLERANCE
    ekfac = nngeometry_matrix(model, x, y, PMatEKFAC)
    ekfac.update_diag(DataLoader(TensorDataset(x, y), batch_size=len(x)))
    assert relative_error(fisher(model, x, representation="ekfac").dense(), ekfac.to_torch()) < TOLERANCE


@pytest.mark.parametrize("name", MODELS)
def test_nngeometry_empirical_fisher_equals_ours(name):
    model, x, y = data(name)

    def losses(inputs, labels):  # NNGeometry's route to the empirical Fisher: per-example losses
        return nn.functional.cross_entropy(model(inputs), labels, reduction="none")

    expected = nngeometry_matrix(model, x, y, PMatDense, variant="regression", function=losses).to_torch()
    ours = fisher(model, x, y, representation="dense", variant="empirical").dense()
    assert relative_error(ours, expected) < TOLERANCE


@pytest.mark.parametrize("name", MODELS)
def test_nngeometry_damps_kfac_factorwise_where_we_invert_exactly(name):
    """NNGeometry's KFAC solve is (A' + √λ π I)⁻¹ ⊗ (B' + √λ/π I)⁻¹ v with its factors A' = A √(c − 1),
    B' = B/√(c − 1) and π = √(tr A'/tr B' · dim B/dim A); ours is (A ⊗ B + λI)⁻¹ v."""
    model, x, y = data(name)
    damping = 0.3
    theirs = nngeometry_matrix(model, x, y, PMatKFAC)
    ours = fisher(model, x, representation="kfac")
    torch.manual_seed(11)
    v = torch.randn(sum(p.numel() for p in model.parameters()))
    solved = theirs.solve(PVector(LayerCollection.from_model(model), vector_repr=v), damping).to_torch()
    expected = []
    for layer in ours.layout.layers:
        block = ours.blocks[layer.name]
        assert isinstance(block, Kronecker)
        scale = (CLASSES - 1) ** 0.5
        a, b = block.a * scale, block.b / scale
        pi = (a.trace() / b.trace() * len(b) / len(a)).sqrt()
        a = a + damping ** 0.5 * pi * torch.eye(len(a))
        b = b + damping ** 0.5 / pi * torch.eye(len(b))
        matrix = block.form.matrix(v[layer.span])
        expected.append(block.form.vector(torch.linalg.solve(b, matrix) @ torch.linalg.inv(a)))
    assert relative_error(solved, torch.cat(expected)) < TOLERANCE
    exact = torch.linalg.solve(ours.dense() + damping * torch.eye(len(v)), v)
    assert relative_error(ours.solve(v, damping), exact) < TOLERANCE
    assert relative_error(solved, exact) > 1e-3  # the two conventions are different operations


def test_nngeometry_low_rank_solve_drops_the_null_space_that_ours_keeps():
    model, x, y = data("mlp")
    damping = 0.2
    theirs = nngeometry_matrix(model, x, y, PMatLowRank)
    ours = fisher(model, x, representation="low_rank")
    v = torch.randn(ours.rows.shape[1])
    _, singular, right = torch.linalg.svd(ours.rows, full_matrices=False)
    kept = singular > 1e-8 * singular.max()  # our c seeds per example span only c − 1 directions
    singular, right = singular[kept], right[kept]
    in_range = right.T @ ((right @ v) / (singular ** 2 + damping))
    solved = theirs.solve(PVector(LayerCollection.from_model(model), vector_repr=v), damping).to_torch()
    assert relative_error(solved, in_range) < TOLERANCE
    exact = in_range + (v - right.T @ (right @ v)) / damping
    assert relative_error(ours.solve(v, damping), exact) < TOLERANCE


@pytest.mark.parametrize("name", MODELS)
def test_curvlinops_operators_equal_ours(name):
    model, x, y = data(name)
    cases = [(GGNLinearOperator, {}, "dense", "exact"), (EFLinearOperator, {}, "dense", "empirical"),
             (KFACLinearOperator, KRONECKER, "kfac", "exact"), (EKFACLinearOperator, KRONECKER, "ekfac", "exact")]
    for operator, kwargs, representation, variant in cases:
        expected = curvlinops_dense(operator, model, x, y, **kwargs)
        ours = fisher(model, x, y, representation=representation, variant=variant).dense()
        assert relative_error(ours, expected) < TOLERANCE, operator.__name__
