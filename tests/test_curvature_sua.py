"""SUA (spatially uncorrelated activations) for convolutions' KFAC and EKFAC, in float64 against
dense routes: A_SUA built entry by entry from KFC's Ω by its definition, EKFAC's s* and Theorem
A.2.1 against the exact empirical Fisher from per-example gradients, the optimiser's steps against
dense solves, and no width × width tensor made on the way."""

import math

import pytest
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from linearlens.curvature import (
    EigenKronecker,
    Kronecker,
    KroneckerFactoredOptimizer,
    ParameterLayout,
    PerPositionFactor,
    fisher,
    in_eigenbasis,
    input_factors,
)
from linearlens.curvature.input_factors import as_input_factor, kron
from test_curvature import check_operations, relative_error
from test_curvature_optim import DAMPING, LR, batches, conv_net, gradient

TOLERANCE = 1e-10


@pytest.fixture(autouse=True, params=["structured", "dense_product"])
def product_route(request, monkeypatch):
    """Every check through both of a SUA factor's products: the per-position one, and the dense matrix
    small factors multiply by."""
    if request.param == "structured":
        monkeypatch.setattr(input_factors, "DENSE_PRODUCT_WIDTH", 0)
    return request.param


@pytest.fixture(autouse=True)
def _float64(float64):
    yield


def classifier(conv: nn.Module, x: torch.Tensor) -> nn.Sequential:
    """conv, then tanh and a Linear read-out of its flattened outputs."""
    with torch.no_grad():
        features = conv(x[:1]).numel()
    return nn.Sequential(conv, nn.Tanh(), nn.Flatten(), nn.Linear(features, 3))


def centre_position(kernel_size) -> int:
    """p₀ = (k_h // 2)·k_w + k_w // 2, or k // 2 for a 1-D kernel."""
    return kernel_size[0] // 2 if len(kernel_size) == 1 else (kernel_size[0] // 2) * kernel_size[1] + kernel_size[1] // 2


def sua_by_definition(omega: torch.Tensor, channels: int, kernel_size, bias: bool) -> torch.Tensor:
    """A_SUA from KFC's Ω, entry by entry in W̃'s column order c·K + p: Ω's position-diagonal blocks
    averaged over the K positions on every position, nothing across positions, the bias joined to
    the centre alone by Ω's bias column averaged over positions."""
    positions = math.prod(kernel_size)

    def at(p):
        return torch.arange(channels) * positions + p

    average = sum(omega[at(p)][:, at(p)] for p in range(positions)) / positions
    a = torch.zeros_like(omega)
    for p in range(positions):
        a[at(p)[:, None], at(p)] = average
    if bias:
        centre = at(centre_position(kernel_size))
        a[centre, -1] = a[-1, centre] = omega[:-1, -1].reshape(channels, positions).mean(1)
        a[-1, -1] = omega[-1, -1]
    return a


LAYERS = {"3x3-stride2": lambda: nn.Conv2d(2, 3, 3, stride=2, padding=1),
          "3x2-no-bias": lambda: nn.Conv2d(2, 3, (3, 2), padding=1, bias=False),
          "2x3-stride2": lambda: nn.Conv2d(2, 3, (2, 3), stride=2),
          "conv1d": lambda: nn.Conv1d(2, 3, 3, padding=1),
          "1x1": lambda: nn.Conv2d(2, 3, 1)}


@pytest.mark.parametrize("kind", LAYERS)
def test_sua_block_is_kron_of_b_and_the_defined_a(kind):
    torch.manual_seed(0)
    conv = LAYERS[kind]()
    x = torch.randn(6, 2, 5) if isinstance(conv, nn.Conv1d) else torch.randn(6, 2, 5, 5)
    model = classifier(conv, x)
    kfc = fisher(model, x, representation="kfac").blocks["0"]
    sua_matrix = fisher(model, x, representation="kfac", conv_factors="sua")
    sua = sua_matrix.blocks["0"]
    assert isinstance(sua.a, PerPositionFactor)
    assert torch.equal(sua.b, kfc.b)
    a = sua_by_definition(kfc.a, 2, conv.kernel_size, conv.bias is not None)
    expected = sua.form.permuted(torch.kron(sua.b, a))
    check_operations(sua, expected)
    # The structured eigendecomposition, densely: A U = U diag(s_A), U orthogonal, the rotated
    # columns where to_kfe puts them; KFAC in it (s_B ⊗ s_A) is the same matrix.
    sa, ua, _, _ = sua.eigen
    u = ua.dense()
    assert relative_error(a @ u, u * sa) < TOLERANCE
    assert relative_error(u.T @ u, torch.eye(len(u))) < TOLERANCE
    assert relative_error(in_eigenbasis(sua_matrix).blocks["0"].dense(), expected) < TOLERANCE
    # The Linear read-out keeps its factor; a 1 x 1 kernel has one position, where SUA is KFC.
    assert torch.equal(sua_matrix.blocks["3"].a, fisher(model, x, representation="kfac").blocks["3"].a)
    if math.prod(conv.kernel_size) == 1:
        assert relative_error(sua.dense(), kfc.dense()) < TOLERANCE
    else:
        assert relative_error(sua.dense(), kfc.dense()) > 1e-3


def two_conv_net(kernel_size, bias: bool, x: torch.Tensor) -> nn.Sequential:
    torch.manual_seed(1)
    convs = nn.Sequential(nn.Conv2d(2, 3, kernel_size, stride=2, padding=1, bias=bias), nn.Tanh(),
                          nn.Conv2d(3, 2, kernel_size, padding=1, bias=bias))
    return classifier(convs, x)


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
@pytest.mark.parametrize("kernel_size", [(3, 3), (3, 2)], ids=["3x3", "3x2"])
def test_ekfac_in_the_sua_kfe_is_the_diagonal_of_f_and_beats_kfac(kernel_size, bias):
    torch.manual_seed(2)
    x, y = torch.randn(9, 2, 6, 6), torch.randint(0, 3, (9,))
    model = two_conv_net(kernel_size, bias, x)
    rows = fisher(model, x, y, representation="low_rank", variant="empirical").rows
    kfac = fisher(model, x, y, representation="kfac", variant="empirical", conv_factors="sua")
    ekfac = fisher(model, x, y, representation="ekfac", variant="empirical", conv_factors="sua")
    for layer in ParameterLayout(model).layers:
        block = ekfac.blocks[layer.name]
        assert isinstance(block, EigenKronecker)
        exact = rows[:, layer.span].T @ rows[:, layer.span]
        basis = kron(block.ub, as_input_factor(block.ua).dense())[block.form.order]  # rows in flat order
        assert relative_error(block.scales.reshape(-1), (basis.T @ exact @ basis).diagonal()) < TOLERANCE
        # Theorem A.2.1, in SUA's KFE: the refitted diagonal is closer to F than KFAC-SUA.
        assert (exact - block.dense()).norm() <= (exact - kfac.blocks[layer.name].dense()).norm()
    assert all(isinstance(ekfac.blocks[name].ua, PerPositionFactor) for name in ("0.0", "0.2"))


def parameter_change(model, optimiser, x, y):
    layout = ParameterLayout(model)
    before = layout.vector()
    g = gradient(model, x, y)
    optimiser.step(x, y)
    return layout.vector() - before, g


def damped_step(matrix: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    return -LR * torch.linalg.solve(matrix + DAMPING * torch.eye(len(matrix)), g)


@pytest.mark.parametrize("method", ["kfac", "ekfac"])
def test_sua_step_is_the_damped_inverse_formed_densely(method):
    (x, y), = batches(1)
    model = conv_net()
    approximation = fisher(model, x, y, representation=method, variant="empirical", conv_factors="sua").dense()
    kfc = fisher(model, x, y, representation=method, variant="empirical").dense()
    change, g = parameter_change(model, KroneckerFactoredOptimizer(model, LR, DAMPING, method,
                                                                   conv_factors="sua"), x, y)
    assert torch.allclose(change, damped_step(approximation, g), rtol=1e-9, atol=1e-12)
    assert not torch.allclose(change, damped_step(kfc, g), rtol=1e-3)


def test_ekfac_ra_running_average_in_the_sua_kfe():
    """s* ← α s* + (1 − α) m (Qᵀ ∇)² with Q = U_B ⊗ U_A formed densely from KFAC-SUA's first
    minibatch, from s_B ⊗ s_A; each step solves with that s* in the KFE."""
    model, alpha = conv_net(), 0.75
    optimiser = KroneckerFactoredOptimizer(model, LR, DAMPING, "ekfac_ra", freq=2, alpha=alpha, conv_factors="sua")
    (x1, y1), (x2, y2) = batches(2)
    kfac = fisher(model, x1, y1, representation="kfac", variant="empirical", conv_factors="sua")
    expected = {}
    for (x, y), first in (((x1, y1), True), ((x2, y2), False)):
        change, g = parameter_change(model, optimiser, x, y)
        matrices = []
        for layer in optimiser.layout.layers:
            block = kfac.blocks[layer.name]
            sa, ua, sb, ub = block.eigen
            basis = kron(ub, as_input_factor(ua).dense())  # W̃'s row-major entries → rotated ones
            rotated = (basis.T @ block.form.matrix(g[layer.span]).reshape(-1)).reshape(sb.shape[0], -1)
            start = torch.outer(sb, sa) if first else expected[layer.name]
            expected[layer.name] = alpha * start + (1 - alpha) * len(x) * rotated.square()
            assert torch.allclose(optimiser.matrix.blocks[layer.name].scales, expected[layer.name], rtol=1e-9)
            matrices.append(block.form.permuted((basis * expected[layer.name].reshape(-1)) @ basis.T))
        assert torch.allclose(change, damped_step(torch.block_diag(*matrices), g), rtol=1e-9, atol=1e-12)
    assert isinstance(optimiser.matrix.blocks["0"].ua, PerPositionFactor)


class LargestTensor(TorchDispatchMode):
    """The most entries of any tensor that an operation makes while the mode is on."""

    largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        sizes = [t.numel() for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
        self.largest = max([self.largest, *sizes])
        return out


@pytest.mark.parametrize("conv_factors", ["kfc", "sua"])
def test_sua_makes_no_width_squared_tensor(conv_factors):
    """C_in = 64, 3 x 3 kernel: width 577. KFAC and EKFAC (eigh and the refit of s*) under SUA make
    no tensor of width² entries, nor store one; KFC's Ω is one (the probe sees it)."""
    torch.manual_seed(3)
    x, y = torch.randn(2, 64, 4, 4), torch.randint(0, 3, (2,))
    model = classifier(nn.Conv2d(64, 2, 3, padding=1), x)
    width = 64 * 9 + 1
    with LargestTensor() as probe:
        kfac = fisher(model, x, y, representation="kfac", variant="empirical", conv_factors=conv_factors)
        if conv_factors == "sua":  # KFC's eigh of Ω, slow, would show nothing more
            ekfac = fisher(model, x, y, representation="ekfac", variant="empirical", conv_factors=conv_factors)
    if conv_factors == "kfc":
        assert probe.largest >= width ** 2
        return
    assert probe.largest < width ** 2
    block, kfe = kfac.blocks["0"], ekfac.blocks["0"]
    stored = [block.a.shared, block.a.centre, block.b, kfe.ua.shared, kfe.ua.centre, kfe.ub, kfe.scales]
    assert [tuple(t.shape) for t in stored] == [(64, 64), (65, 65), (2, 2), (64, 64), (65, 65), (2, 2), (2, width)]


def test_bad_conv_factors_are_refused():
    torch.manual_seed(4)
    x = torch.randn(3, 2, 4, 4)
    model = classifier(nn.Conv2d(2, 2, 3), x)
    with pytest.raises(ValueError, match="conv_factors must be one of"):
        fisher(model, x, representation="kfac", conv_factors="kfra")
    with pytest.raises(ValueError, match="applies to kfac and ekfac"):
        fisher(model, x, representation="diag", conv_factors="sua")
    with pytest.raises(ValueError, match="conv_factors must be one of"):
        KroneckerFactoredOptimizer(model, LR, DAMPING, "kfac", conv_factors="SUA")
    assert isinstance(fisher(model, x, representation="kfac").blocks["0"], Kronecker)
