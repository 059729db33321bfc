"""KFAC, EKFAC and EKFAC-ra steps (issue 27's tests): each step is −η (F̂ + εI)⁻¹ ∇
with F̂ formed densely, EKFAC-ra's s* follows its recursion, and BatchNorm is refused."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from linearlens.curvature import ParameterLayout, fisher
from linearlens.curvature.input_factors import as_input_factor
from linearlens.curvature.optim import KroneckerFactoredOptimizer
from linearlens.train.runtime import default_dtype

LR, DAMPING = 0.5, 0.1


@pytest.fixture(autouse=True)
def float64():
    with default_dtype("float64"):
        yield


def conv_net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.Tanh(), nn.Conv2d(3, 2, 3, stride=2),
                         nn.Tanh(), nn.Flatten(), nn.Linear(2 * 2 * 2, 4))


def batches(count):
    generator = torch.Generator().manual_seed(1)
    return [(torch.randn(6, 1, 5, 5, generator=generator), torch.randint(0, 4, (6,), generator=generator))
            for _ in range(count)]


def gradient(model, x, y):
    model.zero_grad()
    F.cross_entropy(model(x), y).backward()
    return torch.cat([p.grad.reshape(-1) for p in ParameterLayout(model).parameters().values()])


def step(model, optimiser, x, y):
    """The change of the flat parameters that one step makes."""
    layout = ParameterLayout(model)
    before = layout.vector()
    gradient(model, x, y)
    optimiser.step(x, y)
    return layout.vector() - before


@pytest.mark.parametrize("method", ["kfac", "ekfac"])
def test_step_is_the_damped_inverse_formed_densely(method):
    model = conv_net()
    (x, y), = batches(1)
    approximation = fisher(model, x, y, representation=method, variant="empirical").dense()
    expected = -LR * torch.linalg.solve(approximation + DAMPING * torch.eye(len(approximation)), gradient(model, x, y))
    change = step(model, KroneckerFactoredOptimizer(model, LR, DAMPING, method), x, y)
    assert torch.allclose(change, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("conv_factors", ["kfc", "sua"])
def test_factor_damping_is_that_of_the_damped_factors(conv_factors):
    """App. A.4: KFAC with ε + √ε (S_A ⊗ 1 + 1 ⊗ S_B) in the KFE steps by ((A + √ε I) ⊗ (B + √ε I))⁻¹ g,
    formed densely per layer; EKFAC adds the same to s*."""
    model = conv_net()
    (x, y), = batches(1)
    kfac = fisher(model, x, y, representation="kfac", variant="empirical", conv_factors=conv_factors)
    ekfac = fisher(model, x, y, representation="ekfac", variant="empirical", conv_factors=conv_factors)
    g = gradient(model, x, y)
    root = DAMPING ** 0.5
    expected = {"kfac": [], "ekfac": []}
    for layer in ParameterLayout(model).layers:
        block = kfac.blocks[layer.name]
        a = block.input_factor.dense()
        eye_a, eye_b = torch.eye(len(a)), torch.eye(len(block.b))
        damped = block.form.permuted(torch.kron((block.b + root * eye_b).contiguous(), (a + root * eye_a).contiguous()))
        expected["kfac"].append(torch.linalg.solve(damped, g[layer.span]))
        sa, ua, sb, ub = block.eigen
        eigen = ekfac.blocks[layer.name]
        shift = DAMPING + root * (sb[:, None] + sa[None, :])
        rows = torch.kron(ub.contiguous(), as_input_factor(ua).dense().contiguous())[block.form.order]  # Q, flat order
        matrix = rows @ torch.diag((eigen.scales + shift).reshape(-1)) @ rows.T
        expected["ekfac"].append(torch.linalg.solve(matrix, g[layer.span]))
    for method in ("kfac", "ekfac"):
        fresh = conv_net()
        optimiser = KroneckerFactoredOptimizer(fresh, LR, DAMPING, method, conv_factors=conv_factors,
                                               damping_mode="factors")
        assert torch.allclose(step(fresh, optimiser, x, y), -LR * torch.cat(expected[method]), rtol=1e-9,
                              atol=1e-12), method


def test_ekfac_with_kfac_eigenvalues_steps_as_kfac():
    """s* = S_B ⊗ S_A, kept (α = 1), recomputed every step: the same matrix as KFAC's."""
    first, second = conv_net(), conv_net()
    kfac = KroneckerFactoredOptimizer(first, LR, DAMPING, "kfac")
    kept = KroneckerFactoredOptimizer(second, LR, DAMPING, "ekfac_ra", alpha=1.0)
    for x, y in batches(3):
        assert torch.allclose(step(first, kfac, x, y), step(second, kept, x, y), rtol=1e-9, atol=1e-12)


def test_ekfac_ra_running_average_of_the_mean_gradient_in_the_kfe():
    model, alpha = conv_net(), 0.75
    optimiser = KroneckerFactoredOptimizer(model, LR, DAMPING, "ekfac_ra", freq=2, alpha=alpha)
    (x1, y1), (x2, y2), (x3, y3) = batches(3)
    kfac = fisher(model, x1, y1, representation="kfac", variant="empirical")
    expected = {}
    for (x, y), first in (((x1, y1), True), ((x2, y2), False)):
        g = gradient(model, x, y)
        for layer in optimiser.layout.layers:
            block = kfac.blocks[layer.name]
            sa, ua, sb, ub = block.eigen
            start = torch.outer(sb, sa) if first else expected[layer.name]
            rotated = ub.T @ block.form.matrix(g[layer.span]) @ ua
            expected[layer.name] = alpha * start + (1 - alpha) * len(x) * rotated.square()
        optimiser.step(x, y)
        for layer in optimiser.layout.layers:
            assert torch.allclose(optimiser.matrix.blocks[layer.name].scales, expected[layer.name], rtol=1e-9)
        kfac_now = optimiser.matrix
    gradient(model, x3, y3)
    optimiser.step(x3, y3)  # the third step recomputes the KFE (freq = 2): s* starts again
    assert optimiser.matrix is not kfac_now


def test_amortised_kfac_keeps_its_factors_between_recomputes():
    model = conv_net()
    optimiser = KroneckerFactoredOptimizer(model, LR, DAMPING, "kfac", freq=3)
    seen = []
    for x, y in batches(4):
        step(model, optimiser, x, y)
        seen.append(optimiser.matrix)
    assert seen[0] is seen[1] is seen[2] and seen[3] is not seen[0]
    assert len(optimiser.step_seconds) == 4


def test_batchnorm_is_refused_by_name():
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten(), nn.Linear(18, 3))
    with pytest.raises(ValueError, match="BatchNorm layers \\('1'\\)"):
        KroneckerFactoredOptimizer(model, LR, DAMPING, "ekfac")
