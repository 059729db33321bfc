"""The telescoping model and the smoother (Jeffares et al. 2024), float64: exact for models
linear in their parameters under every optimiser the smoother mirrors, second-order close for
networks, and the effective parameters of known smoothers."""

import pytest
import torch
from torch import nn

from linearlens.kernels.ntk import empirical_ntk, ntk_by_jacobian
from linearlens.linearize.smoother import LabelJacobianSmoother, SGDKernelSmoother, effective_parameters, smoother_for
from linearlens.linearize.telescoping import TelescopingTracker
from linearlens.models.mlp import mlp
from linearlens.models.polynomial import polynomial_net
from linearlens.parameters import ParameterLayout
from linearlens.train.batches import GeneratorBatches
from linearlens.train.learners import SupervisedLearner
from linearlens.train.losses import squared_loss_of
from linearlens.train.optimisers import EMAMomentumSGD, build_optimiser
from linearlens.train.runtime import default_dtype
from linearlens.train.schedules import Warmup
from linearlens.train.session import Checkpoint, Session


@pytest.fixture(autouse=True)
def float64():
    with default_dtype("float64"):
        yield


def data(n=24, m=10, d=5, seed=0, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n + m, d, generator=g)
    y = torch.sin(x[:, 0]) + 0.3 * torch.randn(n + m, generator=g)
    return x[:n].to(device), y[:n].to(device), x[n:].to(device)


def random_features(d=5, k=12):
    """f(x) = wᵀ tanh(Ax) + b with A frozen: linear in its trainable parameters."""
    torch.manual_seed(1)
    features = nn.Linear(d, k)
    features.requires_grad_(False)
    return nn.Sequential(features, nn.Tanh(), nn.Linear(k, 1))


OPTIMISERS = {
    "sgd": {"name": "sgd", "lr": 0.05},
    "heavy_ball": {"name": "sgd", "lr": 0.02, "momentum": 0.9},
    "nesterov_dampened": {"name": "sgd", "lr": 0.02, "momentum": 0.8, "nesterov": True},
    "ema_momentum": {"name": "ema_sgd", "lr": 0.05, "momentum": 0.9},
    "sgd_weight_decay": {"name": "sgd", "lr": 0.05, "weight_decay": 0.1},
    "heavy_ball_weight_decay": {"name": "sgd", "lr": 0.02, "momentum": 0.9, "weight_decay": 0.05},
    "adam": {"name": "adam", "lr": 0.01, "betas": [0.9, 0.99], "weight_decay": 0.05},
    "adamw": {"name": "adamw", "lr": 0.01, "betas": [0.9, 0.99], "weight_decay": 0.1},
}


def run(model, spec, x, y, x_eval, *, steps=30, batch_size=8, loss="half_squared", smoother=LabelJacobianSmoother,
        warmup=0, product_dtype=torch.float64):
    optimizer = build_optimiser(spec, model.parameters())
    tracker = TelescopingTracker(model, x_eval)
    label_smoother = smoother(model, optimizer, x, x_eval, loss, product_dtype)
    train_steps(model, optimizer, x, y, loss=loss, steps=steps, batch_size=batch_size, seed=3,
                warmup=warmup, trackers=[tracker, label_smoother])
    return tracker, label_smoother


def train_steps(model, optimizer, x, y, *, loss, steps, batch_size, seed, warmup=0, trackers=()):
    """A training session as the telescoping runs set it up (their batch order and warm-up)."""
    learner = SupervisedLearner(model, optimizer, squared_loss_of(loss), x, y,
                                learning_rate=Warmup(warmup), trackers=trackers)
    Session(learner, GeneratorBatches(len(x), batch_size, torch.Generator().manual_seed(seed)), steps).run()


@pytest.mark.parametrize("name", OPTIMISERS)
@pytest.mark.parametrize("loss", ["half_squared", "squared"])
def test_exact_for_a_model_linear_in_its_parameters(name, loss, device):
    x, y, x_eval = data(device=device)
    model = random_features().to(device)
    tracker, smoother = run(model, OPTIMISERS[name], x, y, x_eval, loss=loss, warmup=5)
    with torch.no_grad():
        f_train, f_eval = model(x).reshape(-1), model(x_eval).reshape(-1)
    assert torch.allclose(tracker.telescoped, f_eval, rtol=0, atol=1e-12)
    assert torch.allclose(tracker.linearised(), f_eval, rtol=0, atol=1e-12)
    s_train, s_eval = smoother.predictions(y)
    assert torch.allclose(s_train, f_train, rtol=0, atol=1e-10)
    assert torch.allclose(s_eval, f_eval, rtol=0, atol=1e-10)
    # The smoother moved: the labels matter and the constant is not the initial output alone.
    assert smoother.train_rows.abs().max() > 1e-3


def test_smoother_with_the_wrong_loss_scale_is_not_exact():
    """The check above can fail: mirroring ½-squared while training on MSE is off by 2× per step."""
    x, y, x_eval = data()
    model = random_features()
    optimizer = build_optimiser(OPTIMISERS["sgd"], model.parameters())
    smoother = LabelJacobianSmoother(model, optimizer, x, x_eval, "half_squared")
    train_steps(model, optimizer, x, y, loss="squared", steps=20, batch_size=8, seed=3, trackers=[smoother])
    with torch.no_grad():
        assert (smoother.predictions(y)[0] - model(x).reshape(-1)).abs().max() > 1e-3


def test_kernel_smoother_equals_the_label_jacobian_smoother_for_plain_sgd(device):
    x, y, x_eval = data(device=device)
    spec = {"name": "sgd", "lr": 0.1}
    torch.manual_seed(0)
    first = mlp(5, [16], 1, activation="tanh")
    second = mlp(5, [16], 1, activation="tanh")
    second.load_state_dict(first.state_dict())
    first, second = first.to(device), second.to(device)
    _, jacobian_route = run(first, spec, x, y, x_eval, warmup=4)
    _, kernel_route = run(second, spec, x, y, x_eval, smoother=SGDKernelSmoother, warmup=4)
    assert torch.allclose(jacobian_route.rows, kernel_route.rows, rtol=0, atol=1e-12)
    assert torch.allclose(jacobian_route.constants, kernel_route.constants, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["sgd", "heavy_ball", "adamw"])
def test_float32_products_keep_the_smoother_to_float32_rounding(name):
    """Per-step products in float32 with float64 accumulators: the rows and constants stay within
    float32 rounding of the all-float64 smoother (and of the network, for a linear model)."""
    x, y, x_eval = data()
    results = []
    for dtype in (torch.float64, torch.float32):
        model = random_features()
        route = SGDKernelSmoother if name == "sgd" else LabelJacobianSmoother
        results.append(run(model, OPTIMISERS[name], x, y, x_eval, smoother=route, product_dtype=dtype)[1])
        with torch.no_grad():
            f_train = model(x).reshape(-1)
    exact, rounded = results
    scale = exact.rows.abs().max()
    assert 0 < (exact.rows - rounded.rows).abs().max() < 1e-5 * scale
    assert (exact.constants - rounded.constants).abs().max() < 1e-5 * exact.constants.abs().max()
    assert torch.allclose(rounded.predictions(y)[0], f_train, rtol=0, atol=1e-5)


def test_kernel_smoother_refuses_momentum():
    x, _, x_eval = data()
    model = mlp(5, [4], 1)
    with pytest.raises(ValueError, match="plain SGD"):
        SGDKernelSmoother(model, build_optimiser(OPTIMISERS["heavy_ball"], model.parameters()), x, x_eval,
                          "half_squared")


class ClippedSGD(torch.optim.SGD):
    """SGD by type, but not by update: the smoother cannot see what a subclass changes."""

    def step(self, closure=None):
        for p in self.param_groups[0]["params"]:
            if p.grad is not None:
                p.grad.clamp_(-0.01, 0.01)
        return super().step(closure)


# Each optimiser with the words its refusal must name: the class and, where the class is
# mirrored, the option that is not.
UNMIRRORED = {
    "rmsprop": (lambda params: torch.optim.RMSprop(params, lr=0.01), ["RMSprop"]),
    "adagrad": (lambda params: torch.optim.Adagrad(params, lr=0.01), ["Adagrad"]),
    "nadam": (lambda params: torch.optim.NAdam(params, lr=0.01), ["NAdam"]),
    "radam": (lambda params: torch.optim.RAdam(params, lr=0.01), ["RAdam"]),
    "sgd_subclass": (lambda params: ClippedSGD(params, lr=0.05), ["ClippedSGD"]),
    "adam_amsgrad": (lambda params: torch.optim.Adam(params, lr=0.01, amsgrad=True), ["Adam", "amsgrad"]),
    "adamw_amsgrad": (lambda params: torch.optim.AdamW(params, lr=0.01, amsgrad=True), ["AdamW", "amsgrad"]),
    "sgd_maximize": (lambda params: torch.optim.SGD(params, lr=0.05, maximize=True), ["SGD", "maximize"]),
}


@pytest.mark.parametrize("route", [smoother_for, LabelJacobianSmoother, SGDKernelSmoother])
@pytest.mark.parametrize("name", UNMIRRORED)
def test_unmirrored_optimisers_are_refused_before_any_step(name, route):
    """Refused when the smoother is built, naming the optimiser and the option, so no training
    step is taken and mirrored wrongly (RMSprop as SGD) or cut short by a bare KeyError."""
    x, y, x_eval = data()
    model = random_features()
    initial = ParameterLayout(model).vector()
    make_optimiser, words = UNMIRRORED[name]
    optimizer = make_optimiser(model.parameters())
    with pytest.raises(ValueError) as refusal:
        smoother = route(model, optimizer, x, x_eval, "half_squared")
        train_steps(model, optimizer, x, y, loss="half_squared", steps=2, batch_size=8, seed=3, trackers=[smoother])
    assert all(word in str(refusal.value) for word in words), str(refusal.value)
    assert torch.equal(ParameterLayout(model).vector(), initial)


@pytest.mark.parametrize("name, options", [("adam", {"foreach": True}), ("adam", {"fused": True}),
                                           ("heavy_ball", {"foreach": False}), ("sgd", {"fused": True}),
                                           ("adam", {"decoupled_weight_decay": True})])
def test_options_that_keep_the_update_are_mirrored(name, options):
    """foreach and fused choose how the same update is computed; Adam's decoupled decay is AdamW's."""
    x, y, x_eval = data()
    model = random_features()
    _, smoother = run(model, {**OPTIMISERS[name], **options}, x, y, x_eval, steps=10)
    with torch.no_grad():
        assert torch.allclose(smoother.predictions(y)[0], model(x).reshape(-1), rtol=0, atol=1e-10)
    # capturable (CUDA graphs) and differentiable (a graph through the step) are accepted too.
    model = random_features()
    optimizer = torch.optim.Adam(model.parameters(), capturable=True, differentiable=True)
    LabelJacobianSmoother(model, optimizer, x, x_eval, "half_squared")


@pytest.mark.parametrize("name", ["sgd", "heavy_ball", "adamw"])
def test_telescoping_and_smoother_agree_to_second_order_in_the_step_size(name, device):
    """On a network the weight-averaging accumulator (real residuals) and the smoother (telescoped
    residuals) differ at O(γ²) per step: halving γ at a fixed number of steps shrinks the gap
    about fourfold, and the telescoping error itself stays far below f^lin's."""
    x, y, x_eval = data(device=device)
    gaps = []
    # Adam's steps are about γ per coordinate whatever the gradient: it needs a smaller γ for
    # the same approximation quality (paper, Sec. 3).
    base = 0.2 if name == "adamw" else 1.0
    for scale in (base, base / 2):
        torch.manual_seed(0)
        model = mlp(5, [16, 16], 1, activation="tanh").to(device)
        spec = {**OPTIMISERS[name], "lr": OPTIMISERS[name]["lr"] * scale}
        tracker, smoother = run(model, spec, x, y, x_eval, steps=40)
        gaps.append((tracker.telescoped - smoother.predictions(y)[1]).abs().max().item())
        with torch.no_grad():
            f_eval = model(x_eval).reshape(-1)
        assert (tracker.telescoped - f_eval).abs().mean() < 0.1 * (tracker.linearised() - f_eval).abs().mean()
    assert gaps[1] > 0 and gaps[0] / gaps[1] > 3.0


def test_effective_parameters_of_known_smoothers():
    n = 12
    assert effective_parameters(torch.eye(n), n) == pytest.approx(n)
    for k in (1, 3, 4):
        rows = torch.zeros(n, n)
        for i in range(n):
            rows[i, [(i + j) % n for j in range(k)]] = 1 / k  # k nearest neighbours, equal weights
        assert effective_parameters(rows, n) == pytest.approx(n / k)
    # On test points p is scaled by n/m: 5 test points each averaging 2 training labels.
    assert effective_parameters(torch.full((5, n), 0.0).index_fill_(1, torch.tensor([0, 1]), 0.5), n) == \
        pytest.approx(n / 2)


def test_ema_momentum_follows_its_formula():
    p = nn.Parameter(torch.tensor([1.0, -2.0]))
    optimizer = EMAMomentumSGD([p], lr=0.1, momentum=0.8, weight_decay=0.5)
    theta, m = p.detach().clone(), torch.zeros(2)
    for t in range(1, 5):
        grad = torch.tensor([0.3, 0.1]) * t
        p.grad = grad.clone()
        optimizer.step()
        m = 0.8 * m + 0.2 * (grad + 0.5 * theta)
        theta = theta - 0.1 * m / (1 - 0.8 ** t)
        assert torch.allclose(p.detach(), theta, atol=1e-15)


def test_layer_wise_ntk_equals_the_closed_forms_and_autograd():
    torch.manual_seed(0)
    x = torch.randn(7, 4)
    # One hidden ReLU layer: K = Σ_j relu(h_j)relu(h_j') + (x·x' + 1) Σ_j a_j² 1{h_j>0}1{h_j'>0} + 1.
    net = mlp(4, [9], 1)
    w, b, a = net[1].weight, net[1].bias, net[3].weight[0]
    h = x @ w.T + b
    active = (h > 0).double()
    closed = torch.relu(h) @ torch.relu(h).T + (x @ x.T + 1) * ((active * a ** 2) @ active.T) + 1
    assert torch.allclose(empirical_ntk(net, x, output=0), closed.detach(), rtol=1e-12)
    assert torch.allclose(ntk_by_jacobian(net, x)[:, 0, :, 0], closed.detach(), rtol=1e-12)
    # KBGP24: K = (x·x')/n_h² Σ_j φ'(θ_j·x)φ'(θ_j·x'), φ'(h) = 1 + εh.
    poly = polynomial_net(4, 6, epsilon=0.2)
    derivative = 1 + 0.2 * (x @ poly.hidden.weight.T)
    closed = (x @ x.T) / 36 * (derivative @ derivative.T)
    assert torch.allclose(empirical_ntk(poly, x, output=0), closed.detach(), rtol=1e-12)
    assert torch.allclose(ntk_by_jacobian(poly, x)[:, 0, :, 0], closed.detach(), rtol=1e-12)


def test_polynomial_net_is_centred_at_initialisation():
    torch.manual_seed(0)
    poly = polynomial_net(4, 6, epsilon=0.5)
    x = torch.randn(3, 4)
    assert torch.equal(poly(x), torch.zeros(3, 1))
    uncentred = polynomial_net(4, 6, epsilon=0.5, centred=False)
    h = x @ uncentred.hidden.weight.T
    assert torch.allclose(uncentred(x)[:, 0], (h + 0.25 * h ** 2).mean(1))


@pytest.mark.parametrize("name", ["sgd", "adamw"])  # the kernel route, and the label Jacobian with Adam's moments
def test_trackers_resume_bit_for_bit_after_an_interruption(name, tmp_path):
    """The smoother and the telescoping accumulator are part of a saved training state: a session
    stopped after 11 steps and resumed ends where an uninterrupted one does."""
    x, y, x_eval = data()

    def session(state_path):
        torch.manual_seed(2)
        model = mlp(5, [8], 1)
        optimizer = build_optimiser(OPTIMISERS[name], model.parameters())
        trackers = [TelescopingTracker(model, x_eval), smoother_for(model, optimizer, x, x_eval, "half_squared")]
        learner = SupervisedLearner(model, optimizer, squared_loss_of("half_squared"),
                                    x, y, trackers=trackers)
        batches = GeneratorBatches(len(x), 8, torch.Generator().manual_seed(3))
        return Session(learner, batches, 25, checkpoint=Checkpoint(state_path, "key")), trackers

    whole, expected = session(tmp_path / "whole.pt")
    whole.run()
    stopped, _ = session(tmp_path / "state.pt")
    assert stopped.run(max_steps=11) is None
    resumed, trackers = session(tmp_path / "state.pt")
    resumed.run()
    assert torch.equal(trackers[0].telescoped, expected[0].telescoped)
    assert torch.equal(trackers[1].rows, expected[1].rows) and torch.equal(trackers[1].constants, expected[1].constants)
