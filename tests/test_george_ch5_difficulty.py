"""George ch. 5, Figs 5.2 and C.1-C.6: C-scores (the hold-out estimator and decile
groups), the CIFAR-10 40k/10k split, runs of every α sharing θ₀, batches and label noise, logging at
loss thresholds, and the torch-free progress analysis (monotone progress, matching, turning point)."""

import json
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
import torch

from linearlens.analysis.george_thesis.ch5 import (
    at_progress,
    cap_run,
    common_progress,
    decile_gap,
    difficulty_runs,
    later_onset,
    matched_difference,
    memorisation_onset,
    progress_curve,
    run_settings,
    turning_point,
)
from linearlens.config import load_scale
from linearlens.data import transforms
from linearlens.data.cscores import binned_cscores, holdout_cscores, rank_bins, split_scores, tracked_per_bin
from linearlens.data.prepare import prepare_dataset
from linearlens.data.source import Source
from linearlens.experiments.george_thesis.ch5 import difficulty_run, noisy_task
from linearlens.manifests.george_thesis import difficulty_claim_inputs, difficulty_figure_inputs
from linearlens.models.zoo import build_model, save_model
from linearlens.train.schedules import LossThresholds, epoch_starts, geometric_thresholds
from linearlens.train.session import Session
from linearlens.train.tasks import load_task

# --- C-scores -------------------------------------------------------------------------------------

def test_holdout_cscores_rank_a_duplicated_cluster_above_outliers():
    """Examples with many near-copies are predicted right by models that never saw
    them; isolated examples of a rare class are not."""
    rng = np.random.default_rng(0)
    cluster_a = rng.normal([-3.0, 0.0], 0.05, size=(40, 2))
    cluster_b = rng.normal([3.0, 0.0], 0.05, size=(40, 2))
    outliers = rng.uniform(-4, 4, size=(5, 2))
    x = np.concatenate([cluster_a, cluster_b, outliers])
    y = np.array([0] * 40 + [1] * 40 + [2] * 5)
    scores = holdout_cscores(x, y, ratios=[0.2, 0.5], repeats=8, seed=1)
    assert scores.shape == (85,) and np.all((scores >= 0) & (scores <= 1))
    assert scores[:80].min() > scores[80:].max()
    assert scores[:80].mean() > 0.95 and scores[80:].mean() < 0.3
    np.testing.assert_array_equal(scores, holdout_cscores(x, y, ratios=[0.2, 0.5], repeats=8, seed=1))


def test_holdout_cscores_score_only_models_that_did_not_see_the_example():
    """A pure memoriser (right on the examples it was fitted on, wrong elsewhere) scores 0 on every
    example: no example is ever scored by a model fitted on it."""
    x = np.arange(30, dtype=float).reshape(-1, 1)
    y = np.arange(30) % 3

    def memoriser(x_fit, y_fit, x_eval):
        seen = dict(zip(x_fit[:, 0], y_fit))
        return np.array([seen.get(value, -1) for value in x_eval[:, 0]])

    scores = holdout_cscores(x, y, ratios=[0.3, 0.6], repeats=6, seed=0, fit_predict=memoriser)
    assert scores.tolist() == [0.0] * 30


def test_rank_bins_are_deciles_of_equal_size_and_split_ties():
    scores = np.r_[np.linspace(0, 0.9, 70), np.ones(30)]  # 30% tied at the top
    bins = rank_bins(scores, 10, seed=0)
    assert np.bincount(bins).tolist() == [10] * 10
    assert all(scores[bins == b].max() <= scores[bins == b + 1].min() for b in range(9))
    assert set(bins[scores == 1]) == {7, 8, 9}  # the tie fills the top three deciles
    np.testing.assert_array_equal(bins, rank_bins(scores, 10, seed=0))


def test_tracked_examples_per_bin_are_drawn_inside_each_bin():
    bins = np.repeat(np.arange(4), [10, 3, 10, 7])
    tracked = tracked_per_bin(bins, 4, per_bin=5, rng=np.random.default_rng(1337))
    assert [len(t) for t in tracked] == [5, 3, 5, 5]
    assert all((bins[t] == b).all() for b, t in enumerate(tracked))
    everything = tracked_per_bin(bins, 4, per_bin=None, rng=np.random.default_rng(1337))
    assert [len(t) for t in everything] == [10, 3, 10, 7]
    arrays = binned_cscores({"train": np.linspace(0, 1, 30), "test": np.linspace(0, 1, 20)}, 10, 2, 1337)
    assert len(arrays["train_tracked"]) == 20 and len(arrays["test_tracked"]) == 20
    np.testing.assert_array_equal(arrays["train_bins"][arrays["train_tracked"]], arrays["train_tracked_bins"])


def test_published_scores_are_read_at_each_examples_index_and_their_labels_checked():
    published = {"scores": np.linspace(0, 1, 50), "labels": np.arange(50) % 10}
    prepared = {"train_index": np.arange(40), "test_index": np.arange(40, 50),
                "y_train": np.arange(40) % 10, "y_test": np.arange(40, 50) % 10}
    scores = split_scores(prepared, {"source": "published"}, published)
    np.testing.assert_array_equal(scores["test"], published["scores"][40:])
    prepared["y_test"] = (prepared["y_test"] + 1) % 10
    with pytest.raises(ValueError, match="not in this dataset's order"):
        split_scores(prepared, {"source": "published"}, published)


@dataclass(frozen=True)
class _SplitSource(Source):
    """A 50-image colour source with its own train/test split (as CIFAR-10's reader returns)."""

    def read(self, raw_dir, options):
        rng = np.random.default_rng(0)
        return {"x_train": rng.integers(0, 256, (50, 3, 4, 4)).astype(np.float32), "y_train": np.arange(50) % 10,
                "x_test": np.zeros((7, 3, 4, 4), np.float32), "y_test": np.zeros(7, np.int64)}


def test_test_split_cut_from_the_training_split_with_fixed_normalisation():
    """CIFAR-10 train[:40000] / train[40000:] and the author's Normalize (C-scores exist for the training images only), at 40/10."""
    source = _SplitSource("fake", "fake colour images", "images", pixel_max=255.0)
    mean, std = [0.4914, 0.4822, 0.4465], [0.2023, 0.1994, 0.2010]
    raw = source.read(None, {})
    arrays, provenance = prepare_dataset({"source": "fake", "test_from_train": 10,
                                          "normalise": {"mean": mean, "std": std}}, source)
    assert arrays["x_train"].shape == (40, 3, 4, 4) and arrays["x_test"].shape == (10, 3, 4, 4)
    np.testing.assert_array_equal(arrays["test_index"], np.arange(40, 50))
    np.testing.assert_array_equal(arrays["y_test"], raw["y_train"][40:])
    expected = (raw["x_train"][40:] / 255.0 - np.reshape(mean, (1, 3, 1, 1))) / np.reshape(std, (1, 3, 1, 1))
    np.testing.assert_allclose(arrays["x_test"], expected, rtol=1e-5)
    assert [step["step"] for step in provenance["transforms"]] == ["test_from_train", "rescale_pixels", "normalise"]
    with pytest.raises(ValueError, match="not both"):
        prepare_dataset({"source": "fake", "normalise": {"mean": mean, "std": std}, "standardise": True}, source)
    with pytest.raises(ValueError, match="3 channels"):
        transforms.normalise_channels(arrays["x_train"], [0.5], [0.2])


# --- logging at loss thresholds -------------------------------------------------------------------

def test_thresholds_are_log_c_times_factor_powers_down_to_the_floor():
    levels = geometric_thresholds(math.log(10), 0.96, 0.05)
    assert levels[0] == pytest.approx(math.log(10) * 0.96)
    assert levels[-1] >= 0.05 > levels[-1] * 0.96
    np.testing.assert_allclose(np.diff(np.log(levels)), math.log(0.96))


class _ScriptedLearner:
    """Returns a fixed sequence of mini-batch losses."""

    def __init__(self, losses):
        self.losses = losses

    def step(self, indices, step):
        return torch.tensor(self.losses[step - 1])


def test_a_log_point_at_the_first_step_below_each_threshold_and_at_every_epoch_start():
    losses = [2.0, 1.9, 1.2, 1.5, 0.7, 0.8, 0.65, 0.3]
    thresholds = [1.8, 1.0, 0.9, 0.5]
    session = Session(_ScriptedLearner(losses), lambda step: None, len(losses),
                      probes=[lambda s: {"seen": s.step}],
                      evaluate_at=LossThresholds(thresholds) | epoch_starts(3))
    steps = session.run().frame().step.tolist()
    # 1.8 at step 3 (1.2, with 1.5 later above it not logged again), 1.0 and 0.9 together at step 5
    # (0.7), 0.5 at step 8 (0.3); epoch starts at 0, 3, 6; the last step always
    assert steps == [0, 3, 5, 6, 8]


# --- the runs ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny digits dataset, its proxy C-scores in deciles, and one θ₀ file."""
    folder = tmp_path_factory.mktemp("difficulty")
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.images[:200] / 16.0).astype(np.float32)[:, None]
    y = digits.target[:200].astype(np.int64)
    prepared = {"x_train": x[:150], "y_train": y[:150], "x_test": x[150:], "y_test": y[150:],
                "train_index": np.arange(150), "test_index": np.arange(150, 200)}
    np.savez(folder / "data.npz", **prepared)
    scores = split_scores(prepared, {"source": "proxy", "model": "ridge", "ratios": [0.2, 0.5], "repeats": 4,
                                     "seed": 0})
    np.savez(folder / "cscores.npz", **binned_cscores(scores, 10, None, 1337))
    spec = {"name": "mlp", "in_features": 64, "hidden": [16], "out_features": 10}
    torch.manual_seed(0)
    save_model(folder / "init.pt", build_model(spec), spec, seed=0)
    return folder


def _run(experiment, alpha, **changes):
    run = {"experiment": experiment, "architecture": "mlp", "seed": 0, "alpha": alpha, "lr": 0.05, "epochs": 2,
           "stop_loss": None, "capped": False, "setting": f"alpha{alpha:g}_lr0.05", "batch_size": 32,
           "probe_size": 10, "linearity_every": 2, "thresholds": {"factor": 0.9, "floor": 0.5},
           "keep_initial_output": False, "tracked": None, "tracking_seed": 1337,
           "optimiser": {"name": "sgd", "lr": 0.05, "momentum": 0.9}, "bins": 10, "label_noise": 0.2,
           "noise_seed": 3}
    return {**run, **changes}


def test_every_alpha_starts_from_one_theta0_with_the_same_batches_and_noisy_labels(tiny):
    summaries = {}
    for alpha in (1.0, 100.0):
        frame, summaries[alpha] = difficulty_run(tiny / "data.npz", None, tiny / "init.pt", _run("noisy", alpha), 0)
        assert frame.train_loss.iloc[0] == pytest.approx(math.log(10), abs=1e-6)  # f^α starts at zero
    one, lazy = summaries[1.0], summaries[100.0]
    for key in ("initial_parameters_digest", "batch_order_digest", "flipped_index_digest", "group_sizes", "flipped"):
        assert one[key] == lazy[key], key
    assert one["flipped"] == round(0.2 * 150)
    # the noise is the config's draw: another run seed, the same labels; another noise seed, others
    task = load_task(tiny / "data.npz")
    labels = {seed: noisy_task(dict(task), _run("noisy", 1.0, noise_seed=seed)).y_train for seed in (3, 4)}
    assert torch.equal(labels[3], noisy_task(dict(task), _run("noisy", 100.0, seed=5)).y_train)
    assert not torch.equal(labels[3], labels[4])
    # θ₀ is the init file's: the recorded fingerprint changes with the file
    _, other = difficulty_run(tiny / "data.npz", None, tiny / "init.pt", _run("noisy", 1.0, seed=1), 1)
    assert other["initial_parameters_digest"] == one["initial_parameters_digest"]
    assert other["batch_order_digest"] != one["batch_order_digest"]


def test_a_cscore_run_logs_each_decile_and_the_linearity_metrics_every_kth_point(tiny):
    frame, summary = difficulty_run(tiny / "data.npz", tiny / "cscores.npz", tiny / "init.pt",
                                    _run("cscore", 1.0, epochs=3), 0)
    deciles = [f"train_bin{b}_loss" for b in range(10)]
    assert set(deciles + ["test_bin9_accuracy", "train_loss", "epoch"]) <= set(frame.columns)
    np.testing.assert_allclose(frame.train_loss, frame[deciles].mean(axis=1), rtol=1e-9)
    measured = frame.sign_similarity.notna().to_numpy()
    assert measured[0] and measured[: len(measured) - 1].tolist() == [i % 2 == 0 for i in range(len(measured) - 1)]
    assert frame.loc[0, ["sign_similarity", "ntk_alignment", "representation_alignment"]].tolist() == \
        pytest.approx([1.0, 1.0, 1.0])
    assert summary["steps"] == 3 * summary["steps_per_epoch"] and summary["ended"] == "finished"
    assert sum(summary["group_sizes"][f"train_bin{b}"] for b in range(10)) == 150


def test_the_lazy_run_stops_at_its_mean_loss_and_a_sweep_run_obeys_its_cap(tiny):
    _, stopped = difficulty_run(tiny / "data.npz", None, tiny / "init.pt",
                                _run("noisy", 100.0, epochs=5, stop_loss=2.28), 0)
    assert stopped["ended"] == "stopped" and stopped["steps"] < stopped["max_steps"]
    frame, capped = difficulty_run(tiny / "data.npz", None, tiny / "init.pt", _run("noisy", 1.0, lr=1e-4, epochs=5),
                                   0, cap_steps=7)
    assert capped["steps"] == 7 and frame.step.iloc[-1] == 7


# --- the run grid ---------------------------------------------------------------------------------

def _quick_spec():
    return load_scale("quick")["george_thesis"]["ch5"]["difficulty"]


def test_the_quick_grid_and_what_each_run_reads():
    spec = _quick_spec()
    runs = difficulty_runs(spec)
    base = [run for run in runs if not run["capped"]]
    assert len(base) == 2 * len(spec["regimes"]) * sum(len(a["seeds"]) for a in spec["architectures"].values())
    sweep = [run for run in runs if run["capped"]]
    assert sorted(run["lr"] for run in sweep) == sorted(lr for lr in spec["lr_sweep"]["learning_rates"]
                                                       if lr != spec["optimiser"]["lr"])
    capping = cap_run(spec, sweep[0])
    assert capping["alpha"] == 100 and capping["lr"] == spec["optimiser"]["lr"] and capping in runs
    cscore = run_settings(spec, base[0])
    assert "label_noise" not in cscore and cscore["bins"] == 10
    noisy = run_settings(spec, next(run for run in runs if run["experiment"] == "noisy"))
    assert noisy["label_noise"] == 0.15 and "bins" not in noisy
    assert len(difficulty_figure_inputs(spec, "fig_5_2")["runs"]) == 2 * len(spec["regimes"])
    claimed = difficulty_claim_inputs(spec)["runs"]
    assert len(claimed) == len(set(claimed)) == len(runs)  # the claims read every run once
    broken = {**spec, "other_seeds": [7]}
    with pytest.raises(ValueError, match="seed 7"):
        difficulty_runs(broken)


# --- progress normalisation and the turning point ----------------------------------------------------

def test_progress_is_a_running_minimum_read_by_interpolation():
    frame = pd.DataFrame({"clean_loss": [2.3, 1.5, 1.7, 1.0, 1.0, 0.5],
                          "noisy_loss": [2.3, 2.6, 9.0, 3.0, 3.1, 2.0]})
    x, y = progress_curve(frame, "noisy", "noisy_loss")
    # 1.7 does not progress (running minimum 1.5) and the repeated 1.0 keeps its first point
    assert x.tolist() == [2.3, 1.5, 1.0, 0.5] and y.tolist() == [2.3, 2.6, 3.0, 2.0]
    np.testing.assert_allclose(at_progress(x, y, [2.3, 1.25, 0.75, 0.1, 3.0]), [2.3, 2.8, 2.5, np.nan, np.nan])
    other = (np.array([2.3, 0.8]), np.array([0.0, 1.0]))
    np.testing.assert_allclose(common_progress([(x, y), other], 4), [2.3, 1.8, 1.3, 0.8])


def test_decile_gap_and_matched_differences_at_equal_mean_loss():
    mean = np.array([2.0, 1.5, 1.0, 0.5])
    fast = pd.DataFrame({"train_loss": mean, "train_bin0_loss": mean * 1.5, "train_bin1_loss": mean * 0.5})
    slow = pd.DataFrame({"train_loss": mean, "train_bin0_loss": mean * 1.2, "train_bin1_loss": mean * 0.8})
    grid = np.array([1.75, 1.0])
    np.testing.assert_allclose(decile_gap(fast, grid), grid * 1.0)
    np.testing.assert_allclose(decile_gap(slow, grid), grid * 0.4)
    np.testing.assert_allclose(matched_difference(fast, slow, "cscore", "train_bin0_loss", grid), grid * 0.3)


def test_the_turning_point_is_the_noisy_loss_peak_along_progress():
    clean = np.linspace(2.3, 0.1, 23)
    noisy = 2.3 + 2 * np.exp(-((clean - 1.2) ** 2) / 0.1) - 0.5 * (clean < 1.2) * (1.2 - clean)
    turn = turning_point(pd.DataFrame({"clean_loss": clean, "noisy_loss": noisy}))
    assert turn.turned and turn.clean_loss == pytest.approx(1.2, abs=0.05)
    assert turn.noisy_loss == pytest.approx(noisy.max())
    rising = turning_point(pd.DataFrame({"clean_loss": clean, "noisy_loss": 2.3 + (2.3 - clean)}))
    assert not rising.turned and np.isnan(rising.clean_loss)


def test_memorisation_onset_and_which_run_memorises_later():
    frame = pd.DataFrame({"clean_loss": [2.3, 1.5, 1.0, 0.5, 0.2], "noisy_accuracy": [0.1, 0.02, 0.05, 0.12, 0.4]})
    assert memorisation_onset(frame, 0.1) == (0.5, 0.2)  # the start (a random guess) does not count twice
    assert later_onset((0.5, 0.2), (1.0, 0.3)) is True
    assert later_onset((np.nan, 0.4), (1.0, 0.3)) is True  # went past the other's onset, still not memorising
    assert later_onset((0.5, 0.2), (np.nan, 0.4)) is False
    assert later_onset((0.5, 0.2), (np.nan, 0.6)) is None  # the other stopped before 0.5: undecided


def test_the_figures_and_claims_read_the_runs_of_the_smoke_config():
    smoke = load_scale("smoke")["george_thesis"]["ch5"]["difficulty"]
    inputs = difficulty_figure_inputs(smoke, "fig_C_1")
    assert inputs["runs"][-1].endswith("alpha100_lr0.05/seed0.csv")
    assert json.dumps(difficulty_claim_inputs(smoke))  # plain data for the claims job's params
