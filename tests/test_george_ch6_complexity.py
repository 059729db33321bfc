"""George thesis Fig 6.6: complexity measures against the generalisation gap. Each measure against a
direct computation (float64), the exact sum of update norms, the piecewise learning-flow sum (6.4.11),
the stopping rule, and a tiny run through the figure and the claim (H23)."""

import copy
import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from configured import claim_thresholds
from linearlens.analysis.george_thesis.ch6 import (
    COMPLEXITY_MEASURES,
    complexity_run_specs,
    complexity_runs,
    gap_correlations,
    learning_flow_complexity,
    panel_curves,
    read_complexity_finals,
)
from linearlens.capacity.measures import (
    UpdateNormTracker,
    complexity_measures,
    distance_to_init,
    fisher_rao_norm,
    frobenius_product,
    frobenius_sum,
    margins,
    neyshabur_two_layer,
    path_norm,
    spectral_complexity,
)
from linearlens.claims.george_thesis.ch6 import complexity_claims
from linearlens.data.prepared import save_prepared
from linearlens.experiments.george_thesis.ch6 import ComplexityRun, complexity_run
from linearlens.figures.george_thesis.ch6 import plot_fig_6_6
from linearlens.kernels.ntk import ntk_by_jacobian
from linearlens.manifests import george_thesis as george_manifest
from linearlens.manifests.george_thesis_runs import RUN_COMPLEXITY
from linearlens.manifests.jobs import ClaimsJob, FigureJob
from linearlens.models.cnn import small_cnn
from linearlens.models.mlp import mlp
from linearlens.train.batches import EpochBatches
from linearlens.train.learners import SupervisedLearner
from linearlens.train.session import Session

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _net(hidden, seed=0, bias=True):
    torch.manual_seed(seed)
    model = mlp(5, hidden, 3).double()
    if not bias:
        for module in model:
            if isinstance(module, nn.Linear):
                module.bias = None
    return model


def _perturbed(model, seed=1):
    """The model after a random move away from its initial parameters (returned by name)."""
    initial = {n: p.detach().clone() for n, p in model.named_parameters()}
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=generator, dtype=p.dtype))
    return initial


def _data(n=12, seed=2):
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(n, 5, generator=generator, dtype=torch.float64),
            torch.randint(0, 3, (n,), generator=generator))


def _linears(model):
    return [m for m in model if isinstance(m, nn.Linear)]


# --- each measure against a direct route ----------------------------------------------------------

def test_frobenius_and_distance_to_init_against_numpy():
    model = _net([4, 6])
    initial = _perturbed(model)
    norms = [np.linalg.norm(m.weight.detach().numpy()) for m in _linears(model)]
    assert frobenius_sum(model) == pytest.approx(sum(norms), rel=1e-12)
    assert frobenius_product(model, margin=2.0) == pytest.approx(np.prod(norms) / 2.0, rel=1e-12)
    flat = np.concatenate([(p.detach() - initial[n]).numpy().ravel() for n, p in model.named_parameters()])
    assert distance_to_init(model, initial) == pytest.approx(np.linalg.norm(flat), rel=1e-12)


def test_spectral_complexity_against_numpy():
    model = _net([4, 6])
    initial = _perturbed(model)
    sigmas, ratios = [], []
    for name, module in model.named_children():
        if isinstance(module, nn.Linear):
            w, w0 = module.weight.detach().numpy(), initial[f"{name}.weight"].numpy()
            sigma = np.linalg.svd(w, compute_uv=False)[0]
            rows = sum(np.linalg.norm(w[i] - w0[i]) for i in range(w.shape[0]))  # ‖(W − W⁰)ᵀ‖_{2,1}
            sigmas.append(sigma)
            ratios.append(rows ** (2 / 3) / sigma ** (2 / 3))
    expected = np.prod(sigmas) * sum(ratios) ** 1.5
    assert spectral_complexity(model, initial) == pytest.approx(expected, rel=1e-10)


def test_path_norm_enumerates_paths_of_a_one_hidden_layer_net():
    model = _net([4])
    first, second = _linears(model)
    w1, b1, w2, b2 = (t.detach().numpy() for t in (first.weight, first.bias, second.weight, second.bias))
    total = 0.0
    for k, j in itertools.product(range(3), range(4)):
        total += sum(w1[j, i] ** 2 * w2[k, j] ** 2 for i in range(5))  # input i → hidden j → output k
        total += b1[j] ** 2 * w2[k, j] ** 2  # the constant input of hidden j's bias
    total += (b2 ** 2).sum()  # the output biases
    assert path_norm(model, (5,), margin=3.0) == pytest.approx(math.sqrt(total) / 3.0, rel=1e-12)


def test_path_norm_of_a_two_hidden_layer_net_enumerates_paths():
    model = _net([3, 2], bias=False)
    w1, w2, w3 = (m.weight.detach().numpy() for m in _linears(model))
    total = sum(w1[j, i] ** 2 * w2[k, j] ** 2 * w3[o, k] ** 2
                for i, j, k, o in itertools.product(range(5), range(3), range(2), range(3)))
    assert path_norm(model, (5,)) == pytest.approx(math.sqrt(total), rel=1e-12)


def test_fisher_rao_norm_against_per_example_gradients():
    model = _net([4, 6])
    x, y = _data()
    inner = []
    for xi, yi in zip(x, y):
        model.zero_grad()
        F.cross_entropy(model(xi[None]), yi[None]).backward()
        inner.append(sum(float((p.detach() * p.grad).sum()) for p in model.parameters()))
    expected = math.sqrt(np.mean(np.square(inner)))
    assert fisher_rao_norm(model, x, y, batch_size=5) == pytest.approx(expected, rel=1e-10)


def test_fisher_rao_norm_of_a_bias_free_relu_net_is_liang_et_al_lemma():
    """⟨w, ∇_w ℓ⟩ = (L+1) ⟨∂ℓ/∂f, f⟩ for a bias-free ReLU net with L hidden layers (Liang et al. 2019)."""
    model = _net([4, 6], bias=False)
    x, y = _data()
    with torch.no_grad():
        f = model(x)
        dl_df = torch.softmax(f, 1) - F.one_hot(y, 3).double()  # ∂ℓ/∂f of the cross-entropy
    expected = 3 * torch.sqrt(((dl_df * f).sum(1) ** 2).mean())
    assert fisher_rao_norm(model, x, y) == pytest.approx(float(expected), rel=1e-10)


def test_neyshabur_two_layer_bound_against_a_loop_over_hidden_units():
    model = _net([4])
    initial = _perturbed(model)
    x, _ = _data()
    first, second = _linears(model)
    x_tilde = np.hstack([x.numpy(), np.ones((len(x), 1))])
    u = np.hstack([first.weight.detach().numpy(), first.bias.detach().numpy()[:, None]])
    u0 = np.hstack([initial["1.weight"].numpy(), initial["1.bias"].numpy()[:, None]])
    v = second.weight.detach().numpy()
    total = sum(np.linalg.norm(v[:, j]) * (np.linalg.norm(u[j] - u0[j]) * np.linalg.norm(x_tilde)
                                           + np.linalg.norm(x_tilde @ u0[j])) for j in range(4))
    assert neyshabur_two_layer(model, initial, x, margin=2.0, batch_size=5) == pytest.approx(
        total / (2.0 * len(x)), rel=1e-12)


def test_neyshabur_bound_is_only_defined_for_one_hidden_layer():
    deep = _net([4, 4])
    x, _ = _data()
    assert neyshabur_two_layer(deep, _perturbed(deep), x) is None
    cnn = small_cnn(1, 3, width=2).double()
    assert neyshabur_two_layer(cnn, _perturbed(cnn), torch.randn(4, 1, 4, 4, dtype=torch.float64)) is None


def test_margins_and_all_measures_on_a_cnn():
    torch.manual_seed(0)
    cnn = small_cnn(1, 3, width=2).double()
    initial = _perturbed(cnn)
    x = torch.randn(6, 1, 4, 4, dtype=torch.float64)
    y = torch.randint(0, 3, (6,))
    with torch.no_grad():
        logits = cnn(x)
    expected = [float(logits[i, y[i]] - max(logits[i, k] for k in range(3) if k != y[i])) for i in range(6)]
    np.testing.assert_allclose(margins(cnn, x, y).numpy(), expected, rtol=1e-12)
    measures = complexity_measures(cnn, initial, x, y, margin_quantile=0.5)
    assert measures["margin"] == pytest.approx(float(np.quantile(expected, 0.5)), rel=1e-12)
    assert measures["neyshabur"] is None
    assert set(COMPLEXITY_MEASURES) - {"learning_flow", "neyshabur"} <= set(measures)


# --- the learning-flow measure -------------------------------------------------------------------

def test_update_norm_tracker_sums_the_norm_of_every_step():
    torch.manual_seed(0)
    model = mlp(5, [6], 3).double()
    twin = copy.deepcopy(model)
    x, y = _data(30)
    tracker = UpdateNormTracker(model)
    learner = SupervisedLearner(model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
                                F.cross_entropy, x, y, trackers=[tracker])
    batches = EpochBatches(30, 7, seed=3)
    Session(learner, batches, 20).run()
    optimiser, expected = torch.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9), 0.0
    start = torch.cat([p.detach().clone().ravel() for p in twin.parameters()])
    for step in range(1, 21):
        before = torch.cat([p.detach().clone().ravel() for p in twin.parameters()])
        optimiser.zero_grad()
        indices = batches(step)
        F.cross_entropy(twin(x[indices]), y[indices]).backward()
        optimiser.step()
        expected += float(torch.linalg.norm(torch.cat([p.detach().ravel() for p in twin.parameters()]) - before))
    assert float(tracker.total) == pytest.approx(expected, rel=1e-12)
    displacement = float(torch.linalg.norm(torch.cat([p.detach().ravel() for p in twin.parameters()]) - start))
    assert displacement < 0.9 * expected  # the end-to-end displacement only bounds the sum of per-step displacements from below


def test_learning_flow_sum_is_piecewise_constant_between_trace_evaluations():
    rng = np.random.default_rng(0)
    step_norms = rng.uniform(0.1, 1.0, 23)  # ‖δw_t‖, t = 1..23
    traces_every_step = rng.uniform(1.0, 5.0, 24)  # Tr K_t, t = 0..23
    evaluated = np.array([0, 10, 20, 23])  # every 10 steps and the last step
    running = np.concatenate([[0.0], np.cumsum(step_norms)])
    got = learning_flow_complexity(evaluated, running[evaluated], traces_every_step[evaluated], trace_scale=4.0)
    held = traces_every_step[[evaluated[evaluated <= t - 1].max() for t in range(1, 24)]]  # last K before step t
    assert got == pytest.approx(float(np.sum(step_norms * np.sqrt(4.0 * held))), rel=1e-12)
    every = np.arange(24)
    exact = learning_flow_complexity(every, running, traces_every_step)
    assert exact == pytest.approx(float(np.sum(step_norms * np.sqrt(traces_every_step[:-1]))), rel=1e-12)


# --- runs -----------------------------------------------------------------------------------------

@pytest.fixture
def digits_npz(tmp_path):
    """A tiny 3-class task of 4x4 images, separable enough to be fitted in a few epochs."""
    rng = np.random.default_rng(0)
    centres = rng.normal(0, 1, (3, 1, 4, 4))

    def split(n):
        y = rng.integers(0, 3, n)
        return (centres[y] + 0.4 * rng.normal(0, 1, (n, 1, 4, 4))).astype(np.float32), y.astype(np.int64)

    (x_train, y_train), (x_test, y_test) = split(60), split(30)
    path = tmp_path / "tiny.npz"
    save_prepared({"x_train": x_train, "y_train": y_train, "x_test": x_test, "y_test": y_test},
                  {"source": "test"}, path, tmp_path / "tiny.json")
    return path


def tiny_spec(dataset="tiny"):
    return {"seeds": [0, 1], "optimiser": {"lr": 0.1, "momentum": 0.9}, "batch_size": 20, "stop_loss": 0.3,
            "max_epochs": 30, "trace_every": 2, "trace_probe": 8, "margin_quantile": 0.05, "device": "cpu",
            "deviations": "a test",
            "panels": {
                "width": {"dataset": dataset, "model": {"name": "mlp"}, "vary": "hidden", "values": [4, 16],
                          "label": "hidden units"},
                "corruption": {"dataset": dataset, "model": {"name": "mlp", "hidden": [16]}, "vary": "corruption",
                               "values": [0.0, 0.5], "label": "label corruption"},
                "channels": {"dataset": dataset, "model": {"name": "small_cnn"}, "vary": "width", "values": [2, 4],
                             "label": "channels"}}}


def test_runs_shared_between_panels_are_one_run_and_conflicts_fail():
    spec = tiny_spec()
    panels = complexity_runs(spec)
    assert list(panels) == ["width", "corruption", "channels"]
    assert "tiny_mlp_hidden16_corrupt0" in panels["width"] and "tiny_mlp_hidden16_corrupt0" in panels["corruption"]
    assert len(complexity_run_specs(spec)) == 5
    spec["panels"]["corruption"]["model"]["activation"] = "tanh"  # a different run under the same name
    with pytest.raises(ValueError, match="two panels"):
        complexity_runs(spec)


def _run_spec(spec, name):
    return {**complexity_run_specs(spec)[name]}


def test_stopping_rule_stops_at_the_threshold_and_caps_otherwise(digits_npz):
    spec = tiny_spec()
    run = _run_spec(spec, "tiny_mlp_hidden16_corrupt0")
    experiment = ComplexityRun(digits_npz, run, seed=0)
    result = experiment.train()
    evaluations = result.frame().dropna(subset=["train_loss"])
    assert result.ended == "stopped"
    assert evaluations["train_loss"].iloc[-1] <= run["stop_loss"] < evaluations["train_loss"].iloc[-2]
    assert (evaluations["step"] % experiment.steps_per_epoch == 0).all()  # checked at epoch ends only
    final = experiment.final()
    assert not final["capped"] and final["train_loss"] <= run["stop_loss"]

    unreachable = {**run, "stop_loss": 1e-9, "max_epochs": 3}
    capped = ComplexityRun(digits_npz, unreachable, seed=0)
    capped.train()
    final = capped.final()
    assert final["capped"] and final["steps"] == 3 * capped.steps_per_epoch


def test_trace_probe_is_the_trace_of_the_probe_gram(digits_npz):
    experiment = ComplexityRun(digits_npz, _run_spec(tiny_spec(), "tiny_small_cnn_width2_corrupt0"), seed=0)
    row = experiment.trace(None)
    gram = ntk_by_jacobian(experiment.model, experiment.x_probe)  # (n, c, n, c)
    n, c = gram.shape[:2]
    assert row["probe_trace"] == pytest.approx(float(gram.reshape(n * c, n * c).trace()), rel=1e-4)
    assert row["update_norm_sum"] == 0.0


def test_tiny_runs_to_figure_and_claims(digits_npz, tmp_path, monkeypatch):
    spec = tiny_spec()
    monkeypatch.chdir(tmp_path)  # each run's files where the workflow writes them, relative to here
    for name, run in complexity_run_specs(spec).items():
        for seed in spec["seeds"]:
            records, final = complexity_run(digits_npz, run, seed)
            run_id = RUN_COMPLEXITY.id_of({"run": name, "seed": seed})
            measures = tmp_path / RUN_COMPLEXITY.output("measures", run_id)
            measures.parent.mkdir(parents=True, exist_ok=True)
            records.to_csv(RUN_COMPLEXITY.output("records", run_id), index=False)
            measures.write_text(json.dumps(final))
            assert final["learning_flow"] > 0 and final["update_norm_sum"] > 0
            assert final["gap"] == pytest.approx(final["test_error"] - final["train_error"])
    inputs = {panel: george_manifest.complexity_measures(spec, panel) for panel in spec["panels"]}
    finals = read_complexity_finals(inputs, spec)
    assert len(finals) == 12 and set(finals["value"][finals["panel"] == "channels"]) == {2, 4}
    assert finals.loc[finals["panel"] == "channels", "neyshabur"].isna().all()
    assert finals.loc[finals["panel"] != "channels", "neyshabur"].notna().any()

    png = tmp_path / "figures" / "fig_6_6.png"
    plot_fig_6_6(FigureJob("fig_6_6", inputs, spec, str(png), "Complexity measures.", "tiny stand-in"))
    assert png.exists() and png.with_suffix(".pdf").exists()
    caption = json.loads(png.with_suffix(".json").read_text())["caption"]
    assert "capped runs" in caption and "a test" in caption

    for scale in ("quick", "paper"):
        checks = complexity_claims(ClaimsJob(inputs, {"thresholds": claim_thresholds("george_thesis", scale, "complexity"), "spec": spec}))
        assert len(checks) == 6 and all(c.claim_id == "H23" for c in checks)  # per panel: follows, the contrast
        assert all(c.passed in (True, False, None) and c.measured for c in checks)
        assert all("learning_flow" in c.measured for c in checks)
    quick = complexity_claims(ClaimsJob(inputs, {"thresholds": claim_thresholds("george_thesis", "quick", "complexity"), "spec": spec}))
    rho = gap_correlations(panel_curves(finals)).loc["corruption", "learning_flow"]
    corruption_check = next(c for c in quick if c.check.startswith("corruption"))
    assert corruption_check.passed == (None if np.isnan(rho) else bool(rho > 0))


def test_gap_correlations_are_spearman_over_seed_means():
    finals = pd.DataFrame({"panel": ["p"] * 6, "value": [1, 1, 2, 2, 3, 3], "capped": [False] * 6,
                           "gap": [0.1, 0.3, 0.4, 0.4, 0.9, 0.7],
                           **{m: [3.0, 1.0, 1.0, 1.0, 0.0, 0.0] for m in COMPLEXITY_MEASURES}})
    rhos = gap_correlations(panel_curves(finals))
    assert rhos.loc["p", "learning_flow"] == pytest.approx(-1.0)
