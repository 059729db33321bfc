"""Analysis for Chapter 6 (NTK alignment) and appendix B. Torch-free summaries (pandas and numpy only) behind
Figs 6.1-6.6 and B.1-B.8 (tangent-kernel spectrum, alignment with the labels, SuperNat, complexity
measures); Fig 6.5's left half is an algorithm box, drawn with its curves."""

import numpy as np
import pandas as pd

# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and its alignment with the labels over training (alignment) ---

# --- end of alignment ---

# --- Figs 6.4, B.7: alignment on easy vs difficult examples (easy_difficult) ---

# --- end of easy_difficult ---

# --- Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task (disk) ---

# --- end of disk ---

# --- Fig B.2: spectral bias of a random MLP's tangent kernel (spectral_bias) ---

# --- end of spectral_bias ---

# --- Fig 6.5: SuperNat vs gradient descent on noisy linear regression (supernat) ---

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

# --- end of supernat ---

# --- Fig B.3: which norm measures capacity (random RBF features) (rbf_capacity) ---

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

# --- end of rbf_capacity ---

# --- Fig B.1: output change along the Jacobian's top singular directions (perturbation) ---

# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

# --- end of complexity ---
