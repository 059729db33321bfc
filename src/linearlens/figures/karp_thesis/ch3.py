"""Chapter 3 and Appendix B, local signal adaptivity (a CNN against its tangent kernel): the plots
of Figs 3.2-3.5 and Tables 3.1, B.1 (Fig 3.1 is photographs, listed only)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from ...analysis.karp_thesis.ch3 import (
    IMAGE_MODELS,
    MODEL_LABELS,
    STILL_LEARNING_POINTS,
    THESIS_MAX_LEVEL,
    TOY_THESIS,
    final_accuracies,
    last_gains,
    read_toy_run,
    setting_curve,
    table_3_1_frame,
    table_b_1_frame,
    toy_linear_ceiling,
    toy_noise_std,
    toy_settings_text,
    variant_name,
)
from ...manifests.jobs import FigureJob
from ..style import apply_style, save_figure, save_table

# --- Fig 3.3: the LSA toy model (Sec 3.3, Algorithm 3.1) ---

TOY_COLOURS = {"b": "#1f77b4", "w_dot_wstar": "#ff7f0e", "ratio": "#2ca02c", "test_accuracy": "#d62728"}


def _toy_deviations(spec: dict) -> list[str]:
    """The run's settings that differ from the thesis's, as the caption names them."""
    return [f"{key} {spec[key]:g} (thesis {value:g})" for key, value in TOY_THESIS.items() if spec[key] != value]


def toy_caption(job: FigureJob, spec: dict, frame) -> str:
    last = frame.iloc[-1]
    deviations = _toy_deviations(spec)
    return (f"{job.caption} Settings: {toy_settings_text(spec)}"
            + (f"; differs from the thesis in {', '.join(deviations)}" if deviations else " (the thesis's)")
            + f". Conventions of the authors' code: the signal row y·w* (w* = (1, …, 1)/√d) replaces a uniformly "
            f"chosen one of the k rows; w₀ a random direction of norm {spec['init_norm']:g}; b₀ = {spec['init_bias']:g} "
            f"(the code draws N(0, 1e-12)); accuracy = mean(y·f ≥ 0) on fresh test samples at each evaluation. "
            f"The dashed line is the accuracy of the linear classifier l(X) = Σ_i ⟨w*, X_i⟩ = y + N(0, (k − 1)σ²), "
            f"Φ(1/(√(k − 1)·σ)) = {toy_linear_ceiling(spec):.3f}. Samples drawn by the {spec['route']} route (exact in distribution). "
            f"At step {int(last.step):,}: w·w* = {last.w_dot_wstar:.3f}, ‖w⊥‖ = {last.w_perp_norm:.3f}, "
            f"b = {last.b:.3f}, |b|/(w·w*) = {last.ratio:.3f}, test accuracy {last.test_accuracy:.3f}; b > 0 after "
            f"{int(last.b_positive_steps)} of the steps (largest b {last.b_peak:.2g}).")


def plot_fig_3_3(job: FigureJob) -> None:
    """Fig 3.3: left b and w·w*, centre |b|/(w·w*), right test accuracy (the linear classifier's
    accuracy dashed), all against the SGD step."""
    apply_style()
    spec, frame = job.params, read_toy_run(job.inputs["runs"])
    steps = frame["step"].to_numpy()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), layout="constrained")
    left, centre, right = axes
    left.plot(steps, frame["b"], color=TOY_COLOURS["b"], label="b")
    left.plot(steps, frame["w_dot_wstar"], color=TOY_COLOURS["w_dot_wstar"], label="w·w*")
    left.axhline(0.0, color="0.3", linewidth=0.6)
    left.set(ylabel="value", title="b and w·w*")
    left.legend(loc="best", fontsize=8)
    ratio = frame["ratio"].where(frame["w_dot_wstar"] > 0)  # undefined before w·w* turns positive
    centre.plot(steps, ratio, color=TOY_COLOURS["ratio"])
    centre.set(ylabel="|b| / (w·w*)", title="|b| / (w·w*)")
    right.plot(steps, frame["test_accuracy"], color=TOY_COLOURS["test_accuracy"], label="LSA model")
    ceiling = toy_linear_ceiling(spec)
    right.axhline(ceiling, color="0.2", linestyle="--", linewidth=1.0,
                  label=f"linear classifier ceiling {ceiling:.3f}")
    accuracy = frame["test_accuracy"].to_numpy(dtype=float)
    right.set(ylabel="test accuracy", title="test accuracy",
              ylim=(min(0.45, float(np.nanmin(accuracy)) - 0.01), min(1.0, max(0.8, float(np.nanmax(accuracy)) + 0.05))))
    right.legend(loc="lower right", fontsize=8)
    for ax in axes:
        ax.set_xlabel(_shortened("SGD step", int(spec["steps"]), TOY_THESIS["steps"]))
        ax.set_xlim(0, steps[-1])
    data_source = (f"{job.data_source}: k = {spec['k']}, d = {spec['d']}, σ = {toy_noise_std(spec):.4f} "
                   f"(noise multiplier {spec['noise_multiplier']:g}), seed {spec['seed']}")
    save_figure(fig, job.png_path, toy_caption(job, spec, frame), data_source)


def _shortened(label: str, ours: int, thesis: int) -> str:
    """An x label that says where a run stops short of the thesis's length."""
    return label if ours >= thesis else f"{label} (here to {ours:,}; thesis to {thesis:,})"


# --- the noisy-image experiments: Figs 3.2, 3.4, 3.5, Tables 3.1, B.1 ---------------------------

THESIS_EPOCHS = 200  # App. B.3: the WRN's and the NTK's training, and Fig 3.2's

MODEL_COLOURS = {"network": "#1f77b4", "linearisation": "#ff7f0e"}  # blue WRN, orange NTK, as the thesis


def _caption(*parts: str) -> str:
    """The caption: the manifest's lead (often empty) and what the runs tell, as one text."""
    return " ".join(part for part in parts if part)


def read_image_runs(paths) -> pd.DataFrame:
    return pd.concat([pd.read_csv(path) for path in paths], ignore_index=True)


def network_source(job: FigureJob, linearised: bool = True) -> str:
    """The data source with the stand-in network named (on the image, not only in the sidecar)."""
    model = job.params["model"]
    network = (f"network: WRN of widths {'-'.join(str(w) for w in model['widths'])} (stem {model['stem']}, "
               f"{model['blocks']} block per group), stand-in for WRN-10-10")
    return f"{job.data_source}; {network}" + ("; NTK: its linearisation at θ₀" if linearised else "")


def _recipe_note(params: dict) -> str:
    network, linearisation = params["network"], params["linearisation"]
    return (f"WRN: {network['optimiser']['name']} at {network['optimiser']['lr']:g}, batch {network['batch_size']}, "
            f"{network['epochs']} epochs; NTK (the WRN linearised at θ₀, BatchNorm on θ₀'s training statistics): "
            f"{linearisation['optimiser']['name']} at {linearisation['optimiser']['lr']:g}, batch "
            f"{linearisation['batch_size']}, {linearisation['epochs']} epochs; one seed "
            f"({params['images']['seed']}) for every dataset and initialisation.")


def plot_fig_3_4(job: FigureJob) -> None:
    """Fig 3.4: test accuracy of the WRN and its NTK against the noise level, one panel per setting."""
    apply_style()
    runs = read_image_runs(job.inputs["runs"])
    final, learning = final_accuracies(runs), _still_learning(runs)
    images = job.params["images"]
    settings = images["settings"]
    columns = 2 if len(settings) > 1 else 1
    rows = -(-len(settings) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.2 * columns, 3.6 * rows), squeeze=False)
    for ax, (name, setting) in zip(axes.flat, settings.items()):
        for model in IMAGE_MODELS:
            curve = setting_curve(final, model, name, setting["placement"], setting["size"])
            ax.plot(curve["level"], 100 * curve["test_accuracy"], "o-", color=MODEL_COLOURS[model],
                    label=MODEL_LABELS[model])
            rising = curve[[(model, variant_name(name, setting["placement"], setting["size"], level))
                             in learning.index for level in curve["level"]]]
            ax.plot(rising["level"], 100 * rising["test_accuracy"], "o", markerfacecolor="white",
                    color=MODEL_COLOURS[model], label=f"{MODEL_LABELS[model]}, still learning at its cap"
                    if len(rising) else None)
        size = images["sizes"][setting["size"]]
        ax.set(title=f"{setting['label']} ({setting['placement'].replace('_', ' ')}, {size['image']} on "
                     f"{size['background']})", xlabel=_level_label(name, setting), ylabel="test accuracy (%)")
        ax.legend()
    for ax in list(axes.flat)[len(settings):]:
        ax.set_visible(False)
    fig.tight_layout()
    caption = _caption(job.caption, "Test accuracy of the WRN (blue) and of its NTK (orange) against the scale of "
                        "the background noise (or, for Gaussian noise, its standard deviation σ), one panel per "
                        "image setting as the thesis's (top left CIFAR-10 with ImageNet noise, top right "
                        "CIFAR-VEHICLES, bottom left CIFAR-2 with ImageNet noise, bottom right CIFAR-2 with "
                        "Gaussian noise). Each point is one run: the test accuracy after the last epoch. Levels "
                        f"run here: {_levels_text(settings)}; the thesis runs five per panel, s to 1 and σ to 2.",
                        _learning_text(learning), _recipe_note(job.params))
    save_figure(fig, job.png_path, caption, network_source(job))


def _still_learning(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs still learning when their epoch cap stopped them, indexed by (model, variant)."""
    gains = last_gains(runs)
    return gains[gains["gain"] > STILL_LEARNING_POINTS].set_index(["model", "variant"])


def _learning_text(learning: pd.DataFrame) -> str:
    if learning.empty:
        return ""
    listed = "; ".join(f"{MODEL_LABELS[model]} {variant} +{row.gain:.1f} over epochs {row.since:g}-{row.epoch:g}"
                       for (model, variant), row in learning.iterrows())
    return (f"Hollow markers: runs still learning when their epoch cap stopped them (test accuracy up by more than "
            f"{STILL_LEARNING_POINTS:g} points over their last evaluation interval: {listed}).")


def _level_label(name: str, setting: dict) -> str:
    """The x label: the noise's name, and the thesis's largest level where this run stops short of it."""
    label, ours, thesis = setting.get("noise", "noise level"), max(setting["levels"]), THESIS_MAX_LEVEL.get(name)
    if thesis is None or ours >= thesis:
        return label
    return f"{label} (here to {ours:g}; thesis to {thesis:g})"


def _levels_text(settings: dict) -> str:
    return "; ".join(f"{setting['label']} {', '.join(f'{level:g}' for level in setting['levels'])}"
                     for setting in settings.values())


def table_3_1(job: FigureJob) -> None:
    """Table 3.1: the percentage of its zero-noise accuracy each model keeps at the largest level, beside
    the thesis's percentages."""
    final = final_accuracies(read_image_runs(job.inputs["runs"]))
    frame = table_3_1_frame(final, job.params["images"]["settings"])
    caption = _caption(job.caption, "retained_pct = 100 · accuracy at the largest level / accuracy without "
                        "noise, from Fig 3.4's runs; thesis_retained_pct is the thesis's Table 3.1, at its largest "
                        "levels thesis_max_level (s = 1, σ = 2); max_level is ours.", _short_levels(frame),
                        _recipe_note(job.params))
    save_table(frame.round(2), job.png_path, caption, network_source(job))


def _short_levels(frame: pd.DataFrame) -> str:
    """The settings whose largest level here is below the thesis's: their retained share is not the
    thesis's quantity."""
    short = frame[frame["max_level"] < frame["thesis_max_level"]].drop_duplicates("setting")
    return " ".join(f"{row.setting}: the largest level here is {row.max_level:g}, the thesis's {row.thesis_max_level:g}; "
                    "its retained share is at less noise than the thesis's." for row in short.itertuples())


def table_B_1(job: FigureJob) -> None:
    """Table B.1: test accuracy (%) per size, model, placement and σ, beside the thesis's values."""
    final = final_accuracies(read_image_runs(job.inputs["runs"]))
    images = job.params["images"]
    frame = table_b_1_frame(final, images["table_B_1"], images["sizes"])
    caption = _caption(job.caption, "thesis_pct is the thesis's Table B.1 cell of the same model, placement and "
                        "σ in its row thesis_size (NaN where it has no such cell); difference = ours − thesis.",
                        _recipe_note(job.params))
    save_table(frame.round(2), job.png_path, caption, network_source(job))


def plot_fig_3_2(job: FigureJob) -> None:
    """Fig 3.2: per ReLU layer, the percentage of active outputs per instance against the epoch."""
    apply_style()
    rows = pd.read_csv(job.inputs["runs"][0])
    layers = [column for column in rows.columns if column.startswith("active_relu")]
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    palette = plt.cm.viridis(np.linspace(0, 0.9, len(layers)))
    for colour, column in zip(palette, layers):
        number = int(column.removeprefix("active_relu"))
        label = f"ReLU {number}" + (" (final)" if number == len(layers) else "")
        ax.plot(rows["epoch"], 100 * rows[column], "o-", markersize=3, color=colour, label=label)
    ax.set(xlabel=_shortened("epoch", int(job.params["epochs"]), THESIS_EPOCHS), ylabel="active neurons per instance (%)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize=7, ncol=2)
    settings = job.params
    caption = _caption(job.caption, f"The WRN's {len(layers)} ReLU layers (two per block, then the final one), "
                        f"measured after every epoch on the first {settings['probe_size']} test images "
                        f"(batch statistics, chunks of {settings['eval_batch']}); the WRN is trained as in Fig 3.4 "
                        f"for {settings['epochs']} epochs; final test accuracy "
                        f"{100 * rows['test_accuracy'].iloc[-1]:.1f}%.")
    save_figure(fig, job.png_path, caption, network_source(job, linearised=False))


def plot_fig_3_5(job: FigureJob) -> None:
    """Fig 3.5: example images of the settings the examples name, at their level."""
    apply_style()
    examples = job.params["images"]["examples"]
    settings = job.params["images"]["settings"]
    with np.load(job.inputs["examples"][0]) as arrays:
        rows = {name: arrays[name] for name in examples["settings"]}
    count = max(len(images) for images in rows.values())
    fig, axes = plt.subplots(len(rows), count, figsize=(1.3 * count, 1.5 * len(rows)), squeeze=False)
    for ax_row, (name, images) in zip(axes, rows.items()):
        for ax, image in zip(ax_row, images):
            picture = np.transpose(image, (1, 2, 0))
            low, high = float(picture.min()), float(picture.max())
            shown = (picture - low) / (high - low) if high > low else picture * 0
            ax.imshow(shown.squeeze(), cmap="gray" if picture.shape[-1] == 1 else None, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
        ax_row[0].set_ylabel(settings[name]["label"], fontsize=8)
    fig.tight_layout()
    caption = _caption(job.caption, f"Test images of each setting at level {examples['level']:g}, from the "
                        "generators the runs train on; each image is shown rescaled to its own range.")
    save_figure(fig, job.png_path, caption, job.data_source)
