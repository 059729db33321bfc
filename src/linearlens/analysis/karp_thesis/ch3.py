"""Chapter 3 and Appendix B, local signal adaptivity (a CNN against its tangent kernel): where the
runs live, what each job makes or trains, and the summaries behind Figs 3.2-3.5 and Tables 3.1,
B.1 (torch-free, shared by the figures and the claims; Fig 3.1 is photographs, listed only).

The noisy-image experiments (Sec 3.6, App. B.3-B.4): a *setting* is one image task on one kind of background (CIFAR-10 on ImageNet noise, CIFAR-VEHICLES
on animal tiles, CIFAR-2 on ImageNet or Gaussian noise); a *variant* is a setting at one placement,
one size (image side on background side) and one noise level: one dataset, made once and read by
both models, the network (WRN) and its linearisation at initialisation ("NTK"). Fig 3.4 runs each
setting at its own placement and size over its levels; Table B.1 runs one setting over every
placement and size at its levels; the runs they share are made and trained once.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

IMAGE_DATA = "results/karp_thesis/data/ch3"
IMAGE_RUNS = "results/karp_thesis/runs/ch3"
IMAGE_STATE = "results/karp_thesis/state/ch3"
IMAGE_MODELS = ("network", "linearisation")  # the WRN and its linearisation at θ₀ (the thesis's "NTK")
MODEL_LABELS = {"network": "WRN", "linearisation": "NTK"}
SPARSITY_RUN = f"{IMAGE_RUNS}/sparsity.csv"
EXAMPLES_PATH = f"{IMAGE_DATA}/examples.npz"

# Table 3.1 (retained accuracy, %) and Table B.1 (test accuracy, %), as the thesis prints them.
THESIS_RETAINED = {
    "network": {"cifar10_imagenet": 98.97, "cifar_vehicles": 97.25, "cifar2_imagenet": 99.79,
                "cifar2_gaussian": 96.83},
    "linearisation": {"cifar10_imagenet": 69.75, "cifar_vehicles": 76.37, "cifar2_imagenet": 92.81,
                      "cifar2_gaussian": 85.54},
}
THESIS_B1_LEVELS = (0.0, 0.5, 1.0, 2.0)
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


# --- the design: variants, jobs, files ----------------------------------------------------------

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


def image_data_path(job: str) -> str:
    return f"{IMAGE_DATA}/{job}.npz"


def image_run_path(model: str, job: str) -> str:
    return f"{IMAGE_RUNS}/{model}/{job}.csv"


def image_run_paths(images: dict) -> list[str]:
    return [image_run_path(model, job) for model in IMAGE_MODELS for job in image_jobs(images)]


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
                                 "size_key": size, "model": MODEL_LABELS[model], "placement": placement,
                                 "sigma": float(level), "accuracy_pct": ours, "thesis_pct": thesis,
                                 "difference": ours - thesis})
    return pd.DataFrame(rows)
