"""Figures for Chapter 6 (NTK alignment) and appendix B. The plots of Figs 6.1-6.6 and B.1-B.8 (tangent-kernel
spectrum, alignment with the labels, SuperNat, complexity measures); Fig 6.5's left half is an algorithm
box, drawn with its curves."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ...analysis.george_thesis.ch6 import RANDOM, TOP, perturbation_summary, read_perturbation_runs
from ...manifests.jobs import FigureJob
from ..style import apply_style, save_figure

# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and its alignment with the labels over training (alignment) ---

# --- end of alignment ---

# --- Figs 6.4, B.7: alignment on easy vs difficult examples (easy_difficult) ---

# --- end of easy_difficult ---

# --- Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task (disk) ---

# --- end of disk ---

# --- Fig B.2: spectral bias of a random MLP's tangent kernel (spectral_bias) ---

# --- end of spectral_bias ---

# --- Fig 6.5: SuperNat vs gradient descent on noisy linear regression (supernat) ---

# --- end of supernat ---

# --- Fig B.3: which norm measures capacity (random RBF features) (rbf_capacity) ---

# --- end of rbf_capacity ---

# --- Fig B.1: output change along the Jacobian's top singular directions (perturbation) ---

PERTURBATION_COLOURS = {TOP: "#c0392b", RANDOM: "#2c6fbb"}
# The thesis's run (§B.1.4 and the spec's defaults for what it leaves out), for the caption's departures.
THESIS_PERTURBATION = {"dataset": "cifar10", "model": "VGG11 without BatchNorm", "epochs": 10, "n_probe": 100,
                       "n_eval": 1000, "directions": 50}


def model_label(model: dict, width: bool = True) -> str:
    """A zoo spec as a reader names the network: "VGG11 without BatchNorm, base width 64", "small_cnn (width 32)"."""
    if model["name"] == "vgg":
        norm = "with" if model.get("batch_norm") else "without"
        label = f"VGG{model.get('depth', 11)} {norm} BatchNorm"
        return f"{label}, base width {model.get('base_channels', 64)}" if width else label
    arguments = ", ".join(f"{key} {value}" for key, value in model.items() if key != "name")
    return f"{model['name']} ({arguments})" if arguments else model["name"]


def perturbation_departures(spec: dict, n_eval: int) -> list[str]:
    """What this configuration runs differently from the thesis's Fig B.1."""
    ran = {"dataset": spec["dataset"], "model": model_label(spec["model"], width=False),
           "epochs": spec["epochs"], "n_probe": spec["n_probe"], "n_eval": n_eval, "directions": spec["directions"]}
    names = {"dataset": "data", "model": "network", "epochs": "epochs", "n_probe": "probe examples",
             "n_eval": "evaluation examples", "directions": "directions of each kind"}
    departures = [f"{names[key]} {ran[key]} (thesis {THESIS_PERTURBATION[key]})"
                  for key in names if ran[key] != THESIS_PERTURBATION[key]]
    if spec["model"]["name"] == "vgg" and spec["model"].get("base_channels", 64) != 64:
        departures.append(f"VGG base width {spec['model']['base_channels']} (thesis 64)")
    return departures


def perturbation_caption(job: FigureJob, runs, summary) -> str:
    """The manifest's lead, then what ran (read from the runs and the group's config) and how it departs."""
    spec, first = job.params, runs.iloc[0]
    k, optimiser = int((runs["kind"] == TOP).sum() / runs["seed"].nunique()), spec["optimiser"]
    classes, seeds = int(first["num_classes"]), ", ".join(str(s) for s in sorted(runs["seed"].unique()))
    setup = (f"{model_label(spec['model'])} ({int(first['n_params']):,} parameters) trained {spec['epochs']} epochs "
             f"on {int(first['n_train']):,} examples ({optimiser['name'].upper()} lr {optimiser['lr']:g}, momentum "
             f"{optimiser.get('momentum', 0):g}, batch {spec['batch_size']}, weight decay "
             f"{optimiser.get('weight_decay', 0):g}, no augmentation), test accuracy "
             f"{summary['test_accuracy'].mean():.1%}; seed(s) {seeds}. Directions 1–{k}: the top right singular "
             f"vectors of the Jacobian of the {classes} outputs on the first {int(first['n_probe'])} test examples "
             f"(from the eigenvectors of the {int(first['n_probe']) * classes}×{int(first['n_probe']) * classes} "
             f"uncentred tangent Gram, v_j = Φᵀu_j/√λ_j); directions {k + 1}–{2 * k}: uniform on the unit sphere. "
             f"Each step is ε = {float(first['epsilon']):g} along a unit vector; y = ‖f_(w+εv)(X) − f_w(X)‖₂ over "
             f"the first {int(first['n_eval'])} test examples. Mean change along the top directions / along random "
             f"ones = {summary['ratio'].mean():.3g}.")
    departures = perturbation_departures(spec, int(first["n_eval"]))
    chosen = ("Settings the thesis leaves out, set here: ε, the probe (first test examples, uncentred "
              "Jacobian), the evaluation set, the optimiser's weight decay and augmentation (none).")
    return " ".join([job.caption.rstrip(".") + ".", setup, chosen] +
                    ([f"Departures from the thesis: {'; '.join(departures)}."] if departures else []))


def plot_fig_B_1(job: FigureJob) -> None:
    """Fig B.1: the output change along each top singular direction of the Jacobian (B.1.24: √λ_j ε to first
    order on the probe) and along random directions, log y; one marker per seed and direction."""
    runs = read_perturbation_runs(job.inputs["runs"])
    summary = perturbation_summary(runs)
    apply_style()
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    for kind, colour in PERTURBATION_COLOURS.items():
        chosen = runs[runs["kind"] == kind]
        ax.scatter(chosen["direction"], chosen["change"], s=18, color=colour, label=f"{kind} directions",
                   alpha=0.9 if runs["seed"].nunique() == 1 else 0.5, edgecolors="none")
    k = int(runs.loc[runs["kind"] == TOP, "direction"].max())
    ax.axvline(k + 0.5, color="0.5", linewidth=0.8, linestyle=":")
    ax.set(yscale="log", xlim=(0, 2 * k + 1), xlabel=f"direction (1–{k}: top singular vectors of J; "
           f"{k + 1}–{2 * k}: random)", ylabel="‖f(w + εv) − f(w)‖₂ on test examples")
    tick_step = next(step for step in (1, 2, 5, 10, 20, 50, 100, 2 * k) if 2 * k / step <= 10)  # 1, 10, 20, …
    ax.set_xticks(np.unique([1, *range(tick_step, 2 * k + 1, tick_step)]))
    ax.legend(loc="upper right", frameon=True)
    save_figure(fig, job.png_path, perturbation_caption(job, runs, summary), job.data_source)


# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

# --- end of complexity ---
