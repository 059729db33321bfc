"""Figures for Chapter 6 (NTK alignment) and appendix B. The plots of Figs 6.1-6.6 and B.1-B.8 (tangent-kernel
spectrum, alignment with the labels, SuperNat, complexity measures); Fig 6.5's left half is an algorithm
box, drawn with its curves."""

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from ...analysis.george_thesis.ch6 import COMPLEXITY_MEASURES, min_max, panel_curves, read_complexity_finals
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

# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

GAP_COLOUR, OURS_COLOUR, NEYSHABUR_COLOUR = "0.1", "#c0392b", "#2c6fbb"


def _measure_style(measure: str, colour) -> dict:
    if measure == "learning_flow":
        return {"color": OURS_COLOUR, "lw": 2.6, "marker": "o", "zorder": 5}
    if measure == "neyshabur":
        return {"color": NEYSHABUR_COLOUR, "lw": 2.2, "marker": "s", "zorder": 4}
    return {"color": colour, "lw": 1.0, "marker": ".", "alpha": 0.8}


def complexity_setup_note(finals: pd.DataFrame, spec: dict) -> str:
    """What ran: data, optimiser, stopping rule, probes, seeds, capped runs and undefined measures."""
    optimiser = spec["optimiser"]
    capped = finals[finals["capped"]]
    undefined = finals[finals["margin"] <= 0]
    parts = [
        f"SGD lr {optimiser['lr']:g}, momentum {optimiser.get('momentum', 0):g}, batch {spec['batch_size']}, "
        "no weight decay or augmentation",
        f"trained until the training cross-entropy is at most {spec['stop_loss']:g} (checked every epoch; "
        f"cap {spec['max_epochs']} epochs)",
        f"n_train = {', '.join(str(n) for n in sorted(finals['n_train'].unique()))}",
        f"Tr K_t on a fixed probe of {spec['trace_probe']} training examples (all outputs) every "
        f"{spec['trace_every']} steps, rescaled by n/{spec['trace_probe']}; ‖δw_t‖ summed every step",
        f"margin-based measures divided by γ = the {spec.get('margin_quantile', 0.05):g} quantile of the "
        "training margins; constants of the bounds dropped",
        f"{finals['seed'].nunique()} seed(s), seed means drawn",
        "capped runs (open markers): " + (", ".join(f"{r.panel} {r.value:g}" for r in capped.itertuples())
                                          if len(capped) else "none"),
    ]
    if len(undefined):
        parts.append("margin-based measures undefined (γ ≤ 0) for " +
                     ", ".join(f"{r.panel} {r.value:g}" for r in undefined.itertuples()))
    note = " Setup: " + "; ".join(parts) + "."
    return note + (f" Departures from the thesis: {spec['deviations']}." if spec.get("deviations") else "")


def plot_fig_6_6(job: FigureJob) -> None:
    """Three panels in the caption's order (width, label corruption, channels): the generalisation
    gap (test − train error) and every complexity measure, each min-max normalised within the
    panel, against the swept value; ours (eq. 6.4.11) and Neyshabur et al.'s highlighted."""
    apply_style()
    spec = job.params
    finals = read_complexity_finals(job.inputs, spec)
    curves = panel_curves(finals)
    panels = [p for p in spec["panels"] if p in job.inputs]
    others = [m for m in COMPLEXITY_MEASURES if m not in ("learning_flow", "neyshabur")]
    palette = dict(zip(others, sns.color_palette("Set2", len(others))))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        curve = curves[curves["panel"] == panel].sort_values("value")
        x = curve["value"].to_numpy()
        for measure in reversed(list(COMPLEXITY_MEASURES)):  # ours drawn last, on top
            values = min_max(curve[measure].astype(float))
            if values.notna().any():
                ax.plot(x, values, label=COMPLEXITY_MEASURES[measure], **_measure_style(measure, palette.get(measure)))
        gap = min_max(curve["gap"])
        ax.plot(x, gap, color=GAP_COLOUR, lw=2.4, ls="--", label="generalisation gap", zorder=6)
        capped = curve["capped"].to_numpy()
        ax.scatter(x[capped], gap[capped], s=70, facecolors="white", edgecolors=GAP_COLOUR, zorder=7)
        if spec["panels"][panel]["vary"] != "corruption":
            ax.set_xscale("log", base=2)
        ax.set_xticks(x, [f"{v:g}" for v in x])
        ax.set_xlabel(spec["panels"][panel]["label"])
        ax.set_title(panel)
        ax.set_ylim(-0.05, 1.05)
    axes[0][0].set_ylabel("normalised value (min-max per panel)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:  # measures missing from the first panel (none so far) join the legend
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False)
    fig.tight_layout()
    save_figure(fig, job.png_path, job.caption + complexity_setup_note(finals, spec), job.data_source)

# --- end of complexity ---
