"""The rehearsal of the paper path (config/rehearsal.yaml over config/paper.yaml): it may differ from
the paper configuration only in budgets, grids, batch and data sizes, the device and the data switch,
so that what it exercises is the paper's code path; and its DAG holds every rule of the paper DAG."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest

from linearlens.config import load_scale, validate_config

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "config" / "paper.yaml"
REHEARSAL = ROOT / "config" / "rehearsal.yaml"
SCHEMA = ROOT / "config" / "schema" / "config.schema.yaml"

# The keys the rehearsal may change, by what they are. A key not named here keeps the paper's value.
BUDGET = {"steps", "epochs", "iterations", "max_epochs", "patience_epochs", "pretrain_steps", "train_steps",
          "stage_steps", "probe_steps", "warmup_steps", "min_iterations", "max_iterations", "n_estimators",
          "max_iter", "change_steps", "eval_every", "log_points", "checkpoint_every", "checkpoints",
          "error_every", "recompute_every", "every", "trace_every", "halve_every", "full_kernel_every",
          "window_end", "window_every", "lag", "lag_k", "time_points", "claim_points", "curve_points",
          "gram_points", "drops", "lr_drops", "early", "main", "late", "spawn_steps", "keep_states",
          "dense_epochs", "random_points", "until", "validation_batches", "bn_statistics_batches",
          "grid", "picture_grid", "rows", "K"}
GRID = {"seeds", "outer_seeds", "inner_seeds", "widths", "sizes", "train_sizes", "levels", "learning_rates",
        "other_seeds", "values", "proportions", "lr", "damping", "starts", "block_sizes", "kfac", "ekfac", "alpha_points",
        "points", "pairs", "trials", "samples", "directions", "inits"}
BATCH = {"batch_size", "micro_batch_size", "batch_sizes", "pairs_per_job", "chunk_size", "eval_batch", "statistics_batch"}
DATA_SIZE = {"n_train", "n_test", "n_validation", "train_size", "probe_size", "examples", "per_class",
             "tracked", "n_easy", "n_difficult", "n_probe", "n_eval", "n_points", "n_features", "n_subsamples",
             "c_grid_size", "test_samples", "sequences", "count", "trace_probe", "balanced_per_cell"}
RUN = {"scale", "device", "fixture_data", "threads"}
ALLOWED = BUDGET | GRID | BATCH | DATA_SIZE | RUN


def rehearsal_config() -> dict:
    """The configuration ``--configfile config/paper.yaml config/rehearsal.yaml`` builds."""
    return load_scale("rehearsal")


def differences(paper, rehearsal, path=()):
    """Paths of the leaves where ``rehearsal`` differs from ``paper`` (dicts and equally long lists of
    dicts are compared element by element; any other value is one leaf)."""
    if isinstance(paper, dict) and isinstance(rehearsal, dict):
        for key in paper.keys() | rehearsal.keys():
            yield from differences(paper.get(key), rehearsal.get(key), (*path, key))
    elif (isinstance(paper, list) and isinstance(rehearsal, list) and len(paper) == len(rehearsal)
          and any(isinstance(item, dict) for item in paper)):
        for index, (old, new) in enumerate(zip(paper, rehearsal)):
            yield from differences(old, new, (*path, index))
    elif paper != rehearsal:
        yield path


def disallowed(paper: dict, rehearsal: dict) -> list[str]:
    """The differing leaves that are neither allow-listed by key (their key or, inside a budget such as
    ``iterations: {linear: ...}``, their parent's key; never inside a ``model``) nor listed by path in the
    rehearsal's ``model_exceptions``."""
    exceptions = rehearsal.get("model_exceptions", {})

    def allowed(path):
        keys = [key for key in path if isinstance(key, str)]
        return "model" not in keys and bool(ALLOWED.intersection(keys[-2:]))
    dotted = (".".join(map(str, path)) for path in differences(paper, rehearsal)
              if path != ("model_exceptions",) and not allowed(path))
    return [path for path in dotted if path not in exceptions]


def test_the_rehearsal_is_a_valid_configuration():
    validate_config(rehearsal_config(), SCHEMA, source="config/paper.yaml + config/rehearsal.yaml")


def test_the_rehearsal_differs_from_the_paper_only_in_allow_listed_keys():
    assert disallowed(load_scale("paper"), rehearsal_config()) == []


def test_a_changed_model_is_caught_as_a_difference_that_is_not_allowed():
    paper = load_scale("paper")
    changed = copy.deepcopy(paper)
    changed["george_thesis"]["ch3"]["showcase"]["model"]["name"] = "resnet18"
    changed["telescoping"]["approximation"]["steps"] = 3
    assert disallowed(paper, changed) == ["george_thesis.ch3.showcase.model.name"]


def test_a_narrowed_model_is_caught_unless_it_is_a_listed_exception():
    paper = load_scale("paper")
    narrowed = copy.deepcopy(paper)
    narrowed["karp_thesis"]["ch3"]["model"]["widths"] = [16, 32, 64]   # "widths" is a grid key elsewhere
    assert disallowed(paper, narrowed) == ["karp_thesis.ch3.model.widths"]
    narrowed["model_exceptions"] = {"karp_thesis.ch3.model.widths": "too slow on 2 cores"}
    assert disallowed(paper, narrowed) == []


def test_every_listed_exception_is_a_change_the_rehearsal_makes():
    paper, rehearsal = load_scale("paper"), rehearsal_config()
    changed = {".".join(map(str, path)) for path in differences(paper, rehearsal)}
    assert set(rehearsal["model_exceptions"]) <= changed


def test_the_rehearsal_cuts_a_budget_of_every_document():
    paper, rehearsal = load_scale("paper"), rehearsal_config()
    changed = {path[0] for path in differences(paper, rehearsal)}
    assert {"telescoping", "iterative_linearisation", "george_thesis", "karp_thesis"} <= changed


# Paper rules the rehearsal replaces by writing generated files (rules/rehearsal.smk) instead, and
# Table C.1's evaluation, which no harness here can make (its job names what is missing).
NOT_REHEARSED = {"download_file", "fetch_openml", "karp_thesis_ch5_missing_checkpoint",
                 "karp_thesis_ch5_evaluate_downstream"}


def planned_rules(*configfiles: Path, directory: Path, targets: tuple[str, ...]) -> set[str]:
    """The rules of the DAG ``snakemake <targets>`` plans for these configuration files (a dry run)."""
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", *targets, "-n", "--quiet", "rules", "--directory", str(directory),
         "--configfile", *map(str, configfiles)],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split() for line in result.stdout.splitlines()]
    return {row[0] for row in rows if len(row) == 2 and row[1].isdigit() and row[0] not in ("total", "job")}


@pytest.mark.workflow
def test_the_rehearsal_dag_holds_every_rule_of_the_paper_dag(tmp_path):
    paper = planned_rules(PAPER, directory=tmp_path / "paper", targets=("all", "paper_karp_thesis_unreleased"))
    rehearsal = planned_rules(PAPER, REHEARSAL, directory=tmp_path / "rehearsal", targets=("rehearse",))
    assert len(paper) > 100
    targets = {"all", "paper_karp_thesis_unreleased", "rehearse"}
    assert paper - rehearsal - targets <= NOT_REHEARSED
    assert {"write_fixtures", "report"} <= rehearsal
