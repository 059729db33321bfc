"""Run records read from many files: each run's last record is its own, whatever the index labels
of the files were (a hand-built multi-file fixture, checked through every reader that picks finals)."""

import pandas as pd
import pytest

from linearlens.analysis.iterative_linearisation import read_records
from linearlens.analysis.records import last_records, read_runs
from linearlens.analysis.telescoping import final_by_width
from linearlens.claims.iterative_linearisation import final_accuracy
from linearlens.claims.telescoping import _final_records


def write_runs(tmp_path, runs: dict[str, pd.DataFrame]) -> list:
    paths = []
    for name, frame in runs.items():
        path = tmp_path / f"{name}.csv"
        frame.to_csv(path, index=False)
        paths.append(path)
    return paths


def width_run(width: int, seed: int, steps: list[int]) -> pd.DataFrame:
    # The value at each step encodes (width, step), so a row from the wrong run or step is visible.
    return pd.DataFrame({"setting": f"width{width}", "seed": seed, "step": steps,
                         "test_mse": [width + step / 10_000 for step in steps]})


@pytest.fixture
def width_sweep(tmp_path):
    # Runs of unequal length: label 2 is the last row of the short run and a middle row of the long one.
    return read_runs(write_runs(tmp_path, {
        "w1": width_run(1, 0, [0, 100, 200]),
        "w5": width_run(5, 0, [0, 100, 200, 300, 400]),
        "w10": width_run(10, 0, [0, 50, 100, 150]),
    }))


def test_read_runs_gives_every_row_its_own_label(width_sweep):
    assert len(width_sweep) == 12 and width_sweep.index.is_unique


def test_final_by_width_takes_each_runs_own_last_record(width_sweep):
    final = final_by_width(width_sweep)
    assert final[["width", "step", "test_mse"]].values.tolist() == \
        [[1, 200, 1.02], [5, 400, 5.04], [10, 150, 10.015]]


def test_last_records_ignores_repeated_labels():
    # As the frames were read before the fix: every file's labels start at 0.
    frames = [width_run(1, 0, [0, 100, 200]), width_run(5, 0, [0, 100, 200, 300])]
    repeated = pd.concat(frames)
    assert not repeated.index.is_unique
    last = last_records(repeated, ["setting", "seed"])
    assert last["step"].tolist() == [200, 300] and len(last) == 2
    # The old selection, .loc over idxmax labels, returns a row from every file for each label.
    old = repeated.loc[repeated.groupby(["setting", "seed"])["step"].idxmax()]
    assert len(old) > 2


def test_telescoping_claim_finals_average_each_seeds_last_record(tmp_path):
    def run(seed, steps, error):
        return pd.DataFrame({"setting": "sgd", "lr": 0.1, "seed": seed, "step": steps,
                             "error_telescoping": [error * (1 + s) for s in steps]})
    runs = read_runs(write_runs(tmp_path, {"s0": run(0, [0, 1, 2], 1.0), "s1": run(1, [0, 1, 2, 3], 2.0)}))
    final = _final_records(runs)
    assert len(final) == 1 and final["error_telescoping"].item() == pytest.approx((3.0 + 8.0) / 2)


def test_iterative_linearisation_final_accuracy_reads_each_runs_last_scheduled_point(tmp_path):
    def run(k, seed, accuracies):
        steps = range(len(accuracies))
        return pd.DataFrame({"K": k, "seed": seed, "step": list(steps), "point": "scheduled",
                             "test_accuracy_network": accuracies})
    runs = read_records(write_runs(tmp_path, {
        "k1s0": run("1", 0, [0.1, 0.5, 0.8]), "k1s1": run("1", 1, [0.1, 0.6, 0.7, 0.9]),
        "kinfs0": run("inf", 0, [0.1, 0.4])}))
    final = final_accuracy(runs)
    assert final["1"] == pytest.approx(0.85) and final["inf"] == pytest.approx(0.4)
