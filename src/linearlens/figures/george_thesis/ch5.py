"""Figures for Chapter 5 (lazy vs hasty) and appendix C. The plots of Figs 5.1-5.4 and C.1-C.9 (linearised vs
non-linear training on easy and difficult examples; the quadratic model)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns

from ...analysis.george_thesis.ch5 import (
    ANALYTIC_EXAMPLES,
    ANALYTIC_REGIMES,
    analytic_curves,
    crossing_times,
    order_text,
    read_analytic,
    read_twolayer,
    twolayer_curves,
)
from ...manifests.jobs import FigureJob
from ..style import apply_style, save_figure

# --- Fig 5.1: the yin-yang toy, α = 1 vs α = 100, Δloss maps at loss thresholds ---


# --- Figs 5.4, C.9: the quadratic model in closed form, and a 2-layer linear MLP on its datasets ---

REGIME_STYLES = {"linear": "-", "nonlinear": "--"}
REGIME_NAMES = {"linear": "linear", "nonlinear": "non-linear"}
EXAMPLE_TITLES = {"example_1": "Example 1: input/label correlation", "example_2": "Example 2: label noise",
                  "example_3": "Example 3: spurious correlation"}
GROUP_COLOURS = ("#2c6fbb", "#c0392b")  # easy group (clean, majority), difficult group (noisy, minority)
ORDER_LEVEL = 0.1  # the captions name the order in which Example 1's errors fall to this share of their start


def _example_1_orders(curves: dict) -> str:
    """'linear a-b-c, non-linear c-b-a': the order of Example 1's examples in each regime."""
    return ", ".join(f"{REGIME_NAMES[regime]} {order_text(crossing_times(*curves[regime], ORDER_LEVEL))}"
                     for regime in ANALYTIC_REGIMES)


def _group_colours(names) -> list:
    return sns.color_palette("viridis", len(names)) if len(names) > 2 else list(GROUP_COLOURS)


def _two_time_axes(ax, ends: dict[str, float], unit: str) -> float:
    """Each regime on its own time range over the same width: the bottom axis reads the linear
    regime's time, the top one the non-linear regime's. Returns the factor that maps non-linear
    times onto the bottom axis."""
    scale = ends["linear"] / ends["nonlinear"]
    ax.set_xlim(0, ends["linear"])
    ax.set_xlabel(f"{unit}, linear regime (solid)")
    top = ax.secondary_xaxis("top", functions=(lambda v: v / scale, lambda v: v * scale))
    top.set_xlabel(f"{unit}, non-linear regime (dashed)", fontsize=9)
    return scale


def _curves_panel(ax, curves: dict, names, ends: dict[str, float], unit: str, ylabel: str, title: str,
                  bands: dict | None = None) -> None:
    """Per-group curves {regime: (times, (T, groups))}, linear solid and non-linear dashed, one colour
    per group; ``bands`` {regime: (low, high)} shades a spread around each curve."""
    scale = _two_time_axes(ax, ends, unit)
    colours = _group_colours(names)
    for regime in ANALYTIC_REGIMES:
        times, values = curves[regime]
        x = times * (scale if regime == "nonlinear" else 1.0)
        for g, name in enumerate(names):
            ax.plot(x, values[:, g], REGIME_STYLES[regime], color=colours[g], linewidth=1.6,
                    label=str(name) if regime == "linear" else None)
            if bands is not None:
                low, high = bands[regime]
                ax.fill_between(x, low[:, g], high[:, g], color=colours[g], alpha=0.12, linewidth=0)
    for regime in ANALYTIC_REGIMES:
        ax.plot([], [], REGIME_STYLES[regime], color="0.2", label=REGIME_NAMES[regime])
    ax.set(ylabel=ylabel, title=title)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, ncol=2 if len(names) > 2 else 1)


def _ylabel(name: str) -> str:
    return "per-example squared error" if name == "example_1" else "per-group MSE"


def _examples_line(spec: dict) -> str:
    one, two, three = (spec["examples"][name] for name in ANALYTIC_EXAMPLES)
    return (f"Example 1: μ = {', '.join(f'{m:g}' for m in one['mu'])}. Example 2: n = {two['n']}, q = {two['q']} noisy, "
            f"η = {two['eta']:g}, d = {two['d']}. Example 3: n = {three['n']}, q = {three['q']} minority, "
            f"η = {three['eta']:g}, λ = {three['spurious_scale']:g} (the author's code; the thesis asks for λ ∈ (0, 1)), "
            f"d = {three['d']}. Labels y_i = ±1 and the flipped examples drawn with seed {spec['seed']} (the thesis "
            "leaves them open); in Example 3, e_1 is the spurious feature (κ_i y_i) and e_2 the core one (λ y_i).")


def plot_fig_5_4(job: FigureJob) -> None:
    """Fig 5.4: the quadratic model's closed forms, per-example (Example 1) or per-group (Examples 2,
    3) squared error over time, linear regime solid, non-linear dashed, each on its own time range."""
    spec = job.params
    record = read_analytic(job.inputs["runs"][0])
    apply_style()
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
    for ax, name in zip(axes, ANALYTIC_EXAMPLES):
        example = record[name]
        curves = {regime: analytic_curves(example, regime) for regime in ANALYTIC_REGIMES}
        ends = {regime: spec["examples"][name][f"t_{regime}"] for regime in ANALYTIC_REGIMES}
        _curves_panel(ax, curves, example["group_names"], ends, "time (arbitrary scale)", _ylabel(name),
                      EXAMPLE_TITLES[name])
    fig.tight_layout()
    orders = _example_1_orders({regime: analytic_curves(record["example_1"], regime, dense=True)
                                for regime in ANALYTIC_REGIMES})
    caption = (f"{job.caption} Closed forms of §5.4: non-linear regime Prop. 5.4.1, linear regime θ_λ(t) = θ*_λ + "
               "exp(−2μ_λθ⁰_λ t)(θ⁰_λ − θ*_λ): the thesis's eq. 5.4.6 prints exp(−μ_λθ⁰_λ t), without the factor 2 "
               "that the linearised gradient flow gives (and that makes Example 1's linear rate the σμ_i its text "
               f"states). Initialisation w⁰ = √σ·1, σ = {spec['sigma']:g}, so θ⁰_λ = σ/2 (the author's code uses "
               f"θ⁰_λ = σ). {_examples_line(spec)} The degenerate eigenspaces of XᵀX (Examples 2, 3) get a "
               f"{spec['degenerate_basis']} basis: the non-linear dynamics depend on it (with a label-aligned basis "
               "Example 2's noise mode would be learned before the dominant one). Time axes: each regime on its own "
               "range (bottom: linear, top: non-linear), as the thesis's 'arbitrary scale'. Order in which Example 1's "
               f"squared errors fall to {ORDER_LEVEL:g} of their start: {orders}.")
    save_figure(fig, job.png_path, caption, job.data_source)


def plot_fig_C_9(job: FigureJob) -> None:
    """Fig C.9: a 2-layer linear MLP trained by α-scaled GD on the three examples, per-example or
    per-group squared error over iterations, mean over initialisations (band: min to max), linear
    regime (large α) solid, non-linear (small α) dashed, each on its own iteration range."""
    spec = job.params
    config = spec["twolayer"]
    runs = {str(run["example"]): run for run in map(read_twolayer, job.inputs["runs"])}
    apply_style()
    fig, axes = plt.subplots(1, len(runs), figsize=(16 * len(runs) / 3, 4.8), squeeze=False)
    orders = ""
    for ax, name in zip(axes[0], (name for name in ANALYTIC_EXAMPLES if name in runs)):
        run = runs[name]
        per_init = {regime: twolayer_curves(run, regime) for regime in ANALYTIC_REGIMES}
        curves = {regime: (times, values.mean(axis=1)) for regime, (times, values) in per_init.items()}
        bands = {regime: (values.min(axis=1), values.max(axis=1)) for regime, (_, values) in per_init.items()}
        ends = {regime: float(per_init[regime][0][-1]) for regime in ANALYTIC_REGIMES}
        if name == "example_1":
            orders = (f" Order in which Example 1's squared errors (mean over initialisations) fall to "
                      f"{ORDER_LEVEL:g} of their start: {_example_1_orders(curves)}.")
        _curves_panel(ax, curves, run["group_names"], ends, "GD iterations", _ylabel(name), EXAMPLE_TITLES[name],
                      bands)
    fig.tight_layout()
    alphas, iterations = config["alphas"], config["iterations"]
    caption = (f"{job.caption} An unconstrained 2-layer linear MLP (d × d then d × 1, no bias, PyTorch's default "
               f"init × {config['init_scale']:g}) predicting α(f_θ − f_θ₀), trained by full-batch GD on the mean "
               f"squared error at rate {config['lr']:g}/α²: α = {alphas['nonlinear']:g} (non-linear, "
               f"{iterations['nonlinear']} iterations, dashed) and α = {alphas['linear']:g} (linear, "
               f"{iterations['linear']} iterations, solid) from the same {config['inits']} initialisations; curves: "
               f"mean over initialisations, bands: min to max. {_examples_line(spec)} §C.7 names all three "
               "examples; the author's code runs Example 1 only. Iteration axes: bottom "
               "linear, top non-linear." + orders)
    save_figure(fig, job.png_path, caption, job.data_source)


# --- Figs 5.2, C.1-C.6: α-scaled runs on C-score groups and noisy labels, linearity metrics ---


# --- Figs 5.3, C.7, C.8: spurious correlations ---
