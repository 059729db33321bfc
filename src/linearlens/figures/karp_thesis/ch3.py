"""Chapter 3 and Appendix B, local signal adaptivity (a CNN against its tangent kernel): the plots
of Figs 3.2-3.5 and Tables 3.1, B.1 (Fig 3.1 is photographs, listed only)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ...analysis.karp_thesis.ch3 import (
    TOY_THESIS,
    read_toy_run,
    toy_linear_ceiling,
    toy_noise_std,
    toy_settings_text,
)
from ...manifests.jobs import FigureJob
from ..style import apply_style, save_figure

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
        ax.set_xlabel("SGD step")
        ax.set_xlim(0, steps[-1])
    data_source = (f"{job.data_source}: k = {spec['k']}, d = {spec['d']}, σ = {toy_noise_std(spec):.4f} "
                   f"(noise multiplier {spec['noise_multiplier']:g}), seed {spec['seed']}")
    save_figure(fig, job.png_path, toy_caption(job, spec, frame), data_source)
