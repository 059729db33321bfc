"""Karp thesis chapter 2 figures and Table 2.1 on tiny synthetic runs in the real column format."""

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from linearlens.analysis.karp_thesis.ch2 import per_size_maxima, power_law_fit
from linearlens.figures.karp_thesis import ch2 as figures
from linearlens.manifests.jobs import FigureJob

SIZES = [100, 300, 900]
PAIRS = 4
TRIALS = [1, 2]
NETWORK = {"dataset": "digits_10class", "model": {"name": "mlp", "in_features": 64, "hidden": [64], "out_features": 10},
           "loss": "cross_entropy", "optimiser": {"name": "sgd", "lr": 0.1, "momentum": 0.0}, "batch_size": 32,
           "steps": 2400, "snapshots": {"early": 800, "main": 1600, "late": 2400}, "sizes": SIZES, "pairs": PAIRS,
           "pairs_per_job": PAIRS, "trials": TRIALS, "keep_states": [100, 900]}
PARAMS = {
    "configurations": {
        "lr": {**NETWORK, "label": "logistic regression", "dataset": "digits_binary", "loss": "logistic",
               "snapshots": {"main": 5000}, "steps": 5000, "trials": [1]},
        "1a": {**NETWORK, "label": "1a", "standin": "MLP 64-64-10 on digits for ResNet-20 on SVHN",
               "optimiser": {"name": "sgd", "lr": 0.05, "momentum": 0.0}},
        "2a": {**NETWORK, "label": "2a", "standin": "MLP 64-64-10 on digits for ResNet-20 on CIFAR-10",
               "lr_drops": [512, 768]},
        "2b": {**NETWORK, "label": "2b", "standin": "MLP 64-64-10 on digits for ResNet-20 on CIFAR-10",
               "lr_drops": [512, 768], "optimiser": {"name": "sgd", "lr": 0.1, "momentum": 0.9}, "trials": [1]},
    },
    "sweep": {"configuration": "1a", "trial": 1, "samples": 3, "sizes": [50, 100, 200, 900]},
    "interpolation": {"start": -1.0, "stop": 2.0, "points": 7, "pairs": 2, "seed": 0},
}
# Two of the three networks have runs, 2b of one trial only, to keep the test fast: the figures read
# their configurations and trials from the rows (Table 2.1 reads all three from the config).
NETWORKS = ["1a", "2b"]
SOURCE = "synthetic rows — stand-in for SVHN and CIFAR-10"
COLUMNS = ["train_loss", "train_error", "test_loss", "test_error", "gap_loss", "gap_error", "norm"]


def _measures(rng, m: int, count: int) -> dict:
    """Quantities decaying like m^-0.5 with noise (the gap and stability) or growing (the norms)."""
    decay = 3.0 * m ** -0.5 * rng.uniform(0.2, 1.0, count)
    values = {column: decay for column in COLUMNS}
    values.update(norm=10 + np.log(m) * rng.uniform(0.9, 1.1, count), stability=decay, distance=decay)
    return values


def _pair_rows(configuration: str, trial: int, m: int, rng) -> pd.DataFrame:
    snapshots = PARAMS["configurations"][configuration]["snapshots"]
    frames = []
    for snapshot, step in snapshots.items():
        values = _measures(rng, m, PAIRS)
        frame = pd.DataFrame({"configuration": configuration, "trial": trial, "m": m, "pair": range(PAIRS),
                              "snapshot": snapshot, "step": step, "position": 0, "z": 1, **values})
        for column in COLUMNS:
            frame[f"{column}_prime"] = frame[column]
        frame["stability_point"], frame["stability_at_z"] = 1, True
        frame["normalised_distance"] = frame["distance"] / frame["norm"]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _curves(configuration: str, trial: int, m: int) -> pd.DataFrame:
    alphas = np.linspace(-1, 2, PARAMS["interpolation"]["points"])
    return pd.DataFrame([{"configuration": configuration, "trial": trial, "m": m, "pair": pair, "alpha": alpha,
                          "train_accuracy": 1 - 0.1 * abs(alpha - 0.5) - 0.01 * pair, "test_accuracy": 0.9 - 0.1 * alpha * (1 - alpha)}
                         for pair in (3, 7) for alpha in alphas])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Pair rows, sweep rows, curves and provenance records written as the pipeline writes them."""
    root = tmp_path_factory.mktemp("ch2")
    rng = np.random.default_rng(0)
    files = {"pairs": {}, "curves": {}, "sweep": []}
    for name in ["lr", *NETWORKS]:
        settings = PARAMS["configurations"][name]
        for trial in settings["trials"]:
            for m in SIZES:
                path = root / f"pairs/{name}/trial{trial}/m{m}/block0.csv"
                path.parent.mkdir(parents=True)
                _pair_rows(name, trial, m, rng).to_csv(path, index=False)
                files["pairs"].setdefault(name, []).append(str(path))
            for m in settings["keep_states"] if name != "lr" else []:
                path = root / f"interpolation/{name}/trial{trial}/m{m}.csv"
                path.parent.mkdir(parents=True, exist_ok=True)
                _curves(name, trial, m).to_csv(path, index=False)
                files["curves"].setdefault(name, []).append(str(path))
    for m in (50, 200):  # the sweep's own sizes; 100 and 400 come from the pair runs
        values = _measures(rng, m, 3)
        rows = pd.DataFrame({"configuration": "1a", "trial": 1, "m": m, "sample": np.tile(range(3), 2),
                             "snapshot": np.repeat(["early", "late"], 3), "step": np.repeat([800, 2400], 3),
                             **{column: np.tile(values[column], 2) for column in COLUMNS}})
        path = root / f"sweep/1a/trial1/m{m}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        rows.to_csv(path, index=False)
        files["sweep"].append(str(path))
    provenance = root / "data/digits_10class.json"
    provenance.parent.mkdir()
    provenance.write_text(json.dumps({
        "source_description": "scikit-learn digits", "standin_for": "CIFAR-10", "transforms": [],
        "arrays": {"y_train": {"shape": [1258]}, "y_test": {"shape": [539]}}}))
    files["provenance"] = [str(provenance)]
    return files


def _job(figure: str, inputs: dict, png) -> FigureJob:
    return FigureJob(figure, inputs, PARAMS, str(png), "", SOURCE)


def _inputs(runs, names, trials=None, kind="pairs") -> dict:
    key = "runs" if kind == "pairs" else "curves"
    paths = [path for name in names for path in runs[kind][name]
             if trials is None or any(f"/trial{t}/" in path for t in trials)]
    return {key: paths, "provenance": runs["provenance"]}


FIGURE_INPUTS = {
    "fig_2_1": lambda runs: _inputs(runs, ["lr"]),
    "fig_2_2": lambda runs: _inputs(runs, NETWORKS, [1]),
    "fig_2_3": lambda runs: _inputs(runs, NETWORKS, [1]),
    "fig_2_4": lambda runs: _inputs(runs, NETWORKS, [1], "curves"),
    "fig_A_1": lambda runs: {"sweep": runs["sweep"], "pairs": [p for p in runs["pairs"]["1a"] if "/trial1/" in p and
                                                               ("/m100/" in p or "/m900/" in p)],
                             "provenance": runs["provenance"]},
    # the trials as columns once (A.2); the others from 2b's single trial, the same code
    **{f"fig_A_{n}": (lambda name: lambda runs: _inputs(runs, [name]))("1a" if n == 2 else "2b") for n in range(2, 11)},
    **{f"fig_A_{n}": lambda runs: _inputs(runs, NETWORKS) for n in (11, 12, 13)},
    "fig_A_14": lambda runs: _inputs(runs, ["1a"], [2], "curves"),
    "fig_A_15": lambda runs: _inputs(runs, ["1a"], [2], "curves"),
}


@pytest.mark.parametrize("figure", list(FIGURE_INPUTS))
def test_every_figure_is_written_with_its_data_source(figure, runs, tmp_path):
    png = tmp_path / f"{figure}.png"
    getattr(figures, f"plot_{figure}")(_job(figure, FIGURE_INPUTS[figure](runs), png))
    assert png.exists() and png.with_suffix(".pdf").exists()
    sidecar = json.loads(png.with_suffix(".json").read_text())
    assert sidecar["figure"] == figure and sidecar["data_source"] == SOURCE
    assert "step" in sidecar["caption"]
    if figure != "fig_2_1":  # the networks are stand-ins here; the logistic regression has none
        assert "stand-in: MLP 64-64-10" in sidecar["caption"]


def test_the_annotated_exponent_is_the_power_law_fit_of_the_maxima():
    rng = np.random.default_rng(1)
    sizes = np.repeat(SIZES, 6)
    rows = pd.DataFrame({"m": sizes, "gap_loss": 3.0 * sizes ** -0.5 * rng.uniform(0.3, 1.0, len(sizes))})
    rows.loc[rows.groupby("m")["gap_loss"].idxmax(), "gap_loss"] = 3.0 * np.array(SIZES) ** -0.5
    fig, ax = plt.subplots()
    summary = figures.motif_panel(ax, rows, "gap_loss")
    maxima = per_size_maxima(rows, "gap_loss")
    a, b = power_law_fit(maxima.index, maxima.to_numpy())
    assert (summary["a"], summary["b"]) == (a, b)
    assert b == pytest.approx(-0.5, abs=1e-6) and a == pytest.approx(3.0, rel=1e-5)
    assert "b = −0.50" in [text.get_text() for text in ax.get_legend().get_texts()]
    plt.close(fig)


def test_table_2_1_rows_columns_and_markdown(runs, tmp_path):
    csv = tmp_path / "tables/table_2_1.csv"
    params = {name: PARAMS["configurations"][name] for name in ("1a", "2a", "2b")}
    figures.table_2_1(FigureJob("table_2_1", {"provenance": runs["provenance"]}, params, str(csv), "", SOURCE))
    table = pd.read_csv(csv)
    assert list(table.columns[:8]) == ["ID", "Data", "Model", "Learning rate", "Batch size", "Momentum",
                                       "Weight decay", "Steps"]
    assert list(table["ID"]) == ["1a", "2a", "2b"]
    assert list(table["Learning rate"]) == ["0.05 constant", "0.1, ×0.1 after steps 512 and 768",
                                            "0.1, ×0.1 after steps 512 and 768"]
    assert list(table["Momentum"]) == [0.0, 0.0, 0.9] and set(table["Weight decay"]) == {0.0}
    assert table["Data"][0].startswith("digits_10class (scikit-learn digits") and "stand-in for CIFAR-10" in table["Data"][0]
    assert table["Model"][0] == "MLP 64-64-10 on digits for ResNet-20 on SVHN"
    markdown = csv.with_suffix(".md").read_text().splitlines()
    assert markdown[0].startswith("| ID | Data | Model |") and len(markdown) == 2 + 3
    assert json.loads(csv.with_suffix(".json").read_text())["data_source"] == SOURCE


def test_model_and_learning_rate_in_words():
    assert figures.model_text({"name": "resnet20", "num_classes": 10}) == "resnet20(num_classes=10)"
    assert figures.learning_rate_text({"optimiser": {"lr": 0.1}, "lr_drops": [32000], "lr_drop_factor": 0.5}) == (
        "0.1, ×0.5 after step 32,000")
