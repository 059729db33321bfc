"""Karp thesis chapter 4: the decision-list task, the closed-form gradient of the
transformer under uniform attention against autograd, the one-step structure of Fig 4.1, and its
figure and claims on a produced run."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from configured import claim_thresholds
from linearlens.analysis.karp_thesis.ch4 import (
    permuted_to_diagonal,
    read_one_step,
    secondary_band,
    structure_summary,
)
from linearlens.claims.karp_thesis.ch4 import StructureThresholds, decision_list_claims
from linearlens.config import config_errors, load_scale, load_schema
from linearlens.experiments.karp_thesis.ch4 import (
    decision_list_labels,
    decision_lists,
    expected_structure_entries,
    label_determining_tokens,
    one_hot_columns,
    one_step_run,
    sample_sequences,
    sequence_losses,
    uniform_attention_gradient,
)
from linearlens.figures.karp_thesis.ch4 import plot_fig_4_1
from linearlens.manifests.jobs import ClaimsJob, FigureJob

ROOT = Path(__file__).resolve().parents[1]
THESIS = {"vocabulary_length": 200, "vocabulary": "zero_to_L", "permutation_shift": 20, "list_shifts": [10, 20, 30],
          "sequence_length": 25, "learning_rate": 40000.0, "init_std": 1e-4, "sequences": 10000, "seed": 0}
# The thesis's setting on 2,000 sequences, which already give the same picture as 10,000.
SPEC = {**THESIS, "sequences": 2000}


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """The one-step run at the thesis's setting, written as the rule writes it."""
    path = tmp_path_factory.mktemp("ch4") / "one_step.npz"
    np.savez_compressed(path, **one_step_run(SPEC))
    return path


# --- (b) the task: π a bijection of the chosen vocabulary ------------------------------------------

@pytest.mark.parametrize("vocabulary, size, inputs", [("zero_to_L", 201, range(1, 201)),
                                                      ("zero_to_L_minus_1", 200, range(0, 200))])
def test_permutation_is_a_bijection_of_the_vocabulary(vocabulary, size, inputs):
    task = decision_lists(200, vocabulary)
    assert task.vocabulary_size == size and sorted(task.permutation) == list(range(size))
    assert list(task.input_tokens) == list(inputs)
    assert (task.lists[:, -1] == np.arange(size)).all()  # every list ends with its token


def test_the_default_vocabulary_maps_181_to_0():
    task = decision_lists(200)
    assert task.permutation[181] == 0 and task.permutation[1] == 21 and task.permutation[200] == 19
    assert list(task.lists[195]) == [4, 14, 24, 195]  # f(205) = 4: mod L + 1 = 201
    assert list(task.lists[191]) == [0, 10, 20, 191]  # 0 is in no sequence: skipped


def test_pi_leaves_the_thesis_tokens_1_to_L():
    """The vocabulary's catch: read with [L] = {1..L} and f = i mod (L + 1), π leaves [L] (π(181) = 0)."""
    task = decision_lists(200)
    assert not set(task.permutation[task.input_tokens]) <= set(task.input_tokens)


# --- (c) labels by the decision-list rule on hand-made sequences ----------------------------------

def test_labels_follow_the_decision_list_rule():
    task = decision_lists(200)
    # 5: DL(5) = (15, 25, 35, 5); 15: DL = (25, 35, 45, 15); 25: DL = (35, 45, 55, 25); 100: (110, 120, 130, 100)
    sequences = np.array([[5, 15, 25, 100],     # 5 → 15 (first), 15 → 25, 25 → itself, 100 → itself
                          [5, 35, 25, 120],     # 5 → 25 (15 absent), 35 → itself, 25 → 35, 120 → itself
                          [191, 10, 130, 3]])   # 191: DL = (0, 10, 20, 191) → 10 (0 never in s)
    determining = label_determining_tokens(task, sequences)
    assert determining.tolist() == [[15, 25, 25, 100], [25, 35, 35, 120], [10, 10, 130, 3]]
    assert decision_list_labels(task, sequences).tolist() == [[35, 45, 45, 120], [45, 55, 55, 140], [30, 30, 150, 23]]


def test_sampled_sequences_are_distinct_input_tokens_and_seeded():
    task = decision_lists(200)
    first = sample_sequences(task, 25, 500, np.random.default_rng(3))
    assert first.shape == (500, 25) and first.min() >= 1 and first.max() <= 200
    assert all(len(set(row)) == 25 for row in first)
    assert (first == sample_sequences(task, 25, 500, np.random.default_rng(3))).all()
    # uniform over the input tokens: each appears in about n/L of the sequences
    counts = np.bincount(first.ravel(), minlength=201)[1:]
    assert abs(counts.mean() - 500 * 25 / 200) < 1e-9 and counts.min() > 30


# --- (a) the closed form against autograd of eqs. (4.1)-(4.2) -----------------------------------

@pytest.mark.parametrize("vocabulary, size, length, shifts", [
    ("zero_to_L", 200, 25, (20, (10, 20, 30))),  # the thesis's task
    ("zero_to_L", 40, 6, (7, (3, 5, 11))),
    ("zero_to_L_minus_1", 40, 6, (7, (3, 5, 11))),
])
def test_closed_form_gradient_equals_autograd(vocabulary, size, length, shifts):
    task = decision_lists(size, vocabulary, *shifts)
    rng = np.random.default_rng(1)
    sequences = sample_sequences(task, length, 32, rng)
    labels = decision_list_labels(task, sequences)
    size = task.vocabulary_size
    V = torch.tensor(rng.normal(0.0, 0.5, (size, size)), requires_grad=True)  # away from 0: softmax not uniform
    W = torch.zeros(size, size, dtype=torch.float64)
    sequence_losses(W, V, one_hot_columns(sequences, size), labels).mean().backward()
    closed = uniform_attention_gradient(task, V.detach(), sequences, labels)
    torch.testing.assert_close(closed, V.grad, rtol=1e-10, atol=1e-13)


def test_the_model_attends_uniformly_at_w_zero():
    from linearlens.experiments.karp_thesis.ch4 import transformer_output
    task = decision_lists(20)
    sequences = sample_sequences(task, 5, 3, np.random.default_rng(0))
    X = one_hot_columns(sequences, task.vocabulary_size)
    V = torch.randn(21, 21, dtype=torch.float64)
    output = transformer_output(torch.zeros(21, 21, dtype=torch.float64), V, X)
    p = X.mean(dim=2, keepdim=True)  # (1/n) Σ_k e_{s_k}
    torch.testing.assert_close(output, torch.softmax(V @ p, dim=1).expand_as(output))
    torch.testing.assert_close(output.sum(dim=1), torch.ones(3, 5, dtype=torch.float64))


# --- (d) one step: every column of V₁ peaks at π(a) --------------------------------------------

def test_one_step_puts_each_column_peak_at_its_permuted_row(run):
    record = read_one_step(str(run))
    assert record["V1"].shape == (201, 201) and record["settings"]["vocabulary"] == "zero_to_L"
    summary = structure_summary(record)
    assert summary["columns"] == 200
    assert summary["fraction_at_permutation"] >= StructureThresholds(**claim_thresholds("karp_thesis", "quick", "structure")).columns_at_permutation
    # a numpy re-run (seed 0, N = 2,000): c = 7.00, largest off-structure entry 0.90, mean off -0.035
    assert summary["structure_mean"] == pytest.approx(7.0, abs=0.05)
    assert summary["structure_mean"] == pytest.approx(summary["analytic_structure_mean"], rel=1e-3)
    assert 0.5 < summary["largest_off_structure_mean"] < 1.5
    assert summary["off_structure_mean"] == pytest.approx(-0.035, abs=0.005)
    assert 0.4 < summary["secondary_band_mean"] < 0.9


def test_the_first_order_value_matches_the_spec():
    """η/(nL)·(E[#] − n/(L + 1)) ≈ 8·(1.0 − 0.124) ≈ 7.0, and its mean is η/(nL)·(1 − n/(L + 1))
    exactly, since the counts of a sequence's labels over its tokens sum to n."""
    values = expected_structure_entries(decision_lists(200), 25, 40000.0)
    assert len(values) == 200
    assert values.mean() == pytest.approx(8 * (1 - 25 / 201), rel=1e-12)
    assert 6.0 < values.min() < values.max() < 8.0


def test_the_first_order_values_match_a_large_sample():
    """Per token, on a small task where 20,000 sequences pin each column down."""
    spec = {**THESIS, "vocabulary_length": 30, "sequence_length": 5, "learning_rate": 900.0, "sequences": 20000,
            "permutation_shift": 4, "list_shifts": [2, 4, 7]}
    record = one_step_run(spec)
    columns = record["input_tokens"]
    measured = record["V1"][record["permutation"][columns], columns]
    assert np.abs(measured - record["analytic_structure"]).max() < 0.15 * np.abs(record["analytic_structure"]).mean()


def test_the_run_is_seeded(run):
    again = one_step_run(SPEC)
    record = read_one_step(str(run))
    assert np.array_equal(again["V1"], record["V1"]) and np.array_equal(again["V0"], record["V0"])
    other = one_step_run({**SPEC, "seed": 1})
    assert not np.array_equal(other["V0"], record["V0"])
    assert record["V0"].std() == pytest.approx(1e-4, rel=0.01)


def test_permuted_to_diagonal_moves_the_structure_to_the_diagonal():
    permutation = np.array([2, 0, 3, 1])
    P = np.zeros((4, 4))
    P[permutation, np.arange(4)] = 1
    assert np.array_equal(permuted_to_diagonal(5 * P, permutation), 5 * np.eye(4))
    V = np.arange(16.0).reshape(4, 4)
    assert np.array_equal(permuted_to_diagonal(V, permutation), V @ P.T)


def test_secondary_band_reads_the_first_list_entry():
    task = decision_lists(200)
    V = np.zeros((201, 201))
    V[task.permutation[task.lists[:, 0]], np.arange(201)] = 1.0
    band = secondary_band(V, task.permutation, task.lists, task.input_tokens)
    assert len(band) == 199 and (band == 1).all()  # column 191's list starts with 0, column 0 no input


# --- figure and claims on a produced run ------------------------------------------------------

def _claims(path) -> list:
    return decision_list_claims(ClaimsJob(inputs={"one_step": [str(path)]}, params={"thresholds": claim_thresholds("karp_thesis", "quick", "structure")}))


def test_claims_pass_on_the_run(run):
    checks = {check.claim_id: check for check in _claims(run)}
    assert set(checks) == {"DL1", "DL2", "DL3"}
    assert checks["DL1"].passed is True and "100.0% of 200 columns" in checks["DL1"].measured
    assert checks["DL2"].passed is True and checks["DL3"].passed is None
    assert "vocabulary {0..200}" in checks["DL1"].check


def test_claims_fail_without_the_structure(run, tmp_path):
    """V₁ with its columns shuffled (the same entries, no permutation structure) fails DL1 and DL2."""
    contents = dict(np.load(run))
    shuffled = np.random.default_rng(0).permutation(contents["V1"].shape[1])
    contents["V1"] = contents["V1"][:, shuffled]
    path = tmp_path / "shuffled.npz"
    np.savez_compressed(path, **contents)
    checks = {check.claim_id: check for check in _claims(path)}
    assert checks["DL1"].passed is False and checks["DL2"].passed is False


def test_claims_fail_on_a_step_of_the_wrong_sign(run, tmp_path):
    contents = dict(np.load(run))
    contents["V1"] = 2 * contents["V0"] - contents["V1"]  # V₀ + ηG: the step uphill
    np.savez_compressed(tmp_path / "uphill.npz", **contents)
    checks = {check.claim_id: check for check in _claims(tmp_path / "uphill.npz")}
    assert checks["DL1"].passed is False and "0.0%" in checks["DL1"].measured


def test_no_run_no_claims():
    assert decision_list_claims(ClaimsJob(inputs={}, params={"thresholds": claim_thresholds("karp_thesis", "quick", "structure")})) == []
    assert claim_thresholds("karp_thesis", "quick", "structure") == claim_thresholds("karp_thesis", "paper", "structure")


def test_figure_writes_png_pdf_and_sidecar(run, tmp_path):
    png = tmp_path / "fig_4_1.png"
    plot_fig_4_1(FigureJob("fig_4_1", {"one_step": [str(run)]}, SPEC, str(png), "Fig 4.1:",
                           "synthetic: decision lists"))
    for suffix in (".png", ".pdf", ".json"):
        assert png.with_suffix(suffix).stat().st_size > 0
    sidecar = json.loads(png.with_suffix(".json").read_text())
    assert sidecar["data_source"].startswith("synthetic: decision lists") and "N = 2,000 sequences" in sidecar["data_source"]
    assert "seed 0" in sidecar["data_source"] and "vocabulary {0..200}" in sidecar["caption"]
    assert "100.0% of the 200 input columns" in sidecar["caption"] and "column 0, never an input" in sidecar["caption"]
    assert "row 20 = π of it is never a label" in sidecar["caption"]


# --- config -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["quick", "paper", "smoke"])
def test_every_config_sets_chapter_4(name):
    spec = load_scale(name)["karp_thesis"]["ch4"]
    if name != "smoke":
        assert spec == THESIS


def test_smoke_setting_keeps_the_structure():
    spec = load_scale("smoke")["karp_thesis"]["ch4"]
    record = one_step_run(spec)
    record["settings"] = json.loads(str(record["settings"]))
    assert structure_summary(record)["fraction_at_permutation"] >= 0.99


@pytest.mark.parametrize("mutate, key, expectation", [
    (lambda spec: spec.update(vocabluary="zero_to_L"), "karp_thesis.ch4", "'vocabluary' was unexpected"),
    (lambda spec: spec.update(vocabulary="one_to_L"), "karp_thesis.ch4.vocabulary", "is not one of"),
    (lambda spec: spec.pop("seed"), "karp_thesis.ch4", "'seed' is a required property"),
    (lambda spec: spec.update(learning_rate=0), "karp_thesis.ch4.learning_rate", "less than or equal to the minimum"),
])
def test_invalid_chapter_4_config_names_the_key(mutate, key, expectation):
    config = load_scale("smoke")
    mutate(config["karp_thesis"]["ch4"])
    problems = config_errors(config, load_schema(ROOT / "config" / "schema" / "config.schema.yaml"))
    assert any(f"config key '{key}'" in p and expectation in p for p in problems), problems


def test_sequences_longer_than_the_inputs_are_refused():
    with pytest.raises(ValueError, match="5 distinct tokens from 4 input tokens"):
        sample_sequences(decision_lists(4), 5, 1, np.random.default_rng(0))
