"""Karp thesis Fig 3.3, the LSA toy model: analytic gradients against autograd,
the data generator, the linear classifier's ceiling, one SGD step by hand, the projected route
against the direct one, a short run's trends, the claims and the figure."""

import copy
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from scipy import stats

from configured import claim_thresholds
from linearlens.analysis.karp_thesis.ch3 import (
    TOY_COLUMNS,
    linear_ceiling,
    noise_std,
    toy_linear_ceiling,
    trend,
)
from linearlens.claims.karp_thesis.ch3 import ToyThresholds, local_signal_claims, toy_claims
from linearlens.config import config_errors, load_scale, load_schema
from linearlens.experiments.karp_thesis import ch3
from linearlens.manifests.entries import BUILT
from linearlens.manifests.jobs import ClaimsJob, FigureJob

ROOT = Path(__file__).resolve().parents[1]
SPEC = {"seed": 0, "k": 1000, "d": 10, "noise_multiplier": 1.0, "lr_w": 0.1, "lr_b": 1e-4, "batch_size": 200,
        "steps": 600, "eval_every": 100, "test_samples": 2000, "init_norm": 1e-6, "init_bias": 0.0,
        "route": "projected"}

QUICK = ToyThresholds(**claim_thresholds("karp_thesis", "quick", "toy"))
PAPER = ToyThresholds(**claim_thresholds("karp_thesis", "paper", "toy"))


def _generator(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _autograd_gradients(w: torch.Tensor, b: torch.Tensor, batch: ch3.LsaBatch):
    w, b = w.clone().requires_grad_(True), b.clone().requires_grad_(True)
    u = batch.x @ w
    f = (torch.relu(u + b) - torch.relu(-u + b)).sum(-1)
    torch.log1p(torch.exp(-batch.y * f)).mean().backward()
    return w.grad, b.grad


# --- the model and its gradients ---------------------------------------------------------------------

@pytest.mark.parametrize("bias", [-0.05, 0.0, 0.02, 0.3])
def test_analytic_gradients_equal_autograd(bias):
    """float64, b below, at and above 0; for b > 0 the rows with |u| < b have both indicators on (dφ/du = 2)."""
    k, d, sigma = 50, 4, noise_std(50, 1.0)
    batch = ch3.lsa_samples(64, k, d, sigma, _generator(1), torch.float64)
    w = torch.tensor([0.9, -0.2, 0.4, 0.1], dtype=torch.float64)
    b = torch.tensor(bias, dtype=torch.float64)
    grad_w, grad_b, loss = ch3.lsa_gradients(w, b, batch)
    auto_w, auto_b = _autograd_gradients(w, b, batch)
    torch.testing.assert_close(grad_w, auto_w, rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(grad_b, auto_b, rtol=1e-12, atol=1e-14)
    f = ch3.lsa_output(w, b, batch.x)
    torch.testing.assert_close(loss, torch.log1p(torch.exp(-batch.y * f)).mean())
    slope, _ = ch3.indicator_counts(batch.x @ w, b)
    assert bool((slope == 2).any()) == (bias > 0)  # the case a logical OR gets wrong is exercised


def test_phi_is_soft_thresholding_for_negative_bias():
    u = torch.linspace(-1, 1, 201, dtype=torch.float64)
    torch.testing.assert_close(ch3.phi(u, -0.3), torch.nn.functional.softshrink(u, 0.3))
    torch.testing.assert_close(ch3.phi(u, 0.0), u)


# --- the data ---------------------------------------------------------------------------------------

def test_generator_has_one_signal_row_and_noise_of_the_code_std():
    k, d = 1000, 10
    sigma = noise_std(k, 1.0)
    assert sigma == pytest.approx(math.log(1000) / math.sqrt(1000)) and sigma == pytest.approx(0.2184, abs=1e-4)
    batch = ch3.lsa_samples(400, k, d, sigma, _generator(2))
    signal = batch.y[:, None, None] * ch3.signal_direction(d)
    is_signal = (batch.x == signal).all(-1)  # (n, k)
    assert (is_signal.sum(-1) == 1).all()
    assert (is_signal.float().argmax(-1) == batch.signal_rows).all()
    assert set(batch.y.tolist()) == {-1.0, 1.0}
    noise = batch.x[~is_signal]
    assert noise.shape == (400 * (k - 1), d)
    assert float(noise.std()) == pytest.approx(sigma, rel=5e-3)
    assert abs(float(noise.mean())) < 5 * sigma / math.sqrt(noise.numel())
    # the signal's position is uniform over the k rows (a χ² test over 10 bins of rows)
    counts = np.bincount(batch.signal_rows.numpy() * 10 // k, minlength=10)
    assert stats.chisquare(counts).pvalue > 1e-3
    assert float(ch3.signal_direction(d).norm()) == pytest.approx(1.0)


def test_linear_classifier_accuracy_is_the_ceiling():
    """l(X) = Σ_i ⟨w*, X_i⟩ = y + N(0, (k − 1)σ²): accuracy Φ(1/(√(k − 1)σ)) ≈ Φ(1/log k) = 0.558."""
    k, d = 1000, 10
    sigma = noise_std(k, 1.0)
    ceiling = linear_ceiling(k, sigma)
    assert ceiling == pytest.approx(0.558, abs=5e-4)
    assert ceiling == pytest.approx(stats.norm.cdf(1 / math.log(k)), abs=1e-4)
    assert toy_linear_ceiling({"k": k, "noise_multiplier": 1.0}) == ceiling
    generator, w_star, correct, total = _generator(3), ch3.signal_direction(d), 0, 0
    for _ in range(10):
        batch = ch3.lsa_samples(2000, k, d, sigma, generator)
        correct += int((torch.sign(batch.x.sum(1) @ w_star) == batch.y).sum())
        total += 2000
    standard_error = math.sqrt(ceiling * (1 - ceiling) / total)
    assert correct / total == pytest.approx(ceiling, abs=4 * standard_error)


# --- the projected route against the direct one -----------------------------------------------------

@pytest.mark.parametrize("bias", [-0.1, 0.0, 0.05])
def test_noise_sums_of_the_fused_and_general_paths_agree(bias):
    z = torch.randn(30, 200, generator=_generator(4), dtype=torch.float64)
    general = ch3._noise_sums_general(z, 0.07, bias)
    chosen = ch3.noise_sums(z, 0.07, bias)
    for name in ("output", "slope_z", "shift", "slope_squared"):
        torch.testing.assert_close(getattr(chosen, name), getattr(general, name))
    if bias <= 0:
        fused = ch3._noise_sums_thresholded(z, 0.07, bias)
        for name in ("output", "slope_z", "shift", "slope_squared"):
            torch.testing.assert_close(getattr(fused, name), getattr(general, name))


def _as_projected(w: torch.Tensor, b: torch.Tensor, batch: ch3.LsaBatch, sigma: float) -> ch3.ProjectedBatch:
    """A direct batch in the projected route's terms, with the draw across ŵ that reproduces its
    noise rows' actual components across ŵ: the projected gradient must then equal the direct one."""
    n, k, d = batch.x.shape
    keep = torch.ones(n, k, dtype=torch.bool)
    keep[torch.arange(n), batch.signal_rows] = False
    noise = batch.x[keep].reshape(n, k - 1, d)
    direction = w / w.norm()
    a = noise @ direction
    across_rows = noise - a[..., None] * direction
    f = ch3.lsa_output(w, b, batch.x)
    g = -batch.y * torch.sigmoid(-batch.y * f)
    slope, _ = ch3.indicator_counts(a * w.norm(), b)
    actual = torch.einsum("n,ni,nid->d", g, slope, across_rows)
    spread = sigma * torch.sqrt((g * g) @ (slope * slope).sum(-1))
    return ch3.ProjectedBatch(a / sigma, batch.y, actual / spread)


@pytest.mark.parametrize("bias", [-0.08, 0.03])
def test_projected_gradients_equal_direct_ones_given_the_same_noise(bias):
    k, d = 40, 5
    sigma = noise_std(k, 1.0)
    batch = ch3.lsa_samples(32, k, d, sigma, _generator(5), torch.float64)
    w = torch.tensor([0.5, 0.3, -0.2, 0.1, 0.25], dtype=torch.float64)
    b = torch.tensor(bias, dtype=torch.float64)
    w_star = ch3.signal_direction(d, torch.float64)
    direct = ch3.lsa_gradients(w, b, batch)
    projected = ch3.projected_gradients(w, b, _as_projected(w, b, batch, sigma), sigma, w_star)
    for ours, theirs in zip(projected, direct):
        torch.testing.assert_close(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("bias", [-0.06, 0.02])
def test_projected_route_draws_the_direct_routes_distribution(bias):
    """Mean and standard deviation of every gradient coordinate and of the loss over many batches,
    and the distribution of f (two-sample Kolmogorov-Smirnov), by both routes."""
    k, d, n, batches = 30, 3, 8, 3000
    sigma = noise_std(k, 1.0)
    w = torch.tensor([0.6, 0.1, -0.3], dtype=torch.float64)
    b = torch.tensor(bias, dtype=torch.float64)
    w_star = ch3.signal_direction(d, torch.float64)
    direct_generator, projected_generator = _generator(6), _generator(7)
    draws = {"direct": [], "projected": []}
    for _ in range(batches):
        grad_w, grad_b, loss = ch3.lsa_gradients(w, b, ch3.lsa_samples(n, k, d, sigma, direct_generator,
                                                                         torch.float64))
        draws["direct"].append(torch.cat([grad_w, grad_b[None], loss[None]]))
        batch = ch3.projected_samples(n, k, d, projected_generator, torch.float64)
        grad_w, grad_b, loss = ch3.projected_gradients(w, b, batch, sigma, w_star)
        draws["projected"].append(torch.cat([grad_w, grad_b[None], loss[None]]))
    direct, projected = (torch.stack(draws[route]).numpy() for route in ("direct", "projected"))
    standard_error = np.sqrt((direct.var(0) + projected.var(0)) / batches)
    assert np.all(np.abs(direct.mean(0) - projected.mean(0)) < 4.5 * standard_error)
    np.testing.assert_allclose(projected.std(0), direct.std(0), rtol=0.08)
    samples = ch3.lsa_samples(20000, k, d, sigma, _generator(8), torch.float64)
    f_direct = ch3.lsa_output(w, b, samples.x)
    y = ch3.random_labels(20000, _generator(9), torch.float64)
    z = torch.randn(20000, k - 1, generator=_generator(10), dtype=torch.float64)
    f_projected = ch3.projected_output(w, b, z, y, sigma, w_star)
    assert stats.ks_2samp((samples.y * f_direct).numpy(), (y * f_projected).numpy()).pvalue > 1e-3


# --- training ---------------------------------------------------------------------------------------

def _phi_numpy(u, b):
    return np.maximum(u + b, 0) - np.maximum(-u + b, 0)


@pytest.mark.parametrize("route", ["direct", "projected"])
def test_one_sgd_step_is_the_update_by_hand(route):
    spec = {**SPEC, "k": 20, "d": 4, "batch_size": 16, "route": route, "lr_b": 0.05}
    sigma = noise_std(spec["k"], 1.0)
    w_star = ch3.signal_direction(spec["d"])
    state = ch3.LsaState(torch.tensor([0.3, -0.1, 0.2, 0.05]), torch.tensor(-0.02))
    w0, b0 = state.w.double().numpy(), float(state.b)
    generator = _generator(11)
    replay = torch.Generator().set_state(generator.get_state())
    loss = ch3.sgd_step(state, spec, generator, w_star)
    # by hand, in float64 numpy, on the same draws
    if route == "direct":
        batch = ch3.lsa_samples(16, 20, 4, sigma, replay)
        x, y = batch.x.double().numpy(), batch.y.double().numpy()
        u = x @ w0
        f = _phi_numpy(u, b0).sum(1)
        g = -y / (1 + np.exp(y * f))
        up, down = (u + b0 > 0).astype(float), (-u + b0 > 0).astype(float)
        grad_w = np.einsum("n,nk,nkd->d", g, up + down, x) / 16
        grad_b = np.mean(g * (up - down).sum(1))
    else:
        batch = ch3.projected_samples(16, 20, 4, replay)
        z, y, xi = batch.z.double().numpy(), batch.y.double().numpy(), batch.across.double().numpy()
        norm, star = np.linalg.norm(w0), w_star.double().numpy()
        hat, c = w0 / norm, w0 @ star
        u, u_signal = sigma * norm * z, y * c
        f = _phi_numpy(u, b0).sum(1) + _phi_numpy(u_signal, b0)
        g = -y / (1 + np.exp(y * f))
        up, down = (u + b0 > 0).astype(float), (-u + b0 > 0).astype(float)
        up_s, down_s = (u_signal + b0 > 0).astype(float), (-u_signal + b0 > 0).astype(float)
        slope = up + down
        across = xi - (xi @ hat) * hat
        grad_w = (sigma * (g @ (slope * z).sum(1)) * hat + ((up_s + down_s) * g) @ y * star
                  + sigma * np.sqrt((g * g) @ (slope * slope).sum(1)) * across) / 16
        grad_b = np.mean(g * ((up - down).sum(1) + up_s - down_s))
    np.testing.assert_allclose(state.w.numpy(), w0 - 0.1 * grad_w, rtol=1e-5, atol=1e-7)
    assert float(state.b) == pytest.approx(b0 - 0.05 * grad_b, rel=1e-5, abs=1e-8)
    assert float(loss) == pytest.approx(np.mean(np.log1p(np.exp(-y * f))), rel=1e-5)


def test_initial_state_is_a_random_direction_of_the_configured_norm():
    states = [ch3.initial_state(SPEC, _generator(seed)) for seed in range(3)]
    for state in states:
        assert float(state.w.norm()) == pytest.approx(1e-6, rel=1e-5) and float(state.b) == 0.0
    assert not torch.allclose(states[0].w, states[1].w)


@pytest.fixture(scope="module")
def short_run():
    torch.set_num_threads(1)
    return ch3.toy_run(SPEC)


def test_short_run_shows_the_trends(short_run):
    frame = short_run
    assert list(frame.columns) == list(TOY_COLUMNS)
    assert frame["step"].tolist() == list(range(0, 601, 100))
    assert trend(frame, "w_dot_wstar")["rho"] > 0.8 and frame["w_dot_wstar"].iloc[-1] > 0.15
    assert trend(frame, "b")["rho"] < -0.8 and frame["b"].iloc[-1] < -0.02
    assert frame["test_accuracy"].iloc[-1] > toy_linear_ceiling(SPEC) + 0.03
    assert frame["test_accuracy"].iloc[0] < 0.56
    assert frame["w_perp_norm"].iloc[-1] < frame["w_dot_wstar"].iloc[-1] / 2  # ‖w⊥‖ stays small
    assert np.isnan(frame["train_loss"].iloc[0]) and (frame["train_loss"].iloc[1:] < math.log(2)).all()


def test_runs_are_seeded_and_evaluation_leaves_training_alone(short_run):
    again = ch3.toy_run({**SPEC, "steps": 300, "eval_every": 150, "test_samples": 500})
    training = ["w_dot_wstar", "w_perp_norm", "w_norm", "b"]
    pd.testing.assert_frame_equal(again[training].iloc[[0, 2]].reset_index(drop=True),
                                  short_run[training].iloc[[0, 3]].reset_index(drop=True))


def test_the_session_takes_the_steps_and_evaluations_of_a_plain_loop():
    """toy_run's session: at each evaluation, the state after exactly the steps of a plain loop of
    ``sgd_step``, scored on the same test draws (step 0, every ``eval_every``, the last step)."""
    spec = {**SPEC, "k": 50, "batch_size": 20, "steps": 7, "eval_every": 3, "test_samples": 200}
    train, test = ch3.toy_generators(spec["seed"])
    w_star = ch3.signal_direction(spec["d"])
    state, rows = ch3.initial_state(spec, train), []
    for step in range(spec["steps"] + 1):
        if step in (0, 3, 6, 7):
            rows.append((step, float(state.w @ w_star), float(state.b), *ch3.evaluate(state, spec, test, w_star)))
        if step < spec["steps"]:
            ch3.sgd_step(state, spec, train, w_star)
    frame = ch3.toy_run(spec)
    assert list(frame[["step", "w_dot_wstar", "b", "test_accuracy", "test_loss"]].itertuples(index=False,
                                                                                              name=None)) == rows


def test_direct_route_runs_too():
    frame = ch3.toy_run({**SPEC, "k": 100, "batch_size": 20, "steps": 20, "eval_every": 10, "test_samples": 300,
                         "route": "direct"})
    assert frame["step"].tolist() == [0, 10, 20] and frame["w_dot_wstar"].iloc[-1] > 0
    with pytest.raises(ValueError, match="route"):
        ch3.toy_run({**SPEC, "route": "sideways"})


# --- claims -----------------------------------------------------------------------------------------

def _frame(steps, w_dot_wstar, b, accuracy) -> pd.DataFrame:
    frame = pd.DataFrame({"step": steps, "w_dot_wstar": w_dot_wstar, "b": b, "test_accuracy": accuracy})
    frame["ratio"] = frame["b"].abs() / frame["w_dot_wstar"]
    for column in TOY_COLUMNS:
        if column not in frame:
            frame[column] = 0.0
    return frame[list(TOY_COLUMNS)]


def _trending(steps) -> pd.DataFrame:
    t = np.asarray(steps) / steps[-1]
    return _frame(steps, 0.05 + 0.8 * t, -0.4 * t ** 1.2, 0.52 + 0.26 * np.sqrt(t))


def _by_id(checks):
    return {check.claim_id: check for check in checks}


def test_claims_pass_on_the_trends_and_fail_without_them():
    spec = {**SPEC, "steps": 3000}
    steps = list(range(0, 3001, 100))
    checks = _by_id(toy_claims(_trending(steps), spec, QUICK))
    assert [checks[i].passed for i in ("T1", "T2", "T3", "T4", "T5")] == [True] * 5
    assert checks["T6"].passed is None and checks["T7"].passed is None and checks["T8"].passed is None
    rng = np.random.default_rng(0)
    flat = _frame(steps, 0.2 + 0.01 * rng.standard_normal(31), -0.05 + 0.01 * rng.standard_normal(31),
                  0.55 + 0.005 * rng.standard_normal(31))
    checks = _by_id(toy_claims(flat, spec, QUICK))
    assert [checks[i].passed for i in ("T1", "T2", "T3", "T4", "T5")] == [False] * 5
    # b falling but positive throughout: T2 fails on its sign alone
    positive = _trending(steps).assign(b=lambda f: 0.5 - 0.1 * f["step"] / 3000)
    assert _by_id(toy_claims(positive, spec, QUICK))["T2"].passed is False


def test_paper_bands_apply_at_the_thesis_steps_only():
    steps = list(range(0, 10001, 100))
    frame = _trending(steps)  # ends at accuracy 0.78, ratio 0.4/0.85 = 0.47
    checks = _by_id(toy_claims(frame, SPEC, PAPER))
    assert checks["T6"].passed is True and checks["T7"].passed is True
    low = frame.assign(test_accuracy=frame["test_accuracy"] - 0.1)
    assert _by_id(toy_claims(low, SPEC, PAPER))["T6"].passed is False
    small_ratio = frame.assign(ratio=frame["ratio"] / 2)  # 0.24 at the end: b thresholds too little noise
    assert _by_id(toy_claims(small_ratio, SPEC, PAPER))["T7"].passed is False
    short = _by_id(toy_claims(frame.iloc[:31], SPEC, PAPER))
    assert short["T6"].passed is None and "not evaluated" in short["T6"].note


def test_claim_set_reads_its_inputs_by_name(tmp_path):
    path = tmp_path / "seed0.csv"
    _trending(list(range(0, 3001, 100))).to_csv(path, index=False)
    checks = local_signal_claims(ClaimsJob({"toy": [str(path)]}, {"thresholds": claim_thresholds("karp_thesis"), "toy": SPEC}))
    assert [c.claim_id for c in checks] == [f"T{i}" for i in range(1, 9)]
    assert all(c.figure == "fig_3_3" for c in checks)
    assert local_signal_claims(ClaimsJob({}, {"thresholds": claim_thresholds("karp_thesis")})) == []


# --- the figure, the manifest and the config --------------------------------------------------------

def test_figure_renders(short_run, tmp_path):
    from linearlens.figures.karp_thesis.ch3 import plot_fig_3_3

    runs = tmp_path / "seed0.csv"
    short_run.to_csv(runs, index=False)
    png = tmp_path / "fig_3_3.png"
    plot_fig_3_3(FigureJob("fig_3_3", {"runs": [str(runs)]}, SPEC, str(png), "Lead.", "synthetic LSA data"))
    for suffix in (".png", ".pdf", ".json"):
        assert png.with_suffix(suffix).stat().st_size > 0
    sidecar = json.loads(png.with_suffix(".json").read_text())
    assert sidecar["data_source"].startswith("synthetic LSA data: k = 1000, d = 10, σ = 0.2184")
    assert "seed 0" in sidecar["data_source"]
    assert "noise multiplier 1" in sidecar["caption"] and "0.558" in sidecar["caption"]
    assert "steps 600 (thesis 10000)" in sidecar["caption"]


def test_manifest_builds_fig_3_3_and_its_claims_from_the_quick_config():
    from linearlens.manifests.karp_thesis import CLAIM_SETS, ENTRIES

    document = load_scale("quick")["karp_thesis"]
    entry = next(entry for entry in ENTRIES if entry.id == "fig_3_3")
    assert entry.status == BUILT and entry.configured(document)
    run = f"results/karp_thesis/runs/ch3/toy/seed{document['ch3']['toy']['seed']}.csv"
    assert entry.inputs(document) == {"runs": [run]}
    assert entry.params(document) == document["ch3"]["toy"]
    claims = next(s for s in CLAIM_SETS if s.function.endswith(":local_signal_claims"))
    assert claims.configured(document) and claims.inputs(document)["toy"] == [run]
    params = claims.params(document)
    thresholds = document["claim_thresholds"]
    assert params["thresholds"] == {"toy": thresholds["toy"], "local_signal": thresholds["local_signal"]}
    assert params["toy"] == document["ch3"]["toy"]
    without = {key: value for key, value in document.items() if key != "ch3"}
    assert not entry.configured(without) and not claims.configured(without)


def test_schema_describes_every_toy_key_and_rejects_others():
    schema = load_schema(ROOT / "config" / "schema" / "config.schema.yaml")
    section = yaml.safe_load((ROOT / "config" / "schema" / "karp_thesis.schema.yaml").read_text())
    toy = section["properties"]["ch3"]["properties"]["toy"]
    assert section["properties"]["ch3"]["additionalProperties"] is False
    assert all(value.get("description") for value in toy["properties"].values())
    for name in ("quick", "paper", "smoke"):
        config = load_scale(name)
        assert set(config["karp_thesis"]["ch3"]["toy"]) == set(toy["properties"])
    config = load_scale("smoke")
    wrong = copy.deepcopy(config)
    wrong["karp_thesis"]["ch3"]["toy"]["sigma"] = 1.0
    assert any("karp_thesis.ch3.toy" in problem for problem in config_errors(wrong, schema))
    wrong = copy.deepcopy(config)
    wrong["karp_thesis"]["ch3"]["toy"]["route"] = "sideways"
    assert any("karp_thesis.ch3.toy.route" in problem for problem in config_errors(wrong, schema))
    paper = load_scale("paper")["karp_thesis"]["ch3"]["toy"]
    assert {key: paper[key] for key in ("k", "d", "noise_multiplier", "lr_w", "lr_b", "batch_size", "steps",
                                        "eval_every", "test_samples")} == {
        "k": 1000, "d": 10, "noise_multiplier": 1.0, "lr_w": 0.1, "lr_b": 1e-4, "batch_size": 500,
        "steps": 10000, "eval_every": 100, "test_samples": 5000}
