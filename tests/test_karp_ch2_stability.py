"""Karp ch. 2: the pairs (S, S′), determinism, a swap that changes nothing, the power-law fit,
mode connectivity at its endpoints, and pairs in lockstep against separate runs, BatchNorm included."""

import numpy as np
import pytest
import torch

from linearlens.analysis.karp_thesis.ch2 import (
    block_pairs,
    blocks,
    kept_groups,
    loglog_slope,
    parse_run,
    per_size_maxima,
    power_law_fit,
    run_name,
    size_groups,
    sweep_rows,
)
from linearlens.data.prepared import save_prepared
from linearlens.experiments.karp_thesis.ch2 import (
    PoolTask,
    evaluate_members,
    initial_model,
    interpolation_alphas,
    interpolation_run,
    pair_row,
    pair_run,
    pool_task,
    sample_pair,
    sweep_run,
    train_members,
    trial_seeds,
)
from linearlens.models.zoo import build_model
from linearlens.train.batches import EpochBatches
from linearlens.train.learners import SupervisedLearner
from linearlens.train.optimisers import build_optimiser
from linearlens.train.session import Session

MLP = {"name": "mlp", "in_features": 16, "hidden": [12], "out_features": 3}
SETTINGS = {"model": MLP, "layout": "flat", "loss": "cross_entropy",
            "optimiser": {"name": "sgd", "lr": 0.1, "momentum": 0.9}, "lr_drops": [20], "batch_size": 8,
            "steps": 30, "snapshots": {"early": 10, "main": 20, "late": 30}, "eval_batch": 7}


@pytest.fixture
def data(tmp_path):
    """A tiny 3-class task in the prepared-dataset format: 60 training and 20 test 4x4 images."""
    generator = np.random.default_rng(0)
    x = generator.normal(size=(80, 4, 4)).astype(np.float32)
    y = (x[:, 0, 0] > 0).astype(np.int64) + (x[:, 1, 1] > 0.5)
    path = tmp_path / "tiny.npz"
    save_prepared({"x_train": x[:60], "y_train": y[:60], "x_test": x[60:], "y_test": y[60:]}, {},
                  path, tmp_path / "tiny.json")
    return path


def test_s_and_s_prime_differ_in_exactly_one_index_which_holds_z():
    draw = sample_pair("1a", 1, 40, 3, n_train=60, n_test=20)
    s, s_prime = draw.s, draw.s_prime(60)
    assert len(np.unique(s)) == 40 and s.max() < 60  # without replacement, from the training split
    assert np.flatnonzero(s != s_prime).tolist() == [draw.position]
    assert s_prime[draw.position] == 60 + draw.z
    again = sample_pair("1a", 1, 40, 3, n_train=60, n_test=20)
    other = sample_pair("1a", 1, 40, 4, n_train=60, n_test=20)
    assert np.array_equal(again.s, s) and not np.array_equal(other.s, s)


def test_training_on_s_twice_gives_bitwise_equal_parameters(data):
    first, first_states = pair_run(data, SETTINGS, "1a", 1, [24], [0, 1], keep_sizes=[24], device="cpu")
    second, second_states = pair_run(data, SETTINGS, "1a", 1, [24], [0, 1], keep_sizes=[24], device="cpu")
    assert first.equals(second)
    for a, b in zip(first_states["sizes"][24], second_states["sizes"][24]):
        assert all(torch.equal(a[name], b[name]) for name in a)
    assert set(first.snapshot) == {"early", "main", "late"} and len(first) == 6
    assert (first.stability > 0).all() and (first.distance > 0).all()


def test_a_swap_that_changes_nothing_gives_equal_networks_and_zero_stability(data):
    task = pool_task(data, SETTINGS, "cpu")
    s = sample_pair("1a", 1, 24, 0, task.n_train, task.n_test).s

    def evaluate(learner, step):
        return pair_row(evaluate_members(learner, task, "cross_entropy", 7), 0, 1, z=0), learner.snapshot()

    records = train_members({**SETTINGS, "snapshots": {"main": 30}}, task, 1, [s, s.copy()], evaluate)
    row, (first, second) = records[30]
    assert all(torch.equal(first[name], second[name]) for name in first)
    assert row["stability"] == 0.0 and row["distance"] == 0.0


def test_the_power_law_fit_recovers_a_known_exponent():
    m = np.array([100, 200, 400, 800, 1600])
    a, b = power_law_fit(m, 3 * m ** -0.5)
    assert a == pytest.approx(3, rel=1e-6) and b == pytest.approx(-0.5, abs=1e-6)
    assert loglog_slope(m, 3 * m ** -0.5) == pytest.approx(-0.5)
    import pandas as pd
    rows = pd.DataFrame({"m": np.repeat(m, 3), "y": np.concatenate([[v, v / 2, v / 3] for v in 3 * m ** -0.5])})
    assert per_size_maxima(rows, "y").to_numpy() == pytest.approx(3 * m ** -0.5)


def test_the_alpha_grid_is_the_thesis_s_76_points_of_step_0_04():
    alphas = interpolation_alphas({"start": -1.0, "stop": 2.0, "points": 76})
    assert len(alphas) == 76 and np.allclose(np.diff(alphas), 0.04) and {0.0, 1.0} <= set(alphas.tolist())


def test_interpolation_at_alpha_one_and_zero_reproduces_the_pair_s_accuracies(data, tmp_path):
    frame, states = pair_run(data, SETTINGS, "1a", 1, [24, 30], [0, 1, 2], keep_sizes=[24], device="cpu")
    torch.save(states, tmp_path / "states.pt")
    curves = interpolation_run(data, SETTINGS, "1a", 1, [tmp_path / "states.pt"],
                               {"start": -1.0, "stop": 2.0, "points": 76, "pairs": 2, "seed": 0}, device="cpu")
    main = frame[(frame.snapshot == "main") & (frame.m == 24)].set_index("pair")
    assert set(states["sizes"]) == {24} and set(curves.m) == {24}  # only the kept size
    assert curves.pair.nunique() == 2 and len(curves) == 2 * 76
    for pair, curve in curves.groupby("pair"):
        at = curve.set_index("alpha")
        assert at.loc[1.0, "test_accuracy"] == pytest.approx(1 - main.loc[pair, "test_error"])
        assert at.loc[0.0, "test_accuracy"] == pytest.approx(1 - main.loc[pair, "test_error_prime"])
        assert at.loc[1.0, "train_accuracy"] == pytest.approx(1 - main.loc[pair, "train_error"])


def _separate_run(settings, task: PoolTask, trial: int, examples: np.ndarray) -> dict:
    """One member trained alone: its own SGD on its own training set, the trial's init and order."""
    model = initial_model(settings, trial, "cpu")
    indices = torch.as_tensor(examples)
    loss = torch.nn.functional.cross_entropy
    learner = SupervisedLearner(model, build_optimiser(settings["optimiser"], model.parameters()), loss,
                                task.x[indices], task.y[indices],
                                learning_rate=lambda step: 0.1 ** sum(step - 1 >= d for d in settings["lr_drops"]))
    Session(learner, EpochBatches(len(examples), settings["batch_size"], trial_seeds(trial)[1]),
            settings["steps"]).run()
    return model.state_dict()


@pytest.mark.parametrize("model", [MLP, {"name": "resnet20", "num_classes": 3, "in_channels": 1, "width": 2}],
                         ids=["mlp", "resnet20-batchnorm"])
def test_the_pair_in_lockstep_equals_two_separate_runs(data, model, float64):
    """In float64, so that the comparison is not lost in float32 rounding of the batched against the
    single convolutions. BatchNorm on 1x1 maps with momentum amplifies rounding over the 30 steps, to
    a few 1e-9 relative on some machines and thread counts; swapping z in moves parameters by ~1e-2."""
    settings = {**SETTINGS, "model": model, "layout": "flat" if model["name"] == "mlp" else "as_is",
                "snapshots": {"main": 30}}
    task = pool_task(data, settings, "cpu")
    x = task.x.double() if model["name"] == "mlp" else task.x.double().unsqueeze(1)  # a channel axis
    task = PoolTask(x, task.y, task.n_train)
    draw = sample_pair("2b", 2, 24, 0, task.n_train, task.n_test)
    members = [draw.s, draw.s_prime(task.n_train)]
    lockstep = train_members(settings, task, 2, members, lambda learner, step: [
        learner.member_state(k) for k in range(learner.members)])[30]
    for kept, examples in zip(lockstep, members):
        alone = _separate_run(settings, task, 2, examples)
        for name, value in alone.items():
            torch.testing.assert_close(kept[name], value, rtol=1e-7, atol=1e-9)


def test_the_sweep_trains_the_same_s_as_the_pairs(data, tmp_path):
    """Fig A.1 reads A(S) of the pair runs where it can: the sweep's own runs train the same S."""
    pairs, _ = pair_run(data, SETTINGS, "1a", 1, [24], [0, 1, 2], device="cpu")
    alone = sweep_run(data, SETTINGS, "1a", 1, [24, 12], 2, device="cpu")
    pairs.to_csv(tmp_path / "pairs.csv", index=False)
    alone[alone.m == 12].to_csv(tmp_path / "sweep.csv", index=False)
    merged = sweep_rows({"sweep": [tmp_path / "sweep.csv"], "pairs": [tmp_path / "pairs.csv"]}, samples=2)
    assert sorted(merged.m.unique()) == [12, 24] and set(merged["sample"]) == {0, 1} and len(merged) == 12
    from_pairs = merged[merged.m == 24].set_index(["sample", "snapshot"])
    for row in alone[alone.m == 24].itertuples():
        assert row.train_loss == pytest.approx(from_pairs.loc[(row.sample, row.snapshot), "train_loss"], rel=1e-5)
        assert row.norm == pytest.approx(from_pairs.loc[(row.sample, row.snapshot), "norm"], rel=1e-6)


def test_a_size_larger_than_the_training_split_is_refused(data):
    with pytest.raises(ValueError, match="cannot be drawn from 60"):
        pair_run(data, SETTINGS, "1a", 1, [61], [0], device="cpu")


def test_the_logistic_regression_starts_from_zeros_and_fits_one_logit(data):
    settings = {**SETTINGS, "model": {"name": "mlp", "in_features": 16, "hidden": [], "out_features": 1},
                "loss": "logistic", "init": "zeros", "optimiser": {"name": "sgd", "lr": 0.1}, "lr_drops": []}
    model = initial_model(settings, 1, "cpu")
    assert all(not p.detach().any() for p in model.parameters())
    assert build_model(settings["model"])  # the zoo builds it
    binary = data.parent / "binary.npz"
    arrays = dict(np.load(data))
    arrays["y_train"], arrays["y_test"] = arrays["y_train"] % 2, arrays["y_test"] % 2
    save_prepared(arrays, {}, binary, data.parent / "binary.json")
    frame, _ = pair_run(binary, settings, "lr", 1, [30], [0], device="cpu")
    main = frame[frame.snapshot == "main"].iloc[0]
    assert 0 <= main.train_error <= 1 and main.train_loss < np.log(2)  # below the zero model's loss


def test_sizes_are_grouped_into_jobs_and_named_in_their_paths():
    settings = {"sizes": [100, 200, 400, 800, 1600], "sizes_per_job": 2, "keep_states": [100, 1600],
                "pairs": 5, "pairs_per_job": 2}
    assert size_groups(settings) == [(100, 200), (400, 800), (1600,)]
    assert size_groups({**settings, "sizes_per_job": 1})[0] == (100,)  # one job per size, the default
    assert kept_groups(settings) == [(100, 200), (1600,)]
    assert run_name("1a", 2, (100, 200)) == "1a/trial2/m100-200" and run_name("1a", 2, (1600,)) == "1a/trial2/m1600"
    assert parse_run("1a/trial2/m100-200") == ("1a", 2, (100, 200))
    assert [block_pairs(settings, b) for b in range(blocks(settings))] == [[0, 1], [2, 3], [4]]
