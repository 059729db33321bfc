"""α-scaled training and the linearity metrics (George thesis §5.2)."""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from linearlens.linearize.alpha_scaling import AlphaScaled, alpha_learning_rate, alpha_scaled_optimiser
from linearlens.linearize.linearity import LinearityProbe, relu_pattern
from linearlens.models.mlp import mlp
from linearlens.train.probes import Group, group_metrics


def small_mlp(seed=0, hidden=(16, 16), out=3):
    torch.manual_seed(seed)
    return mlp(5, list(hidden), out).double()


def data(n=32, seed=1, out=3):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(n, 5, generator=generator, dtype=torch.float64), torch.randint(0, out, (n,), generator=generator)


def test_alpha_one_with_initial_output_is_plain_sgd_step_for_step():
    x, y = data()
    plain = small_mlp()
    scaled = AlphaScaled(copy.deepcopy(plain), alpha=1.0, keep_initial_output=True)
    plain_opt = torch.optim.SGD(plain.parameters(), lr=0.1, momentum=0.9)
    scaled_opt = alpha_scaled_optimiser(scaled, {"name": "sgd", "lr": 0.1, "momentum": 0.9})
    for step in range(20):
        batch = torch.arange(step % 4 * 8, step % 4 * 8 + 8)
        for model, opt in ((plain, plain_opt), (scaled, scaled_opt)):
            opt.zero_grad()
            F.cross_entropy(model(x[batch]), y[batch]).backward()
            opt.step()
    for a, b in zip(plain.parameters(), scaled.network.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


def test_centred_model_starts_from_the_zero_function():
    x, _ = data()
    scaled = AlphaScaled(small_mlp(), alpha=7.0)
    assert torch.equal(scaled(x), torch.zeros(len(x), 3, dtype=torch.float64))


def test_one_step_moves_parameters_by_lr_over_alpha_squared_times_the_gradient():
    x, y = data()
    alpha, lr = 10.0, 0.5
    scaled = AlphaScaled(small_mlp(), alpha=alpha)
    before = [p.detach().clone() for p in scaled.network.parameters()]
    loss = F.cross_entropy(scaled(x), y)
    gradients = torch.autograd.grad(loss, list(scaled.network.parameters()))
    optimiser = alpha_scaled_optimiser(scaled, {"name": "sgd", "lr": lr})
    optimiser.zero_grad()
    F.cross_entropy(scaled(x), y).backward()
    optimiser.step()
    assert alpha_learning_rate(lr, alpha) == lr / alpha**2
    for old, new, gradient in zip(before, scaled.network.parameters(), gradients):
        torch.testing.assert_close(new - old, -lr / alpha**2 * gradient)
    # θ₀ does not move
    for initial, old in zip(scaled.initial.parameters(), before):
        assert torch.equal(initial, old)


def test_function_steps_are_of_order_one_in_alpha():
    """The first-order change of f^α in one step does not depend on α (it is −η K ∇ℓ)."""
    x, y = data()
    changes = []
    for alpha in (10.0, 1000.0):
        scaled = AlphaScaled(small_mlp(), alpha=alpha)
        optimiser = alpha_scaled_optimiser(scaled, {"name": "sgd", "lr": 0.1})
        F.cross_entropy(scaled(x), y).backward()
        optimiser.step()
        changes.append(scaled(x).detach())
    torch.testing.assert_close(changes[0], changes[1], rtol=0.05, atol=1e-4)


def linearity_after_full_batch_sgd(alpha: float, lr: float, steps: int) -> tuple[dict, Tensor]:
    """The linearity metrics of a 2x32 MLP after ``steps`` full-batch SGD steps at scale α, and
    its final training loss."""
    x, y = data(n=64)
    scaled = AlphaScaled(small_mlp(hidden=(32, 32)), alpha=alpha)
    probe = LinearityProbe(scaled.network, x[:16])
    optimiser = alpha_scaled_optimiser(scaled, {"name": "sgd", "lr": lr, "momentum": 0.9})
    for _ in range(steps):
        optimiser.zero_grad()
        F.cross_entropy(scaled(x), y).backward()
        optimiser.step()
    return probe(None), F.cross_entropy(scaled(x), y).detach()


def test_large_alpha_stays_linear_over_a_short_run():
    metrics, loss = linearity_after_full_batch_sgd(alpha=100.0, lr=0.3, steps=50)
    assert loss < 0.7 * torch.log(torch.tensor(3.0))  # it did train
    assert metrics["sign_similarity"] >= 0.99
    assert metrics["ntk_alignment"] >= 0.99 and metrics["representation_alignment"] >= 0.99


def test_alpha_one_moves_away_from_linear():
    metrics, _ = linearity_after_full_batch_sgd(alpha=1.0, lr=1.0, steps=100)
    assert metrics["ntk_alignment"] < 0.95 and metrics["sign_similarity"] < 0.99


def test_linearity_probe_measures_every_kth_evaluation_and_starts_at_one():
    x, _ = data()
    probe = LinearityProbe(small_mlp(), x, every=3)
    rows = [probe(None) for _ in range(7)]
    assert [bool(row) for row in rows] == [True, False, False, True, False, False, True]
    assert rows[0] == pytest.approx({"sign_similarity": 1.0, "ntk_alignment": 1.0, "representation_alignment": 1.0})
    restored = LinearityProbe(small_mlp(seed=5), x, every=3)
    restored.load_state_dict(probe.state_dict())
    assert restored.calls == 7 and torch.equal(restored.initial["pattern"], probe.initial["pattern"])


def test_a_relu_module_called_twice_counts_twice():
    class Reused(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.relu, self.out = nn.Linear(5, 4), nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2)

        def forward(self, x):
            return self.out(self.relu(self.b(self.relu(self.a(x)))))

    x, _ = data(n=6)
    assert relu_pattern(Reused().double(), x).numel() == 2 * 6 * 4


def test_batch_norm_is_refused_unless_frozen():
    network = nn.Sequential(nn.Linear(5, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2)).double()
    with pytest.raises(ValueError, match="BatchNorm"):
        AlphaScaled(network, alpha=2.0)
    scaled = AlphaScaled(network, alpha=2.0, frozen_batch_norm=True).train()
    x, y = data(out=2)
    stats = network[1].running_mean.clone()
    F.cross_entropy(scaled(x), y).backward()
    assert not network[1].training and torch.equal(network[1].running_mean, stats)
    assert network[1].weight.grad is not None


def test_group_metrics_match_a_direct_computation():
    x, y = data()
    model = small_mlp()
    row = group_metrics(model, [Group("all", x, y), Group("head", x[:5], y[:5])])
    with torch.no_grad():
        logits = model(x)
    assert row["all_loss"] == pytest.approx(float(F.cross_entropy(logits, y)))
    assert row["head_accuracy"] == pytest.approx(float((logits[:5].argmax(1) == y[:5]).double().mean()))
    binary = small_mlp(out=1)
    labels = (y > 0).long()
    row = group_metrics(binary, [Group("b", x, labels)])
    with torch.no_grad():
        logit = binary(x).reshape(-1)
    assert row["b_loss"] == pytest.approx(float(F.binary_cross_entropy_with_logits(logit, labels.double())))
    assert row["b_accuracy"] == pytest.approx(float(((logit > 0).long() == labels).double().mean()))
