"""Iterative linearisation: the linearised model and its gradient at the base point, K = 1 as
ordinary training, every K alike for a model linear in its parameters, K = ∞ as kernel gradient
descent with the empirical NTK, the re-linearisation schedule across epochs and resumption,
BatchNorm, damped Gauss-Newton, and the figures' helpers. Identities in float64."""

import math
import sys

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from linearlens.data.prepared import save_prepared
from linearlens.data.synthetic import quintic_regression
from linearlens.data.transforms import balanced_order
from linearlens.experiments.iterative_linearisation import (
    ILRun,
    classification_task,
    il_run,
    pooled_features,
    probe_run,
)
from linearlens.figures.iterative_linearisation import filter_image
from linearlens.kernels.ntk import empirical_ntk
from linearlens.linearize.gauss_newton import damped_gauss_newton_direction
from linearlens.linearize.iterative import (
    NEVER,
    LinearisedTraining,
    NetworkTraining,
    batchnorm_statistics,
    linearised_outputs,
    train_iteratively,
)
from linearlens.models.lenet import lenet
from linearlens.models.mlp import mlp
from linearlens.models.resnet import resnet
from linearlens.models.zoo import build_model
from linearlens.train.augment import random_crop
from linearlens.train.batches import EpochBatches
from linearlens.train.runtime import default_dtype, save_checkpoint

torch.set_num_threads(1)


def tiny_lenet():
    torch.manual_seed(0)
    return lenet(1, 16, num_classes=3, dims=1, channels=3, padding=2, hidden=(8, 6), init="kaiming")


def tiny_resnet(batch_norm=True):
    torch.manual_seed(0)
    return resnet((3, 4), (1, 1), num_classes=3, in_channels=1, shortcut="B", batch_norm=batch_norm, dims=1)


def signals(n=24, classes=3, seed=1):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(n, 1, 16, generator=generator), torch.randint(0, classes, (n,), generator=generator)


def max_difference(a: dict, b: dict) -> float:
    return max(float((a[name] - b[name]).abs().max()) for name in a)


@pytest.mark.parametrize("build", [tiny_lenet, tiny_resnet])
def test_at_the_base_point_the_linearised_model_and_its_gradient_are_the_networks(build):
    with default_dtype("float64"):
        model = build().eval()
        x, y = signals()
        base = {n: p.detach() for n, p in model.named_parameters()}
        zero = {n: torch.zeros_like(p, requires_grad=True) for n, p in base.items()}
        buffers = dict(model.named_buffers())
        linearised = linearised_outputs(model, base, zero, x, buffers)
        assert torch.equal(linearised, model(x))
        gradient = torch.autograd.grad(F.cross_entropy(linearised, y), list(zero.values()))
        reference = torch.func.grad(lambda p: F.cross_entropy(functional_call(model, (p, buffers), (x,)), y))(base)
        for g, name in zip(gradient, base):
            assert torch.allclose(g, reference[name], rtol=0, atol=1e-12)


def test_the_linearisation_is_affine_in_delta_and_second_order_accurate_for_a_smooth_network():
    with default_dtype("float64"):
        torch.manual_seed(0)
        model = mlp(5, [7, 7], 3, activation="tanh")
        x = torch.randn(6, 5)
        base = {n: p.detach() for n, p in model.named_parameters()}
        direction = {n: torch.randn_like(p) for n, p in base.items()}
        other = {n: torch.randn_like(p) for n, p in base.items()}

        def lin(delta):
            return linearised_outputs(model, base, delta, x)

        both = {n: direction[n] + other[n] for n in base}
        zero = {n: torch.zeros_like(p) for n, p in base.items()}
        assert torch.allclose(lin(both) - lin(other), lin(direction) - lin(zero), atol=1e-12)
        errors = []
        for scale in (1e-2, 1e-3):
            moved = {n: base[n] + scale * direction[n] for n in base}
            errors.append(float((lin({n: scale * d for n, d in direction.items()})
                                 - functional_call(model, moved, (x,))).abs().max()))
        assert 50 < errors[0] / errors[1] < 200  # O(‖δ‖²): a tenth of δ, a hundredth of the error


@pytest.mark.parametrize("optimiser", [{"name": "sgd", "lr": 0.1}, {"name": "sgd", "lr": 0.05, "momentum": 0.9},
                                       {"name": "adam", "lr": 0.01}])
def test_k1_reproduces_ordinary_training_step_for_step(optimiser, device):
    with default_dtype("float64"):
        x, y = (t.to(device) for t in signals(30))
        batches = EpochBatches(30, 8, seed=0)  # 4 steps per epoch, the last batch smaller
        ordinary = NetworkTraining(tiny_lenet().to(device), optimiser)
        linearised = LinearisedTraining(tiny_lenet().to(device), optimiser, 1)
        for _ in range(12):
            train_iteratively(ordinary, x, y, batches, 1)
            train_iteratively(linearised, x, y, batches, 1)
            assert max_difference(ordinary.parameters_now(), linearised.parameters_now()) <= 1e-12
        assert linearised.relinearisations == 12


def test_for_a_model_linear_in_its_parameters_every_k_takes_the_same_steps():
    with default_dtype("float64"):
        x, y = signals(20)
        batches = EpochBatches(20, 6, seed=3)
        trajectories = {}
        for period in (1, 3, 7, NEVER):
            torch.manual_seed(0)
            model = nn.Sequential(nn.Flatten(), nn.Linear(16, 3))
            training = LinearisedTraining(model, {"name": "sgd", "lr": 0.2, "momentum": 0.5}, period)
            trajectories[period] = []
            for _ in range(15):
                train_iteratively(training, x, y, batches, 1)
                trajectories[period].append(training.parameters_now())
        for period in (3, 7, NEVER):
            for ours, reference in zip(trajectories[period], trajectories[1]):
                assert max_difference(ours, reference) <= 1e-12


def test_k_infinity_is_gradient_descent_with_the_empirical_ntk_at_initialisation(device):
    """Weight-space K = ∞ against function-space kernel gradient descent on the training set
    and on held-out points, Θ̂₀ from linearlens.kernels (full (n, c, n, c) blocks)."""
    with default_dtype("float64"):
        torch.manual_seed(0)
        model = mlp(4, [10], 3, activation="tanh").to(device)
        x, x_held = torch.randn(16, 4, device=device), torch.randn(5, 4, device=device)
        y = torch.arange(16, device=device) % 3
        lr, steps = 0.5, 20
        training = LinearisedTraining(model, {"name": "sgd", "lr": lr}, NEVER)
        train_iteratively(training, x, y, EpochBatches(16, None, 0), steps)
        gram = empirical_ntk(model, x).reshape(48, 48)
        cross = empirical_ntk(model, x_held, x).reshape(15, 48)
        with torch.no_grad():
            f, f_held = model(x), model(x_held)
        for _ in range(steps):
            residual = (torch.softmax(f, 1) - F.one_hot(y, 3)) / len(x)  # ∂(mean CE)/∂f
            f = f - lr * (gram @ residual.reshape(-1)).reshape(16, 3)
            f_held = f_held - lr * (cross @ residual.reshape(-1)).reshape(5, 3)
        assert torch.allclose(training.linearised_logits(x), f, atol=1e-10)
        assert torch.allclose(training.linearised_logits(x_held), f_held, atol=1e-10)
        assert training.relinearisations == 0


def test_batchnorm_linearisation_is_per_example_and_leaves_the_buffers_alone():
    with default_dtype("float64"):
        model = tiny_resnet()
        x, y = signals(32)
        before = {n: b.clone() for n, b in model.named_buffers()}
        training = LinearisedTraining(model, {"name": "sgd", "lr": 0.1}, 4,
                                      statistics_inputs=lambda: [x[:16], x[16:]])
        train_iteratively(training, x, y, EpochBatches(32, 8, 0), 6)
        for name, buffer in model.named_buffers():
            assert torch.equal(buffer, before[name])
        together = training.linearised_logits(x[:5])
        one_by_one = torch.cat([training.linearised_logits(x[i:i + 1]) for i in range(5)])
        assert torch.allclose(together, one_by_one, atol=1e-12)
        # The statistics of a linearisation point: the exact average of the batch statistics.
        params = training.parameters_now()
        statistics = batchnorm_statistics(model, params, [x[:16], x[16:]])
        # The network at θ_t (evaluated, and checkpointed) runs on the statistics at θ_t.
        assert max_difference(training.network_buffers(), statistics) == 0
        stem = model[0]
        halves = [F.conv1d(part, params["0.weight"], padding=1) for part in (x[:16], x[16:])]
        expected_mean = torch.stack([h.mean((0, 2)) for h in halves]).mean(0)
        assert stem.padding == (1,) and torch.allclose(statistics["1.running_mean"], expected_mean, atol=1e-12)
        training.relinearise()
        assert torch.allclose(training.network_logits(x), training.linearised_logits(x), atol=1e-12)


def test_linearised_training_refuses_weight_decay_and_non_integer_periods():
    with pytest.raises(ValueError, match="weight decay"):
        LinearisedTraining(tiny_lenet(), {"name": "sgd", "lr": 0.1, "weight_decay": 1e-4}, 5)
    with pytest.raises(ValueError, match="positive integer"):
        LinearisedTraining(tiny_lenet(), {"name": "sgd", "lr": 0.1}, 2.5)
    with pytest.raises(ValueError, match="statistics_inputs"):
        LinearisedTraining(tiny_resnet(), {"name": "sgd", "lr": 0.1}, 5)


def test_chunked_steps_take_the_batch_gradient_and_are_refused_under_train_mode_batchnorm():
    with default_dtype("float64"):
        x, y = signals(12)
        whole, chunked = NetworkTraining(tiny_lenet(), {"name": "sgd", "lr": 0.1}), NetworkTraining(
            tiny_lenet(), {"name": "sgd", "lr": 0.1})
        assert float(whole.step(x, y)) == pytest.approx(float(chunked.step(x, y, chunk_size=5)), rel=1e-12)
        assert max_difference(whole.parameters_now(), chunked.parameters_now()) <= 1e-12
        with pytest.raises(ValueError, match="BatchNorm"):
            NetworkTraining(tiny_resnet(), {"name": "sgd", "lr": 0.1}).step(x, y, chunk_size=5)
        NetworkTraining(tiny_resnet(), {"name": "sgd", "lr": 0.1}).step(x, y)  # whole batches are fine


def test_float64_master_weights_keep_updates_that_float32_rounds_away():
    torch.manual_seed(0)
    x, y = torch.randn(8, 4), torch.arange(8) % 2
    results = {}
    for master in ("float32", "float64"):
        torch.manual_seed(1)
        model = nn.Linear(4, 2)
        with torch.no_grad():
            model.bias.fill_(1000.0)  # |θ| large: an update of 1e-6 is below float32's resolution there
        training = NetworkTraining(model, {"name": "sgd", "lr": 1e-6},
                                   master_dtype=torch.float64 if master == "float64" else None)
        train_iteratively(training, x, y, EpochBatches(8, None, 0), 100)
        results[master] = training.optimised["bias"].detach().double() - 1000.0
    assert results["float32"].abs().max() == 0  # every step rounded away
    assert results["float64"].abs().max() > 1e-6  # the master copy moved


def write_task(path, n_train=100, n_test=40, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n_train + n_test)
    x = rng.normal(size=(n_train + n_test, 16)).astype(np.float32) + labels[:, None] * 0.5
    arrays = {"x_train": x[:n_train], "y_train": labels[:n_train], "x_test": x[n_train:], "y_test": labels[n_train:]}
    save_prepared(arrays, {"source_description": "test", "transforms": []}, path, path.with_suffix(".json"))
    return path


RUN = {"model": {"name": "lenet", "channels": 3, "padding": 2, "hidden": [8, 6], "init": "kaiming"},
       "optimiser": {"name": "sgd", "lr": 0.05, "momentum": 0.9}, "K": 7, "batch_size": 5, "steps": 50,
       "eval_every": 10, "eval_around_relinearisation": True, "train_eval_size": 30, "device": "cpu",
       "augmentation": {"crop_padding": 2}, "checkpoint_every": 25}


def test_relinearisation_falls_every_k_steps_across_epochs_and_survives_resumption(tmp_path):
    data = write_task(tmp_path / "task.npz")
    whole = il_run(data, RUN, seed=0)
    assert whole.batches.steps_per_epoch == 20  # K = 7 falls mid-epoch
    after = whole.frame().query("point == 'after_relinearisation'")
    assert after["step"].tolist() == list(range(7, 50, 7))
    assert after["relinearisations"].tolist() == list(range(1, 8))
    # At a re-linearisation the network and the model being trained are the same function.
    assert (after["test_loss_network"] - after["test_loss_linearised"]).abs().max() <= 1e-6

    state = tmp_path / "state.pt"
    assert il_run(data, RUN, seed=0, state_path=state, step_budget=23) is None and state.exists()
    resumed = il_run(data, RUN, seed=0, state_path=state)
    assert not state.exists()  # a finished run leaves no state behind
    columns = [c for c in whole.frame().columns if c != "seconds"]
    pd.testing.assert_frame_equal(resumed.frame()[columns], whole.frame()[columns])
    assert max_difference(resumed.training.parameters_now(), whole.training.parameters_now()) == 0
    assert sorted(resumed.result.snapshots) == [0, 25, 50]
    # Another run's state (here another seed) is not resumed.
    il_run(data, RUN, seed=1, state_path=state, step_budget=5)
    assert il_run(data, RUN, seed=0, state_path=state).frame()["step"].max() == 50


def test_a_diverging_run_stops_and_says_so(tmp_path):
    data = write_task(tmp_path / "task.npz")
    run = {**RUN, "optimiser": {"name": "sgd", "lr": 1e4}, "K": 5, "steps": 200, "augmentation": None}
    frame = il_run(data, run, seed=0).frame()
    assert frame["diverged"].all() and frame["step"].max() < 200


def test_training_stops_once_the_training_set_is_fitted(tmp_path):
    data = write_task(tmp_path / "task.npz", n_train=30)
    run = {**RUN, "K": 1, "optimiser": {"name": "adam", "lr": 0.01}, "steps": 2000, "stop_at_train_accuracy": 0.999,
           "train_eval_size": None, "augmentation": None, "checkpoint_every": None}
    frame = ILRun(data, run, 0)
    frame.train()
    records = frame.frame().query("point == 'scheduled'")
    assert records["step"].max() < 2000 and (records["train_accuracy_network"].tail(2) >= 0.999).all()


def test_damped_gauss_newton_forms_and_limits():
    with default_dtype("float64"):
        torch.manual_seed(0)
        jacobian, residuals = torch.randn(6, 20), torch.randn(6)
        for damping in (1e-3, 1.0, 30.0):
            parameter_space = -torch.linalg.solve(jacobian.T @ jacobian + damping * torch.eye(20), jacobian.T @ residuals)
            assert torch.allclose(damped_gauss_newton_direction(jacobian, residuals, damping), parameter_space, atol=1e-10)
        assert torch.allclose(damped_gauss_newton_direction(jacobian, residuals, 0.0),
                              -torch.linalg.pinv(jacobian) @ residuals, atol=1e-10)
        huge = 1e9
        assert torch.allclose(huge * damped_gauss_newton_direction(jacobian, residuals, huge), -jacobian.T @ residuals,
                              rtol=1e-6)


def test_quintic_task_is_the_papers():
    data = quintic_regression()
    assert data["x_train"].shape == (20, 1) and data["x_test"].shape == (1000, 1)
    assert data["y_train"][0] == pytest.approx(-9) and data["y_train"][-1] == pytest.approx(7)
    x = data["x_test"][:, 0]
    assert np.allclose(data["y_test"], x ** 5 / 32 - x ** 3 / 2 + 2 * x - 1)


def test_filter_images_map_the_papers_range():
    change = np.zeros((3, 5, 5))
    change[0, 0, 0], change[1, 0, 0], change[2, 0, 0] = -0.5, 0.7, 0.2
    image = filter_image(change)
    assert image.shape == (5, 5, 3)
    assert image[0, 0].tolist() == pytest.approx([0.0, 1.0, 0.7]) and image[1, 1].tolist() == [0.5] * 3
    assert filter_image(np.zeros((1, 5))).shape == (1, 5)


def test_probes_of_a_runs_checkpoints_fit_in_torch_as_scikit_learn_would(tmp_path, monkeypatch):
    """The probes fit on the run's device without scikit-learn (at paper scale its CPU fits of
    50,000 × 9,800 features outlasted the run), with scikit-learn's test accuracy."""
    data = write_task(tmp_path / "task.npz")
    run = il_run(data, {**RUN, "K": 10}, seed=0)
    save_checkpoint(tmp_path / "run.pt", **run.checkpoint_file())
    probe = {"layers": [1, 2], "c": 1.0, "max_iter": 1000}
    with monkeypatch.context() as blocked:
        blocked.setitem(sys.modules, "sklearn", None)  # importing it now raises ImportError
        frame = probe_run(data, tmp_path / "run.pt", probe, "cpu")
    assert frame[["step", "layer"]].values.tolist() == [[0, 1], [0, 2], [25, 1], [25, 2], [50, 1], [50, 2]]
    assert (frame["probe_gradient"] <= 1e-4).all() and (frame["probe_iterations"] < 1000).all()  # converged

    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    task = classification_task(data, None, 0, torch.device("cpu"))
    model = build_model(run.model_spec)
    for row in frame.itertuples():
        state = run.result.snapshots[row.step]
        train, test = (pooled_features(model, state, task[x], row.layer).numpy() for x in ("x_train", "x_test"))
        reference = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000)).fit(train, task["y_train"])
        assert abs(row.probe_accuracy - reference.score(test, task["y_test"])) <= 1 / 40 + 1e-12  # one example


def test_nested_class_balanced_orders_and_seeded_batches():
    y = np.repeat(np.arange(4), [30, 30, 30, 10])
    order = balanced_order(y, seed=0)
    assert sorted(order.tolist()) == list(range(100))
    assert np.bincount(y[order[:40]]).tolist() == [10, 10, 10, 10]
    batches = EpochBatches(10, 4, seed=0)
    epoch = [batches(step) for step in (1, 2, 3)]
    assert sorted(torch.cat(epoch).tolist()) == list(range(10)) and len(epoch[2]) == 2
    assert torch.equal(EpochBatches(10, 4, seed=0)(5), batches(5))  # any step, in any order


def test_random_crop_of_signals_is_a_zero_padded_shift():
    x = torch.arange(1, 9, dtype=torch.float64).view(1, 1, 8).repeat(50, 1, 1)
    shifted = random_crop(x, 2, torch.Generator().manual_seed(0))
    for row in shifted[:, 0]:
        kept = row[row != 0]
        assert len(kept) >= 6 and torch.equal(kept, torch.arange(kept[0], kept[0] + len(kept), dtype=torch.float64))
    assert math.isclose(float((shifted == x).all(dim=2).double().mean()), 0.2, abs_tol=0.15)
