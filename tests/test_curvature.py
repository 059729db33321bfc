"""Fisher representations against the dense torch.func reference, in float64: every operation of
every representation on an MLP and a CNN, the KFAC ordering and normalisation on layers where
KFAC is exact, EKFAC's diagonal and Theorem A.2.1."""

import pytest
import torch
from torch import nn
from torch.func import functional_call, grad, vmap

from linearlens.capture import per_example_jacobians
from linearlens.curvature import (
    REPRESENTATIONS,
    AffineForm,
    EigenKronecker,
    FisherSource,
    Kronecker,
    ParameterLayout,
    build,
    fisher,
)
from linearlens.curvature.reference import fisher_by_jacobian

TOLERANCE = 1e-10
DAMPINGS = (1e-3, 0.5)


@pytest.fixture(autouse=True)
def _float64(float64):
    yield


class Scaled(nn.Module):
    """A parameter no closed form knows: its gradients come from torch.func."""

    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(1 + 0.3 * torch.randn(features))

    def forward(self, x):
        return x * self.scale


def make_mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 4, bias=False), Scaled(4), nn.Tanh(),
                         nn.Linear(4, 3))


def make_cnn():
    torch.manual_seed(1)
    norm = nn.BatchNorm2d(2)
    norm.running_mean.normal_()
    norm.running_var.uniform_(0.5, 2)
    model = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.Tanh(),
                          nn.Conv2d(3, 2, 3, padding=1, stride=2, bias=False), norm, nn.Tanh(),
                          nn.Flatten(), nn.Linear(8, 3))
    return model.eval()


MODELS = {"mlp": (make_mlp, (5,)), "cnn": (make_cnn, (2, 4, 4))}


def data(name, n=7):
    make, shape = MODELS[name]
    torch.manual_seed(2)
    return make(), torch.randn(n, *shape), torch.randint(0, 3, (n,))


def relative_error(a, b):
    return ((a - b).norm() / b.norm()).item()


def jacobian(model, x):
    layout = ParameterLayout(model)
    jacobians = per_example_jacobians(model, x, {k: p.detach() for k, p in layout.parameters().items()})
    return torch.cat([jacobians[name] for name in layout.names], dim=2)


# --- the reference itself ------------------------------------------------------------------------

@pytest.mark.parametrize("name", MODELS)
def test_reference_fishers_are_the_textbook_outer_products(name):
    model, x, y = data(name)
    j = jacobian(model, x)
    with torch.no_grad():
        p = torch.softmax(model(x), dim=1)
    categorical = torch.einsum("ncp,ncd,ndq->pq", j, torch.diag_embed(p) - p[:, :, None] * p[:, None, :], j)
    expected = {("categorical", "exact"): categorical / len(x),
                ("gaussian", "exact"): torch.einsum("ncp,ncq->pq", j, j) / len(x)}
    for (likelihood, variant), matrix in expected.items():
        source = FisherSource(model, x, likelihood=likelihood, variant=variant)
        assert relative_error(fisher_by_jacobian(source), matrix) < TOLERANCE

    params = {k: p.detach() for k, p in ParameterLayout(model).parameters().items()}

    def loss(params, example, label):
        out = functional_call(model, params, (example[None],))
        return nn.functional.cross_entropy(out, label[None])

    grads = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    g = torch.cat([grads[k].reshape(len(x), -1) for k in params], dim=1)
    source = FisherSource(model, x, y, variant="empirical")
    assert relative_error(fisher_by_jacobian(source), g.T @ g / len(x)) < TOLERANCE


def test_bernoulli_fishers_are_those_of_binary_cross_entropy():
    """Sigmoid outputs under binary cross-entropy (the auto-encoder of thesis ch. 4): exact F is
    Jᵀ diag(σ(1 − σ)) J, the empirical one the outer products of the summed BCE's gradients, and
    Monte-Carlo labels approach the exact F."""
    model, x, _ = data("mlp")
    targets = (torch.rand(len(x), 3, generator=torch.Generator().manual_seed(4)) < 0.5).double()
    j = jacobian(model, x)
    with torch.no_grad():
        p = torch.sigmoid(model(x))
    exact = torch.einsum("ncp,nc,ncq->pq", j, p * (1 - p), j) / len(x)
    assert relative_error(fisher_by_jacobian(FisherSource(model, x, likelihood="bernoulli")), exact) < TOLERANCE
    params = {k: p.detach() for k, p in ParameterLayout(model).parameters().items()}

    def loss(params, example, target):
        out = functional_call(model, params, (example[None],))
        return nn.functional.binary_cross_entropy_with_logits(out[0], target, reduction="sum")

    grads = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, targets)
    g = torch.cat([grads[k].reshape(len(x), -1) for k in params], dim=1)
    empirical = fisher(model, x, targets, representation="dense", likelihood="bernoulli", variant="empirical")
    assert relative_error(empirical.dense(), g.T @ g / len(x)) < TOLERANCE
    sampled = fisher(model, x, representation="dense", likelihood="bernoulli", variant="mc", samples=20000, seed=3)
    assert 0 < relative_error(sampled.dense(), exact) < 0.05


def test_monte_carlo_fisher_approaches_the_exact_one():
    model, x, _ = data("mlp")
    exact = fisher_by_jacobian(FisherSource(model, x))
    sampled = fisher(model, x, representation="dense", variant="mc", samples=20000, seed=3).dense()
    assert 0 < relative_error(sampled, exact) < 0.05


# --- every representation's operations ------------------------------------------------------------

def arrow_mask(model) -> torch.Tensor:
    """Where the quasi-diagonal representation keeps F: the diagonal, the bias-weight pairs of
    each unit of Linear and convolution layers, and the whole block of any other layer."""
    layout = ParameterLayout(model)
    mask = torch.zeros(layout.size, layout.size, dtype=torch.bool)
    for layer in layout.layers:
        start, stop = layer.span.start, layer.span.stop
        params = dict(layer.module.named_parameters(recurse=False))
        if not isinstance(layer.module, (nn.Linear, nn.Conv2d)):
            mask[start:stop, start:stop] = True
            continue
        mask[range(start, stop), range(start, stop)] = True
        if "bias" in params:
            out = params["bias"].numel()
            per_row = params["weight"][0].numel()
            for o in range(out):
                row = range(start + o * per_row, start + (o + 1) * per_row)
                bias = start + out * per_row + o
                mask[row, bias] = mask[bias, row] = True
    return mask


def block_mask(model) -> torch.Tensor:
    layout = ParameterLayout(model)
    mask = torch.zeros(layout.size, layout.size, dtype=torch.bool)
    for layer in layout.layers:
        mask[layer.span, layer.span] = True
    return mask


def expected_matrix(representation, model, reference):
    if representation in ("dense", "low_rank", "implicit"):
        return reference
    if representation == "diag":
        return torch.diag(reference.diagonal())
    mask = block_mask(model) if representation == "block_diag" else arrow_mask(model)
    return reference * mask


def check_operations(matrix, expected):
    torch.manual_seed(4)
    v = torch.randn(len(expected))
    assert relative_error(matrix.mv(v), expected @ v) < TOLERANCE
    assert abs(matrix.vTMv(v) / (v @ expected @ v) - 1) < TOLERANCE
    assert abs(matrix.trace() / expected.trace() - 1) < TOLERANCE
    assert relative_error(matrix.diag(), expected.diagonal()) < TOLERANCE
    assert relative_error(matrix.dense(), expected) < TOLERANCE
    eye = torch.eye(len(expected))
    for damping in DAMPINGS:
        assert relative_error(matrix.solve(v, damping), torch.linalg.solve(expected + damping * eye, v)) < TOLERANCE


@pytest.mark.parametrize("representation", ["dense", "low_rank", "implicit", "diag", "block_diag", "quasi_diag"])
@pytest.mark.parametrize("name", MODELS)
def test_operations_equal_those_of_the_dense_reference(name, representation):
    model, x, _ = data(name)
    reference = fisher_by_jacobian(FisherSource(model, x))
    matrix = fisher(model, x, representation=representation, chunk_size=3)
    check_operations(matrix, expected_matrix(representation, model, reference))


@pytest.mark.parametrize("representation", ["kfac", "ekfac"])
@pytest.mark.parametrize("name", MODELS)
def test_kronecker_operations_equal_those_of_their_dense_matrix(name, representation):
    model, x, _ = data(name)
    matrix = fisher(model, x, representation=representation, chunk_size=3)
    check_operations(matrix, matrix.dense())
    # The layers KFAC does not cover keep their exact block of F.
    reference = fisher_by_jacobian(FisherSource(model, x))
    for layer in ParameterLayout(model).layers:
        if not isinstance(matrix.blocks[layer.name], (Kronecker, EigenKronecker)):
            span = layer.span
            assert relative_error(matrix.blocks[layer.name].dense(), reference[span, span]) < TOLERANCE


@pytest.mark.parametrize("variant", ["mc", "empirical"])
def test_implicit_and_stored_representations_see_the_same_draws(variant):
    model, x, y = data("cnn")
    kwargs = dict(labels=y, variant=variant, samples=3, seed=5)
    dense = fisher(model, x, representation="dense", chunk_size=2, **kwargs).dense()
    check_operations(fisher(model, x, representation="implicit", chunk_size=4, **kwargs), dense)
    assert relative_error(dense, fisher_by_jacobian(FisherSource(model, x, y, variant=variant,
                                                                 samples=3, seed=5))) < TOLERANCE


# --- KFAC's ordering and normalisation, EKFAC -----------------------------------------------------

ONE_LAYER = {"linear": lambda: nn.Linear(4, 3), "linear-no-bias": lambda: nn.Linear(4, 3, bias=False),
             "conv": lambda: nn.Conv2d(2, 3, 3, padding=1, stride=2),
             "conv-no-bias": lambda: nn.Conv2d(2, 2, 2, bias=False)}


@pytest.mark.parametrize("kind", ONE_LAYER)
def test_kfac_is_exact_on_one_affine_layer_under_the_gaussian_likelihood(kind):
    """f = W̃ x̃: every output's gradient is e_o ⊗ x̃_t, so F = I ⊗ A exactly (KFC's B = I after its
    division by the number of positions): a wrong Kronecker order or scale fails here."""
    torch.manual_seed(6)
    layer = ONE_LAYER[kind]()
    model = nn.Sequential(layer, nn.Flatten())
    x = torch.randn(5, 4) if isinstance(layer, nn.Linear) else torch.randn(5, 2, 5, 5)
    source = FisherSource(model, x, likelihood="gaussian")
    reference = fisher_by_jacobian(source)
    for representation in ("kfac", "ekfac"):
        assert relative_error(build(source, representation).dense(), reference) < TOLERANCE


@pytest.mark.parametrize("name", MODELS)
def test_ekfac_diagonal_is_the_second_moment_of_gradients_in_the_kfe(name):
    model, x, _ = data(name)
    reference = fisher_by_jacobian(FisherSource(model, x))
    kfac = fisher(model, x, representation="kfac")
    ekfac = fisher(model, x, representation="ekfac")
    for layer in ParameterLayout(model).layers:
        block = ekfac.blocks[layer.name]
        if not isinstance(block, EigenKronecker):
            continue
        exact = reference[layer.span, layer.span]
        basis = torch.kron(block.ub, block.ua)[block.form.order]  # rows in the layer's flat order
        assert relative_error(block.scales.reshape(-1), (basis.T @ exact @ basis).diagonal()) < TOLERANCE
        # Theorem A.2.1: the refitted diagonal is closer to F than KFAC's, in Frobenius norm.
        assert (exact - block.dense()).norm() <= (exact - kfac.blocks[layer.name].dense()).norm()


def test_theorem_a21_on_random_gradients():
    """For per-example gradients vec(Ds ãᵀ) with correlated factors, D = diag(Qᵀ G Q) in the KFE
    Q = U_B ⊗ U_A beats KFAC's eigenvalues and every perturbation of D (its optimality)."""
    generator = torch.Generator().manual_seed(7)
    n, out, width = 200, 3, 4
    inputs = torch.randn(n, width, generator=generator) @ torch.randn(width, width, generator=generator)
    grads = torch.randn(n, out, generator=generator) * inputs[:, :1]  # Ds depends on ã
    per_example = torch.einsum("no,ni->noi", grads, inputs).reshape(n, -1)
    exact = per_example.T @ per_example / n
    form = AffineForm(out, width, torch.arange(out * width))
    kfac = Kronecker(form, inputs.T @ inputs / n, grads.T @ grads / n)
    _, ua, _, ub = kfac.eigen
    basis = torch.kron(ub, ua)
    scales = (per_example @ basis).square().mean(0).reshape(out, width)
    ekfac = EigenKronecker(form, ua, ub, scales)
    best = (exact - ekfac.dense()).norm()
    assert best < (exact - kfac.dense()).norm()
    for _ in range(20):
        worse = EigenKronecker(form, ua, ub, scales * (1 + 0.1 * torch.randn(out, width, generator=generator)))
        assert best <= (exact - worse.dense()).norm()


# --- bad input --------------------------------------------------------------------------------------

def test_bad_requests_are_refused_with_the_reason():
    model, x, _ = data("mlp")
    with pytest.raises(ValueError, match="representation must be one of"):
        fisher(model, x, representation="kfc")
    with pytest.raises(ValueError, match="needs the observed labels"):
        fisher(model, x, representation="diag", variant="empirical")
    with pytest.raises(ValueError, match="positive damping"):
        fisher(model, x, representation="low_rank").solve(x.new_ones(ParameterLayout(model).size), 0)
    cnn, images, _ = data("cnn")
    with pytest.raises(ValueError, match="model.eval"):
        fisher(cnn.train(), images, representation="kfac")
    assert set(REPRESENTATIONS) == {"dense", "diag", "block_diag", "quasi_diag", "kfac", "ekfac",
                                    "low_rank", "implicit"}
