"""Analysis for Chapter 6 (NTK alignment) and appendix B. Torch-free summaries (pandas and numpy only) behind
Figs 6.1-6.6 and B.1-B.8 (tangent-kernel spectrum, alignment with the labels, SuperNat, complexity
measures); Fig 6.5's left half is an algorithm box, drawn with its curves."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and label alignment over training ---

RUN_COLUMNS = ("family", "setting", "seed", "label_noise", "lr")


def read_kernel_runs(paths: list[str], runs: list[dict]) -> pd.DataFrame:
    """One frame of a group's run files (rows, layers or spectra), each row tagged with its run."""
    frames = []
    for path, run in zip(paths, runs):
        frame = pd.read_csv(path)
        for position, column in enumerate(RUN_COLUMNS):
            frame.insert(position, column, run[column])
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def example_mean_share(gram: np.ndarray) -> float:
    """‖K − K_c‖_F / ‖K‖_F for an (n, c, n, c) Gram, K_c its Gram of centred tangent features
    Φ(x) − E_x Φ(x): how much of the uncentred kernel is the example-mean tangent feature's part."""
    gram = np.asarray(gram, dtype=np.float64)
    mean_part = gram.mean(0, keepdims=True) + gram.mean(2, keepdims=True) - gram.mean((0, 2), keepdims=True)
    return float(np.linalg.norm(np.broadcast_to(mean_part, gram.shape)) / np.linalg.norm(gram))


def example_mean_shares(grams_path: str, probe: str = "test") -> pd.DataFrame:
    """``example_mean_share`` of a run's saved Grams of one probe set, per step."""
    with np.load(grams_path) as saved:
        return pd.DataFrame({"step": saved["steps"],
                             "share": [example_mean_share(gram) for gram in saved[f"gram_{probe}"]]})


def rise_step(steps: pd.Series, values: pd.Series, share: float) -> float:
    """The first step where a curve has covered ``share`` of its way from its start to its peak
    (NaN when it never rises)."""
    start, peak = values.iloc[0], values.max()
    if not peak > start:
        return float("nan")
    return float(steps[values >= start + share * (peak - start)].iloc[0])


def half_rise_step(steps: pd.Series, values: pd.Series) -> float:
    """The first step where a curve has covered half its way from its start to its peak: when it
    rises (NaN when it never rises)."""
    return rise_step(steps, values, 0.5)


def rise_decades(steps: pd.Series, values: pd.Series) -> float:
    """How long a curve takes to rise, on the log-iteration axis of the thesis's plots: decades of
    iterations from 10% to 90% of its rise (NaN when it never rises)."""
    early, late = rise_step(steps, values, 0.1), rise_step(steps, values, 0.9)
    return float(np.log10(max(late, 1.0)) - np.log10(max(early, 1.0)))


def still_rising(values: pd.Series) -> bool:
    """Whether a curve ends above all its earlier records: still rising when the run stops."""
    return bool(len(values) > 1 and values.iloc[-1] > values.iloc[:-1].max())


def high_span(steps: pd.Series, values: pd.Series) -> float:
    """Iterations over which a curve stays at or above half its way from its start to its peak:
    from the first step there to the last (NaN when it never rises)."""
    start, peak = values.iloc[0], values.max()
    if not peak > start:
        return float("nan")
    high = steps[values >= start + (peak - start) / 2]
    return float(high.iloc[-1] - high.iloc[0])


def noise_label(label_noise: float) -> str:
    return f"{label_noise:.0%} random labels" if label_noise else "no random labels"


def network_name(names: dict) -> str:
    """The network as the thesis names it, and what stands in for it at this scale."""
    return f"{names['standin']} (stand-in for {names['label']})" if names.get("standin") else names["label"]


def run_title(run: dict, families: dict) -> str:
    return f"{network_name(families[run['family']])}\n{noise_label(run['label_noise'])}, lr {run['lr']:g}"


def spearman(x, y) -> float:
    return float(pd.Series(np.asarray(x, dtype=float)).corr(pd.Series(np.asarray(y, dtype=float)), method="spearman"))


# --- Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task ---

DISK_RATIO_INDEX = 20  # the thesis's anisotropy measure λ20/λ1 (eigenvalues numbered from 1)


def read_npz(path) -> dict[str, np.ndarray]:
    with np.load(path) as contents:
        return {key: contents[key] for key in contents.files}


def label_correlations(vectors: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """|Pearson correlation| of each eigenfunction (columns of ``vectors``, sampled on the grid)
    with the grid's labels: how much class structure (the disk) each carries."""
    centred_vectors = vectors - vectors.mean(0)
    centred_labels = labels - labels.mean()
    norms = np.linalg.norm(centred_vectors, axis=0) * np.linalg.norm(centred_labels)
    return np.abs(centred_labels @ centred_vectors) / np.where(norms > 0, norms, np.inf)


def disk_rows(run: dict[str, np.ndarray]) -> pd.DataFrame:
    """One row per snapshot of a disk run: its seed, iteration, λ20/λ1, the largest |correlation|
    of the top eigenfunctions with the labels and which eigenfunction carries it (numbered from 1)."""
    correlations = np.stack([label_correlations(v, run["grid_labels"].astype(float)) for v in run["eigenvectors"]])
    return pd.DataFrame({"seed": int(run["seed"]), "iteration": run["rows"], "ratio": run["ratios"][:, DISK_RATIO_INDEX - 1],
                         "label_correlation": correlations.max(1), "most_correlated": correlations.argmax(1) + 1})


def disk_summary(paths) -> pd.DataFrame:
    """``disk_rows`` of every run (one seed per file)."""
    return pd.concat([disk_rows(read_npz(path)) for path in paths], ignore_index=True)


def percent(value: float) -> str:
    """A small share as the thesis writes it: 1.5%, 0.2%, 0.04%."""
    return f"{100 * value:.2g}%"


# --- Fig B.2: spectral bias of a random MLP's tangent kernel ---

SPECTRAL_RATIO_INDEX = 10  # the thesis's λ10/λ1 ≈ 4% (eigenvalues numbered from 1)
FOURIER_RANGE = 25  # "the first half of the spectrum": eigenvectors j < 25 of 50


def frequency_trend(dominant: np.ndarray, count: int = FOURIER_RANGE) -> dict[str, float]:
    """How monotone the dominant DFT frequency is in the eigen-index over the first ``count``
    eigenvectors: Spearman ρ(j, frequency) and the share of steps j → j + 1 that do not lower it."""
    frequencies = pd.Series(np.asarray(dominant[:count], dtype=float))
    index = pd.Series(np.arange(len(frequencies), dtype=float))
    return {"spearman": float(index.corr(frequencies, method="spearman")),
            "monotone_share": float(np.mean(np.diff(frequencies.to_numpy()) >= 0)), "count": len(frequencies)}


# --- Fig 6.5: SuperNat vs gradient descent on noisy linear regression ---

SUPERNAT_METHODS = {"gd": "gradient descent", "supernat": "SuperNat"}


def read_supernat(path: str) -> dict[str, np.ndarray]:
    """Every array of the SuperNat run file (curves.npz), loaded."""
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def supernat_curves(record: dict[str, np.ndarray]) -> pd.DataFrame:
    """Test error over iterations per method: mean and standard deviation over seeds (long format)."""
    frames = []
    for method in SUPERNAT_METHODS:
        errors = record[f"test_error_{method}"]
        frames.append(pd.DataFrame({"iteration": record["iterations"], "method": method,
                                    "mean": errors.mean(axis=0), "std": errors.std(axis=0)}))
    return pd.concat(frames, ignore_index=True)


def supernat_final_errors(record: dict[str, np.ndarray]) -> pd.DataFrame:
    """Each seed's test error at the last iteration, one column per method."""
    return pd.DataFrame({"seed": record["seeds"],
                         **{method: record[f"test_error_{method}"][:, -1] for method in SUPERNAT_METHODS}})


def supernat_best_errors(record: dict[str, np.ndarray]) -> pd.DataFrame:
    """Per method (index), the lowest seed-mean test error over the run and the iteration it is reached at."""
    curves = supernat_curves(record)
    best = curves.loc[curves.groupby("method")["mean"].idxmin()].set_index("method")
    return best[["mean", "iteration"]]


# --- Fig B.3: which norm measures capacity (random RBF features) ---

def read_rbf_capacity(path: str) -> dict[str, np.ndarray]:
    """Every array of the RBF-capacity run file (bounds.npz), loaded."""
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


RBF_CURVES = {"test_error": "test 0-1 error", "bound_identity": "A = Id bound",
              "bound_optimised": "optimised-A bound (Prop B.2.5)"}


def rbf_capacity_curves(record: dict[str, np.ndarray]) -> pd.DataFrame:
    """Per c (index): mean and standard deviation over the subsamples of the test error and both bounds,
    the smallest numerical rank of a sample feature matrix and the largest training residual."""
    columns = {}
    for key in RBF_CURVES:
        columns[f"{key}_mean"] = record[key].mean(axis=0)
        columns[f"{key}_std"] = record[key].std(axis=0)
    columns["min_rank"] = record["rank"].min(axis=0)
    columns["max_train_residual"] = record["train_residual"].max(axis=0)
    return pd.DataFrame(columns, index=pd.Index(record["c_grid"], name="c"))


def rbf_capacity_trends(curves: pd.DataFrame) -> dict[str, float]:
    """How each bound follows the test error over c: Spearman ρ of the subsample means, and the bound at
    the largest c over its minimum on the grid (how loose it grows as c → 1)."""
    error = curves["test_error_mean"]
    trends = {}
    for bound in ("bound_identity", "bound_optimised"):
        values = curves[f"{bound}_mean"]
        trends[f"{bound}_spearman"] = float(values.corr(error, method="spearman"))
        trends[f"{bound}_growth"] = float(values.iloc[-1] / values.min())
    return trends


# --- Fig B.1: output change along the Jacobian's top singular directions ---

TOP, RANDOM = "top singular", "random"
# The scalars of a run's npz repeated on each of its rows (the arrays are the changes and the spectrum).
PERTURBATION_SCALARS = ("seed", "epsilon", "steps", "n_params", "n_train", "n_probe", "n_eval", "num_classes",
                        "train_accuracy", "train_loss", "test_accuracy", "test_loss")


def read_perturbation_runs(paths) -> pd.DataFrame:
    """One row per (run, direction): direction 1…k are the top right singular vectors of the Jacobian
    (``kind`` "top singular"), k+1…2k the random ones ("random"); ``change`` = ‖f_{w+εv}(X) − f_w(X)‖₂,
    ``eigenvalue`` λ_j of the probe Gram for the top ones (NaN for random), and the run's scalars."""
    frames = []
    for path in paths:
        with np.load(path) as run:
            top, random = run["top_changes"], run["random_changes"]
            k = len(top)
            frame = pd.DataFrame({"direction": np.arange(1, 2 * k + 1), "kind": [TOP] * k + [RANDOM] * len(random),
                                  "change": np.concatenate([top, random]),
                                  "eigenvalue": np.concatenate([run["spectrum"][:k], np.full(len(random), np.nan)])})
            for name in PERTURBATION_SCALARS:
                frame[name] = run[name].item()
            frame["eigenvalue_share"] = frame["eigenvalue"] / run["spectrum"].sum()
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def perturbation_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per seed: mean change along the top and the random directions and their ratio (claim H26), the
    smallest top change and the largest random one, the share of top directions that move f more than
    every random direction, and the test accuracy."""
    rows = []
    for seed, run in runs.groupby("seed"):
        top, random = run.loc[run["kind"] == TOP, "change"], run.loc[run["kind"] == RANDOM, "change"]
        rows.append({"seed": seed, "mean_top": top.mean(), "mean_random": random.mean(),
                     "ratio": top.mean() / random.mean(), "min_top": top.min(), "max_random": random.max(),
                     "share_above_random": float((top > random.max()).mean()),
                     "test_accuracy": run["test_accuracy"].iloc[0]})
    return pd.DataFrame(rows)


# --- Fig 6.6: complexity measures against the generalisation gap ---

# The measures of Fig 6.6 in drawing order, with their legend labels (capacity.measures defines them).
COMPLEXITY_MEASURES = {
    "learning_flow": "ours: Σ_t ‖δw_t‖ ‖Φ_t‖_F (6.4.11)",
    "neyshabur": "Neyshabur et al. 2019 (two-layer)",
    "spectral": "spectral bound (Bartlett et al. 2017)",
    "frobenius_product": "Π ‖W_l‖_F / γ",
    "frobenius_sum": "Σ ‖W_l‖_F",
    "path_norm": "ℓ2 path-norm / γ",
    "distance_to_init": "‖w − w₀‖",
    "fisher_rao": "Fisher–Rao norm (Liang et al. 2019)",
}


def _compact(value) -> str:
    return "x".join(map(str, value)) if isinstance(value, (list, tuple)) else f"{value:g}"


def complexity_run_name(run: dict) -> str:
    """The name of a run from what it trains: dataset, model (its numeric arguments) and label
    corruption, so that a run two panels share (width 256 without corruption) is one run."""
    model = run["model"]
    sizes = "_".join(f"{key}{_compact(value)}" for key, value in sorted(model.items())
                     if key != "name" and not isinstance(value, (bool, str)))
    return f"{run['dataset']}_{model['name']}{'_' + sizes if sizes else ''}_corrupt{run['corruption']:g}"


def swept_run(spec: dict, panel: dict, value) -> dict:
    """The full run spec of one value of a panel's sweep: the group's shared keys, the panel's
    dataset, model and corruption, and the swept value in place (``vary`` = "corruption", "hidden"
    for the width of the one hidden layer, or any other model argument, e.g. channels)."""
    shared = {k: v for k, v in spec.items() if k not in ("panels", "seeds")}
    model, corruption = dict(panel["model"]), panel.get("corruption", 0.0)
    if panel["vary"] == "corruption":
        corruption = value
    elif panel["vary"] == "hidden":
        model["hidden"] = [value]
    else:
        model[panel["vary"]] = value
    return {**shared, "dataset": panel["dataset"], "model": model, "corruption": corruption}


def complexity_runs(spec: dict) -> dict[str, dict[str, dict]]:
    """{panel: {run name: run spec}} of the group's config, in the config's order; a run name
    that two panels give to different specs is an error."""
    panels, seen = {}, {}
    for panel_name, panel in spec["panels"].items():
        panels[panel_name] = {}
        for value in panel["values"]:
            run = swept_run(spec, panel, value)
            name = complexity_run_name(run)
            if name in seen and seen[name] != run:
                raise ValueError(f"complexity: two panels name different runs {name!r} (they differ in a key "
                                 "the run name leaves out); make their settings agree")
            seen[name] = panels[panel_name][name] = run
    return panels


def complexity_run_specs(spec: dict) -> dict[str, dict]:
    """{run name: run spec} of every run of the group (shared runs once)."""
    return {name: run for runs in complexity_runs(spec).values() for name, run in runs.items()}


# Fig 6.6's caption order: width, label corruption, channels (the thesis's text orders the panels
# otherwise; we follow the caption), whatever the config's.
VARIED_ORDER = ("hidden", "corruption", "width")


def ordered_panels(spec: dict) -> list[str]:
    """The panels of Fig 6.6 in the caption's order (by what each varies, then by name), so that
    neither the figure nor its job depends on the order of the config's keys."""
    def key(name):
        vary = spec["panels"][name]["vary"]
        return (VARIED_ORDER.index(vary) if vary in VARIED_ORDER else len(VARIED_ORDER), name)
    return sorted(spec["panels"], key=key)


def learning_flow_complexity(steps: np.ndarray, norm_sums: np.ndarray, traces: np.ndarray,
                             trace_scale: float = 1.0) -> float:
    """C(f) = Σ_t ‖δw_t‖ ‖Φ_t‖_F (eq. 6.4.11) with ‖Φ_t‖_F = sqrt(Tr K_t) evaluated at the steps
    t_0 < t_1 < … only and held constant until the next evaluation: C = Σ_k (S_{k+1} − S_k)
    sqrt(trace_scale · Tr K_{t_k}), S_k = Σ_{t ≤ t_k} ‖δw_t‖ the exact running sum of the update
    norms. The step t_k → t_k + 1 is taken at w_{t_k}, hence K_{t_k}. trace_scale = n / n_probe
    rescales the trace of the probe's Gram to the n training examples."""
    order = np.argsort(steps)
    norm_sums, traces = np.asarray(norm_sums, float)[order], np.asarray(traces, float)[order]
    return float(np.sum(np.diff(norm_sums) * np.sqrt(trace_scale * traces[:-1])))


def learning_flow_of_records(records: pd.DataFrame, n_train: int, n_probe: int) -> float:
    """``learning_flow_complexity`` of a run's records (rows with a probe trace: columns step,
    update_norm_sum, probe_trace)."""
    rows = records.dropna(subset=["probe_trace"])
    return learning_flow_complexity(rows["step"].to_numpy(), rows["update_norm_sum"].to_numpy(),
                                    rows["probe_trace"].to_numpy(), n_train / n_probe)


def read_complexity_finals(paths_by_panel: dict[str, list[str]], spec: dict) -> pd.DataFrame:
    """One row per (panel, run, seed): the final measures of each run with its panel and the
    panel's swept value (column ``value``). Inputs other than the panels (provenance) are skipped."""
    rows = []
    for panel in spec["panels"]:
        paths = paths_by_panel[panel]
        vary = spec["panels"][panel]["vary"]
        for path in paths:
            final = json.loads(Path(path).read_text())
            model = final["run"]["model"]
            value = final["run"]["corruption"] if vary == "corruption" else \
                model["hidden"][0] if vary == "hidden" else model[vary]
            rows.append({"panel": panel, "value": value, **{k: v for k, v in final.items() if k != "run"}})
    return pd.DataFrame(rows)


def panel_curves(finals: pd.DataFrame) -> pd.DataFrame:
    """Per panel and swept value: the seed means of the gap and of every measure (capped: any
    seed capped)."""
    columns = ["gap", *COMPLEXITY_MEASURES]
    means = finals.groupby(["panel", "value"], sort=False)[columns].mean()
    means["capped"] = finals.groupby(["panel", "value"], sort=False)["capped"].any()
    return means.reset_index()


def min_max(values: pd.Series) -> pd.Series:
    """Scaled to [0, 1] within the panel (a constant curve: 0.5; an undefined one stays NaN)."""
    low, high = values.min(), values.max()
    if not np.isfinite(high - low):
        return values * np.nan
    return (values - low) / (high - low) if high > low else values * 0 + 0.5


def gap_correlations(curves: pd.DataFrame) -> pd.DataFrame:
    """Spearman ρ of each measure with the generalisation gap over each panel's swept values
    (rows: panels, columns: measures; NaN where a measure is undefined or constant)."""
    table = {}
    for panel, curve in curves.groupby("panel", sort=False):
        table[panel] = {measure: curve["gap"].corr(curve[measure].astype(float), method="spearman")
                        if curve[measure].notna().all() else np.nan for measure in COMPLEXITY_MEASURES}
    return pd.DataFrame.from_dict(table, orient="index")
