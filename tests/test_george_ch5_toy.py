"""George thesis ch. 5, group toy (Fig 5.1, claim H8): the binary yin-yang task, α = 1 and α = 100 runs
trained as one vmap batch, grid losses at training-loss thresholds, the Δloss maps and the claims."""

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from configured import claim_thresholds
from linearlens.analysis.george_thesis.ch5 import (
    crossing_summary,
    delta_loss_maps,
    read_toy_runs,
    region_means,
    toy_regions,
    toy_run_spec,
    toy_shard_seeds,
)
from linearlens.claims.george_thesis.ch5 import toy_claims
from linearlens.data.synthetic import GENERATORS, YIN_YANG_CENTRES, yin_yang, yin_yang_labels
from linearlens.experiments.george_thesis.ch5 import logistic_loss, toy_batch, toy_network, toy_run
from linearlens.figures.george_thesis.ch5 import plot_fig_5_1
from linearlens.linearize.alpha_scaling import AlphaScaled, alpha_scaled_optimiser
from linearlens.linearize.batched_alpha_gd import threshold_gd
from linearlens.manifests.jobs import ClaimsJob, FigureJob

pytestmark = pytest.mark.usefixtures("one_torch_thread")


SMOKE_TOY = {"seeds": 2, "shards": 2, "alphas": [1, 100], "n_train": 100, "depth": 4, "width": 60, "lr": 1.0,
             "thresholds": [0.5, 0.4, 0.3], "min_iterations": 50, "max_iterations": 200, "grid": 8,
             "picture_grid": 50, "curve_points": 20}


def test_yin_yang_labels_half_plane_flipped_inside_the_disks():
    points = np.array([[0.9, -0.9], [-0.9, 0.9], [0.1, 0.0], [0.1, 0.05],  # the half-planes (x₂ = 0 is below)
                       [0.5, -0.5], [0.7, -0.6], [-0.5, 0.5], [-0.3, 0.6],  # inside the disks: flipped
                       [0.5, -0.85], [-0.5, 0.85]])  # just outside them
    np.testing.assert_array_equal(yin_yang_labels(points), [1, 0, 1, 0, 0, 0, 1, 1, 1, 0])
    data = yin_yang(n_train=40_000, grid=7, seed=3)
    x = data["x_train"]
    inside = np.min([np.linalg.norm(x - centre, axis=1) for centre in YIN_YANG_CENTRES], axis=0) <= 0.3
    np.testing.assert_array_equal(data["y_train"], np.where(inside, x[:, 1] > 0, x[:, 1] <= 0))
    assert 0.0 < inside.mean() and abs(data["y_train"].mean() - 0.5) < 0.01  # balanced: the disks swap equal areas
    assert x.min() >= -1 and x.max() <= 1
    np.testing.assert_array_equal(yin_yang(100, 7, seed=3)["x_train"], yin_yang(100, 7, seed=3)["x_train"])
    assert not np.array_equal(yin_yang(100, 7, seed=3)["x_train"], yin_yang(100, 7, seed=4)["x_train"])
    image = data["x_test"].reshape(7, 7, 2)  # row-major, x₂ rising with the row
    np.testing.assert_allclose(image[1, 5], [np.linspace(-1, 1, 7)[5], np.linspace(-1, 1, 7)[1]])
    assert GENERATORS["yin_yang"].make is yin_yang


def test_a_seed_shares_its_initialisation_and_data_across_alphas():
    spec = {**SMOKE_TOY, "alphas": [1, 100, 0.5]}
    batch = toy_batch(spec, [3, 4], torch.device("cpu"))
    assert batch.seeds == [3, 4, 3, 4, 3, 4] and batch.alphas == [1.0, 1.0, 100.0, 100.0, 0.5, 0.5]
    for tensor in (*batch.initial.values(), batch.x, batch.y):
        for first, other in ((0, 2), (0, 4), (1, 3), (1, 5)):
            assert torch.equal(tensor[first], tensor[other])
        assert not torch.equal(tensor[0], tensor[1])  # seeds differ in both
    again = toy_batch(spec, [4], torch.device("cpu"))  # a seed's draw does not depend on its job's other seeds
    assert torch.equal(again.initial["1.weight"][0], batch.initial["1.weight"][1])
    assert torch.equal(again.x[0], batch.x[1])


def reference_run(network, initial, alpha, lr, x, y, x_eval, y_eval, steps):
    """One run alone, the plain way: an ``AlphaScaled`` module and its SGD optimiser."""
    network = network.double()
    with torch.no_grad():
        for name, value in network.named_parameters():
            value.copy_(initial[name])
    model = AlphaScaled(network, alpha)
    optimiser = alpha_scaled_optimiser(model, {"name": "sgd", "lr": lr})
    losses, eval_losses = [], []
    for step in range(steps + 1):  # the losses at θ_0 … θ_steps
        loss = F.binary_cross_entropy_with_logits(model(x).reshape(-1), y)
        losses.append(float(loss.detach()))
        with torch.no_grad():
            eval_losses.append(logistic_loss(model(x_eval).reshape(-1), y_eval))
        if step < steps:
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    return np.array(losses), torch.stack(eval_losses), dict(model.network.named_parameters())


def test_the_batched_runs_equal_each_run_alone_with_first_crossings():
    spec = {**SMOKE_TOY, "width": 12, "depth": 3}
    batch = toy_batch(spec, [0, 1], torch.device("cpu"), torch.float64)
    steps, thresholds = 30, [0.6, 0.55, 0.1]  # 0.1: never crossed, so every run goes the whole way
    record = threshold_gd(toy_network(spec).double(), batch.initial, batch.alphas, spec["lr"], batch.x, batch.y,
                          logistic_loss, thresholds, 0, steps, list(range(steps + 1)), batch.x_grid, batch.y_grid)
    assert (record.stop_iteration == steps).all()
    crossed = 0
    for m, alpha in enumerate(batch.alphas):
        member_initial = {name: value[m] for name, value in batch.initial.items()}
        losses, eval_losses, final = reference_run(toy_network(spec), member_initial, alpha, spec["lr"], batch.x[m],
                                                   batch.y[m], batch.x_grid, batch.y_grid, steps)
        np.testing.assert_allclose(record.train_loss[m], losses, rtol=1e-10, atol=0)
        for name, value in final.items():
            torch.testing.assert_close(record.parameters[name][m], value.detach(), rtol=1e-10, atol=1e-13)
        for k, threshold in enumerate(thresholds):
            below = np.flatnonzero(losses < threshold)
            first = int(below[0]) if below.size else -1
            assert record.crossing_iteration[m, k] == first
            if first >= 0:
                crossed += 1
                np.testing.assert_allclose(record.eval_losses[m, k], eval_losses[first].numpy(), rtol=1e-10)
            else:
                assert np.isnan(record.eval_losses[m, k]).all()
    assert crossed >= 4  # the check saw crossings, some of them by both regimes


def test_runs_leave_the_batch_when_done_and_the_rest_train_on():
    spec = {**SMOKE_TOY, "width": 12, "depth": 3}
    batch = toy_batch(spec, [0, 1], torch.device("cpu"), torch.float64)
    steps = 40
    record = threshold_gd(toy_network(spec).double(), batch.initial, batch.alphas, spec["lr"], batch.x, batch.y,
                          logistic_loss, [0.6], 5, steps, list(range(steps + 1)), batch.x_grid, batch.y_grid)
    stops = record.stop_iteration
    assert len(set(stops.tolist())) > 1 and stops.min() >= 5  # runs stopped at different iterations, none before 5
    for m, alpha in enumerate(batch.alphas):
        member_initial = {name: value[m] for name, value in batch.initial.items()}
        losses, _, _ = reference_run(toy_network(spec), member_initial, alpha, spec["lr"], batch.x[m], batch.y[m],
                                     batch.x_grid, batch.y_grid, steps)
        crossing = int(np.flatnonzero(losses < 0.6)[0]) if (losses < 0.6).any() else -1
        expected_stop = max(crossing, 5) if crossing >= 0 else steps
        assert stops[m] == expected_stop
        np.testing.assert_allclose(record.train_loss[m, :expected_stop + 1], losses[:expected_stop + 1], rtol=1e-10)
        assert np.isnan(record.train_loss[m, expected_stop + 1:]).all()
        assert record.final_loss[m] == pytest.approx(losses[expected_stop], rel=1e-10)
        *_, at_stop = reference_run(toy_network(spec), member_initial, alpha, spec["lr"], batch.x[m], batch.y[m],
                                    batch.x_grid, batch.y_grid, expected_stop)
        for name, value in at_stop.items():  # the parameters it left the batch with
            torch.testing.assert_close(record.parameters[name][m], value.detach(), rtol=1e-10, atol=1e-13)


def constructed_runs():
    """Two regimes × 3 seeds, thresholds 0.5 and 0.3, a 3×3 grid; seed 2 at α = 100 never crosses 0.3."""
    losses = np.zeros((6, 2, 9))
    losses[:3, 0], losses[:3, 1] = [[1.0], [2.0], [3.0]], [[0.5], [1.5], [2.5]]  # α = 1 runs
    losses[3:, 0], losses[3:, 1] = [[4.0], [4.0], [7.0]], [[1.0], [3.0], [np.nan]]  # α = 100 runs
    return {"seed": np.array([0, 1, 2, 0, 1, 2]), "alpha": np.array([1.0, 1, 1, 100, 100, 100]),
            "thresholds": np.array([0.5, 0.3]), "grid_side": np.asarray(3),
            "crossing_iteration": np.array([[3, 9], [4, 8], [2, 10], [30, 90], [20, 99], [40, -1]]),
            "grid_losses": losses}


def test_delta_loss_maps_and_crossing_summary_on_constructed_runs():
    maps = delta_loss_maps(constructed_runs())
    np.testing.assert_allclose(maps["delta"][0], 2.0 - 5.0)  # mean of 1, 2, 3 minus mean of 4, 4, 7
    np.testing.assert_allclose(maps["delta"][1], 1.5 - 2.0)  # the α = 100 run that never crossed 0.3 left out
    assert maps["reached_nonlinear"].tolist() == [3, 3] and maps["reached_linear"].tolist() == [3, 2]
    assert int(maps["runs_linear"]) == 3
    summary = crossing_summary(constructed_runs()).set_index(["alpha", "threshold"])
    assert summary.loc[(1.0, 0.3), "median_iteration"] == 9
    assert summary.loc[(100.0, 0.3), "median_iteration"] == 99  # the never-crossing run counts as the slowest
    assert summary.loc[(100.0, 0.3), "reached"] == 2


def test_regions_follow_the_task_geometry():
    side = 41
    regions = toy_regions(side)
    grid = yin_yang(1, side, 0)["x_test"]
    at = {tuple(np.round(point, 2)): index for index, point in enumerate(grid)}
    assert regions["easy"][at[(0.5, 0.5)]] and regions["easy"][at[(-0.5, -0.5)]]
    assert not regions["easy"][at[(0.5, 0.05)]] and not regions["easy"][at[(0.5, -0.5)]]  # near x₂ = 0; a disk
    assert regions["disks"][at[(0.5, -0.5)]] and regions["disks"][at[(-0.5, 0.5)]]
    assert regions["between"][at[(0.5, -0.1)]] and regions["between"][at[(-0.5, 0.1)]]
    assert not (regions["easy"] & (regions["disks"] | regions["between"])).any()
    delta = np.where(regions["easy"], -1.0, 0.0) + np.where(regions["disks"], 2.0, 0.0)
    means = region_means(delta[None], regions)
    assert means.loc[0, "easy"] == -1 and means.loc[0, "disks"] == 2


def test_shards_split_the_seeds():
    spec = {**SMOKE_TOY, "seeds": 7, "shards": 3}
    assert [toy_shard_seeds(spec, k) for k in range(3)] == [[0, 1, 2], [3, 4], [5, 6]]
    with pytest.raises(ValueError, match="shards"):
        toy_shard_seeds({**spec, "shards": 8}, 0)
    assert "picture_grid" not in toy_run_spec(spec)


def test_run_figure_and_claims_end_to_end(tmp_path):
    paths = []
    for shard in range(SMOKE_TOY["shards"]):
        paths.append(str(tmp_path / f"shard{shard}.npz"))
        np.savez_compressed(paths[-1], **toy_run(SMOKE_TOY, toy_shard_seeds(SMOKE_TOY, shard), "cpu"))
    runs = read_toy_runs(paths)
    assert runs["seed"].tolist() == [0, 0, 1, 1] and runs["alpha"].tolist() == [1, 100, 1, 100]  # one job per seed
    assert runs["grid_losses"].shape == (4, 3, 64) and runs["x_train"].shape == (2, 100, 2)
    assert np.all(runs["train_loss"][:, 0] == pytest.approx(np.log(2)))  # centred output: f^α = 0 at θ₀

    png = tmp_path / "fig_5_1.png"
    plot_fig_5_1(FigureJob("fig_5_1", {"runs": paths}, SMOKE_TOY, str(png), "Yin-yang toy.", "synthetic yin-yang"))
    assert png.stat().st_size > 0 and png.with_suffix(".pdf").exists()
    assert "Departures from the thesis" in json.loads(png.with_suffix(".json").read_text())["caption"]

    for scale in ("quick", "paper"):
        checks = toy_claims(ClaimsJob({"runs": paths}, {"thresholds": claim_thresholds("george_thesis", scale, "toy"), "spec": SMOKE_TOY}))
        assert len(checks) == 7 and {check.claim_id for check in checks} == {"H8"}
        for check in checks:
            assert check.passed in (True, False, None) and check.measured not in (None, "")
    maps = delta_loss_maps(runs)
    easy = region_means(maps["delta"], toy_regions(8))["easy"]
    for k, check in enumerate(checks[1::2]):  # the verdict follows the measured numbers
        assert check.passed == (None if np.isnan(easy[k]) else bool(easy[k] < 0))
