"""Chapter 3 and Appendix B, local signal adaptivity (a CNN against its tangent kernel): what each
job makes or trains, and the summaries behind Figs 3.2-3.5 and Tables 3.1, B.1 (torch-free, shared
by the figures and the claims; Fig 3.1 is photographs, listed only): the LSA toy model of Fig 3.3,
then the noisy-image experiments of the others. Where the runs live: the chapter's run families
(``manifests.karp_thesis_runs``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

# --- Fig 3.3: the LSA toy model (Sec 3.3, Algorithm 3.1) ---
#
# One run trains f_{w,b}(X) = Σ_i φ_b(⟨w, X_i⟩) by SGD on fresh samples and writes one CSV row per
# evaluation (``TOY_COLUMNS``). The thesis's "σ = 1" is the noise MULTIPLIER of the authors' code
# (a literal σ = 1 is a different, much harder problem): the noise rows' standard deviation is
# multiplier · log(k)/√k (natural log), 0.2184 at k = 1000.

# step: SGD steps taken; w_dot_wstar: w·w*; w_perp_norm: ‖w − (w·w*)w*‖; ratio: |b|/(w·w*);
# test_accuracy: mean(y·f ≥ 0) and test_loss: mean log(1 + e^{−y f}) on fresh test samples;
# train_loss: the loss of the last training batch (NaN at step 0); b_peak: the largest b of steps
# 0..step; b_positive_steps: steps after which b > 0, so far; positive_ratio_peak: the largest
# b/(w·w*) after a step that left b > 0 and w·w* > 0 (0 if none): the thesis's "|b|/|w·w*| never
# exceeds Θ(1/k) while b > 0" (Sec 3.4).
TOY_COLUMNS = ("step", "w_dot_wstar", "w_perp_norm", "w_norm", "b", "ratio", "test_accuracy", "test_loss",
               "train_loss", "b_peak", "b_positive_steps", "positive_ratio_peak")
# The thesis's settings (caption of Fig 3.3, App. B.3; the evaluation from the authors' code).
TOY_THESIS = {"k": 1000, "d": 10, "noise_multiplier": 1.0, "lr_w": 0.1, "lr_b": 1e-4, "batch_size": 500,
              "steps": 10_000, "eval_every": 100, "test_samples": 5000}
# The signal row replaces one of the k rows (the authors' code; the thesis has k + 1 rows).
TOY_SIGNAL_ROWS = 1


def noise_std(k: int, multiplier: float) -> float:
    """σ = multiplier · log(k)/√k, the noise rows' standard deviation per coordinate."""
    return multiplier * math.log(k) / math.sqrt(k)


def toy_noise_std(spec: dict) -> float:
    return noise_std(spec["k"], spec["noise_multiplier"])


def linear_ceiling(k: int, sigma: float, noise_rows: int | None = None) -> float:
    """Accuracy of the best linear classifier l(X) = Σ_i ⟨w*, X_i⟩ = y + N(0, rows·σ²): Φ(1/(√rows·σ))
    with rows the number of noise rows (k − 1 by default: the signal row replaces one of k). At
    multiplier 1 that is Φ(1/log k) up to the k/(k − 1) in the variance: 0.558 at k = 1000."""
    rows = k - TOY_SIGNAL_ROWS if noise_rows is None else noise_rows
    return 0.5 * (1.0 + math.erf(1.0 / (math.sqrt(rows) * sigma) / math.sqrt(2.0)))


def toy_linear_ceiling(spec: dict) -> float:
    return linear_ceiling(spec["k"], toy_noise_std(spec))


def read_toy_run(paths) -> pd.DataFrame:
    """The evaluations of one run (the first path), in step order."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    return pd.read_csv(paths[0]).sort_values("step", ignore_index=True)


def step_correlation(frame: pd.DataFrame, column: str) -> float:
    """Spearman ρ between the step and a column over its finite values (NaN with fewer than three)."""
    values = frame[column].to_numpy(dtype=float)
    finite = np.isfinite(values)
    if finite.sum() < 3 or np.ptp(values[finite]) == 0:
        return float("nan")
    return float(stats.spearmanr(frame["step"].to_numpy()[finite], values[finite]).statistic)


def trend(frame: pd.DataFrame, column: str) -> dict[str, float]:
    """How a curve moves over training: Spearman ρ with the step, first and last finite values and
    their difference."""
    finite = frame[np.isfinite(frame[column].to_numpy(dtype=float))]
    first, last = (float(finite[column].iloc[i]) if len(finite) else float("nan") for i in (0, -1))
    return {"rho": step_correlation(frame, column), "first": first, "last": last, "change": last - first}


def toy_settings_text(spec: dict) -> str:
    """The run's settings as a caption states them, with the noise multiplier read as in the code."""
    sigma = toy_noise_std(spec)
    return (f"k = {spec['k']} rows of d = {spec['d']}, noise multiplier {spec['noise_multiplier']:g} (the thesis's "
            f"\"σ = 1\" read as in the authors' code: noise std = {spec['noise_multiplier']:g}·log k/√k = {sigma:.4f}), "
            f"η_w = {spec['lr_w']:g}, η_b = {spec['lr_b']:g}, batch {spec['batch_size']} fresh samples per step, "
            f"{spec['steps']:,} steps, evaluation every {spec['eval_every']} steps on {spec['test_samples']:,} fresh "
            f"samples, seed {spec['seed']}")


# --- Figs 3.2, 3.4, 3.5, Tables 3.1, B.1: the noisy-image experiments (Sec 3.6, App. B.3-B.4) ---
#
# A *setting* is one image task on one kind of background (CIFAR-10 on ImageNet noise, CIFAR-VEHICLES
# on animal tiles, CIFAR-2 on ImageNet or Gaussian noise); a *variant* is a setting at one placement,
# one size (image side on background side) and one noise level: one dataset, made once and read by
# both models, the network (WRN) and its linearisation at initialisation ("NTK"). Fig 3.4 runs each
# setting at its own placement and size over its levels; Table B.1 runs one setting over every
# placement and size at its levels; the runs they share are made and trained once.

IMAGE_MODELS = ("network", "linearisation")  # the WRN and its linearisation at θ₀ (the thesis's "NTK")
MODEL_LABELS = {"network": "WRN", "linearisation": "NTK"}

# Table 3.1 (retained accuracy, %) and Table B.1 (test accuracy, %), as the thesis prints them.
THESIS_RETAINED = {
    "network": {"cifar10_imagenet": 98.97, "cifar_vehicles": 97.25, "cifar2_imagenet": 99.79,
                "cifar2_gaussian": 96.83},
    "linearisation": {"cifar10_imagenet": 69.75, "cifar_vehicles": 76.37, "cifar2_imagenet": 92.81,
                      "cifar2_gaussian": 85.54},
}
# Table 3.1's largest levels (Sec 3.6: "from 0 to 1 (or from σ = 0 to σ = 2 in the Gaussian-noise case)").
THESIS_MAX_LEVEL = {"cifar10_imagenet": 1.0, "cifar_vehicles": 1.0, "cifar2_imagenet": 1.0, "cifar2_gaussian": 2.0}
THESIS_B1_LEVELS = (0.0, 0.5, 1.0, 2.0)
THESIS_B1_SIZES = {"small": "16x16 on 32x32", "large": "32x32 on 64x64"}  # Table B.1's rows
THESIS_B1_PLACEMENTS = ("random_loc", "random_corner", "fixed_corner")
THESIS_B1 = {  # (size, model): accuracies by placement, at σ = 0, 0.5, 1, 2
    ("small", "network"): {"random_loc": (94.7, 94.0, 92.8, 91.7), "random_corner": (94.3, 94.2, 92.7, 92.6),
                           "fixed_corner": (94.4, 94.3, 94.0, 92.9)},
    ("small", "linearisation"): {"random_loc": (89.9, 87.3, 83.7, 76.9), "random_corner": (91.6, 88.3, 84.5, 78.3),
                                 "fixed_corner": (92.0, 88.8, 85.2, 80.0)},
    ("large", "network"): {"random_loc": (96.1, 96.2, 95.8, 94.9), "random_corner": (96.5, 96.5, 96.5, 95.9),
                           "fixed_corner": (96.9, 96.6, 96.0, 95.6)},
    ("large", "linearisation"): {"random_loc": (91.2, 89.4, 84.6, 82.2), "random_corner": (91.8, 89.1, 85.3, 79.1),
                                 "fixed_corner": (93.1, 91.0, 88.3, 82.9)},
}


# --- the design: variants and jobs -------------------------------------------------------------

def variant_name(setting: str, placement: str, size: str, level: float) -> str:
    return f"{setting}/{placement}-{size}/s{float(level):g}"


def _variant(setting: str, placement: str, size: str, level: float) -> dict:
    return {"name": variant_name(setting, placement, size, level), "setting": setting, "placement": placement,
            "size": size, "level": float(level)}


def image_variants(images: dict) -> list[dict]:
    """Every variant the config runs, each once: Fig 3.4's settings at their placement, size and
    levels, then Table B.1's setting at its placements, sizes and levels."""
    variants = [_variant(name, setting["placement"], setting["size"], level)
                for name, setting in images["settings"].items() for level in setting["levels"]]
    table = images.get("table_B_1")
    if table:
        variants += [_variant(table["setting"], placement, size, level) for size in table["sizes"]
                     for placement in table["placements"] for level in table["levels"]]
    return list({variant["name"]: variant for variant in variants}.values())


def job_of(variant: dict, one_job_per: str) -> str:
    """The job that makes (and the jobs that train on) a variant: itself, or its whole setting."""
    return variant["name"] if one_job_per == "variant" else variant["setting"]


def image_jobs(images: dict) -> dict[str, list[dict]]:
    jobs: dict[str, list[dict]] = {}
    for variant in image_variants(images):
        jobs.setdefault(job_of(variant, images["one_job_per"]), []).append(variant)
    return jobs


def array_key(variant_name: str, array: str) -> str:
    """A variant's array in its job's .npz."""
    return f"{variant_name.replace('/', '.')}.{array}"


def _datasets_of(images: dict, settings) -> list[str]:
    """The prepared datasets of ``settings``: their images and background banks, each once."""
    names: dict[str, None] = {}
    for name in settings:
        setting = images["settings"][name]
        names[setting["dataset"]] = None
        if setting["background"]["kind"] == "bank":
            names[setting["background"]["dataset"]] = None
    return list(names)


def job_datasets(images: dict, job: str) -> list[str]:
    """The prepared datasets a data job reads."""
    return _datasets_of(images, [variant["setting"] for variant in image_jobs(images)[job]])


def image_datasets(images: dict) -> list[str]:
    """The prepared datasets of every setting."""
    return _datasets_of(images, images["settings"])


def example_datasets(images: dict) -> list[str]:
    return _datasets_of(images, images["examples"]["settings"])


def example_images_spec(images: dict) -> dict:
    """What Fig 3.5's examples depend on: their settings and sizes, the seed and the examples' entry."""
    settings = {name: images["settings"][name] for name in images["examples"]["settings"]}
    return {"examples": images["examples"], "seed": images["seed"], "settings": settings,
            "sizes": {s["size"]: images["sizes"][s["size"]] for s in settings.values()}}


def job_images(images: dict, job: str) -> dict:
    """What a data job's arrays depend on: its variants, their settings and sizes, the seed (not the
    other settings: editing one setting remakes its own variants only)."""
    variants = image_jobs(images)[job]
    return {"variants": variants, "seed": images["seed"],
            "settings": {v["setting"]: images["settings"][v["setting"]] for v in variants},
            "sizes": {v["size"]: images["sizes"][v["size"]] for v in variants}}


def job_training(spec: dict, model: str, job: str) -> dict:
    """What a training job's runs depend on: its variants and each of their sizes' recipe."""
    variants = image_jobs(spec["images"])[job]
    return {"variants": variants, "seed": spec["images"]["seed"],
            "recipes": {v["size"]: recipe(spec, model, v["size"]) for v in variants}}


def sparsity_settings(spec: dict) -> dict:
    """Fig 3.2's run: the network's recipe on the plain images at the sparsity entry's input side."""
    sparsity = spec["sparsity"]
    return {**spec["network"], "eval_every": 1, **sparsity.get("network", {}),
            "model": {**spec["model"], "image_size": sparsity["image_size"], "pool": sparsity["pool"]},
            "probe_size": sparsity["probe_size"], "seed": sparsity["seed"]}


def recipe(spec: dict, model: str, size: str) -> dict:
    """The training recipe of ``model`` at ``size``: the chapter's recipe, with the size's own
    overrides (App. B.4: the 64 x 64 WRN trains at batch 50 and rate 0.05) and the model's input
    side and pool."""
    sizes = spec["images"]["sizes"]
    merged = {**spec[model], **sizes[size].get(model, {})}
    if "lr" in sizes[size].get(model, {}):
        merged["optimiser"] = {**spec[model]["optimiser"], "lr": sizes[size][model]["lr"]}
        merged.pop("lr")
    merged["model"] = {**spec["model"], "image_size": sizes[size]["background"], "pool": sizes[size]["pool"]}
    return merged


# --- summaries ------------------------------------------------------------------------------

def final_accuracies(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, variant): the test accuracy after the last epoch."""
    last = runs.sort_values("epoch").groupby(["model", "variant"], sort=False).tail(1)
    return last[["model", "variant", "setting", "placement", "size", "level", "epoch", "test_accuracy"]] \
        .reset_index(drop=True)


# A run whose test accuracy rose by more points over its last evaluation interval was still learning
# when its epoch cap stopped it (about one binomial standard error of an evaluation on ~540 test images).
STILL_LEARNING_POINTS = 2.0


def last_gains(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, variant): the test accuracy's gain (points) over the run's last evaluation
    interval, from epoch ``since`` to ``epoch``: how much the run was still learning when it stopped."""
    ordered = runs.sort_values("epoch").groupby(["model", "variant"], sort=False)
    last, before = ordered.nth(-1).set_index(["model", "variant"]), ordered.nth(-2).set_index(["model", "variant"])
    gains = last[["setting", "level", "epoch"]].assign(since=before["epoch"],
                                                       gain=100.0 * (last["test_accuracy"] - before["test_accuracy"]))
    return gains.dropna(subset=["gain"]).reset_index()


def setting_curve(final: pd.DataFrame, model: str, setting: str, placement: str, size: str) -> pd.DataFrame:
    rows = final[(final["model"] == model) & (final["setting"] == setting) & (final["placement"] == placement)
                 & (final["size"] == size)]
    return rows.sort_values("level")[["level", "test_accuracy"]].reset_index(drop=True)


def retained_accuracy(curve: pd.DataFrame) -> float:
    """Table 3.1: 100 · acc(largest level) / acc(level 0)."""
    at_zero = curve.loc[curve["level"] == 0, "test_accuracy"]
    if at_zero.empty:
        return float("nan")
    return 100.0 * float(curve.iloc[-1]["test_accuracy"]) / float(at_zero.iloc[0])


def table_3_1_frame(final: pd.DataFrame, settings: dict) -> pd.DataFrame:
    rows = []
    for model in IMAGE_MODELS:
        for name, setting in settings.items():
            curve = setting_curve(final, model, name, setting["placement"], setting["size"])
            rows.append({"model": MODEL_LABELS[model], "setting": setting["label"],
                         "accuracy_no_noise": _percent_at(curve, 0.0),
                         "max_level": float(curve["level"].max()) if len(curve) else float("nan"),
                         "thesis_max_level": THESIS_MAX_LEVEL.get(name, float("nan")),
                         "accuracy_max_noise": 100.0 * float(curve.iloc[-1]["test_accuracy"]) if len(curve)
                         else float("nan"),
                         "retained_pct": retained_accuracy(curve),
                         "thesis_retained_pct": THESIS_RETAINED[model].get(name, float("nan"))})
    return pd.DataFrame(rows)


def _percent_at(curve: pd.DataFrame, level: float) -> float:
    rows = curve.loc[np.isclose(curve["level"], level), "test_accuracy"]
    return 100.0 * float(rows.iloc[0]) if len(rows) else float("nan")


def thesis_b1(size: str, model: str, placement: str, level: float) -> float:
    """Table B.1's value for one cell; NaN where the thesis has none (levels it does not print, or a
    size it does not have)."""
    values = THESIS_B1.get((size, model), {}).get(placement)
    matches = [value for thesis_level, value in zip(THESIS_B1_LEVELS, values or ()) if np.isclose(level, thesis_level)]
    return matches[0] if matches else float("nan")


def table_b_1_frame(final: pd.DataFrame, table: dict, sizes: dict) -> pd.DataFrame:
    rows = []
    for size in table["sizes"]:
        for model in IMAGE_MODELS:
            for placement in table["placements"]:
                curve = setting_curve(final, model, table["setting"], placement, size)
                for level in table["levels"]:
                    ours = _percent_at(curve, level)
                    thesis = thesis_b1(size, model, placement, level)
                    rows.append({"size": f"{sizes[size]['image']}x{sizes[size]['image']} on "
                                         f"{sizes[size]['background']}x{sizes[size]['background']}",
                                 "size_key": size, "thesis_size": THESIS_B1_SIZES.get(size, ""),
                                 "model": MODEL_LABELS[model], "placement": placement,
                                 "sigma": float(level), "accuracy_pct": ours, "thesis_pct": thesis,
                                 "difference": ours - thesis})
    return pd.DataFrame(rows)
