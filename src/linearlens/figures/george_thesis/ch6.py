"""Figures for Chapter 6 (NTK alignment) and appendix B. The plots of Figs 6.1-6.6 and B.1-B.8 (tangent-kernel
spectrum, alignment with the labels, SuperNat, complexity measures); Fig 6.5's left half is an algorithm
box, drawn with its curves."""

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from ...analysis.george_thesis.ch6 import (
    RBF_CURVES,
    SUPERNAT_METHODS,
    rbf_capacity_curves,
    read_rbf_capacity,
    read_supernat,
    supernat_curves,
    supernat_final_errors,
)
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

SUPERNAT_COLOURS = {"gd": "#2c6fbb", "supernat": "#c0392b"}
SUPERNAT_BOX = "\n".join([
    r"$\bf{SuperNat}$",
    r"Input: features $\Phi_0=\Phi$ ($n\times P$), $w=0$, step $\eta$",
    r"for $t = 0, 1, \ldots$:",
    r"  1. SVD  $\Phi_t=\sum_j \sqrt{\lambda_{jt}}\,u_j v_j^\top$",
    r"  2. $\nu^*_j=\kappa\,/\,|u_j^\top\nabla_f L|$   (Prop 6.4.2, 6.4.9)",
    r"      minimises $\|\delta w_{GD}\|_{\tilde A_\nu}\,\|\tilde A_\nu^{-1}\Phi_t^\top\|_F$",
    r"      over $\tilde A_\nu=\sum_j\sqrt{\nu_j}\,v_j v_j^\top+\mathrm{Id}_\perp$   (6.4.8)",
    r"  3. rescale: $\Phi_{t+1}=\Phi_t\tilde A_{\nu^*}^{-1}$,",
    r"      $\lambda_{j,t+1}=|u_j^\top\nabla_f L|\,\lambda_{jt}/\kappa$   (6.4.10)",
    r"  4. GD step in the rescaled model:",
    r"      $\delta\tilde w=-\eta\,\Phi_{t+1}^\top\nabla_f L$",
])
KAPPA_NOTES = {"trace_preserving": r"$\kappa$: $\sum_j\lambda_{jt}$ kept constant (trace-preserving)",
               "max_residual": r"$\kappa=\max_j|u_j^\top\nabla_f L|$ (the rescaling only contracts)",
               "literal": r"$\kappa=1$ (eq. 6.4.10 with no isotropic rescaling)"}


def plot_fig_6_5(job: FigureJob) -> None:
    """Fig 6.5: (left) the SuperNat algorithm box; (right) test error of GD and SuperNat over iterations
    on the noisy linear-regression toy, mean ± std over seeds, log-log axes from iteration 1."""
    spec = job.params
    record = read_supernat(job.inputs["runs"][0])
    curves = supernat_curves(record)
    final = supernat_final_errors(record)
    apply_style()
    fig, (box, ax) = plt.subplots(1, 2, figsize=(12, 4.6), gridspec_kw={"width_ratios": [1.05, 1]})
    box.axis("off")
    box.text(0.0, 0.98, SUPERNAT_BOX + "\n" + KAPPA_NOTES[spec["kappa"]], transform=box.transAxes, va="top",
             ha="left", fontsize=10, linespacing=2.0,
             bbox={"boxstyle": "round,pad=0.6", "facecolor": "#f7f7f7", "edgecolor": "0.6"})
    for method, label in SUPERNAT_METHODS.items():
        curve = curves[(curves["method"] == method) & (curves["iteration"] >= 1)]
        ax.plot(curve["iteration"], curve["mean"], color=SUPERNAT_COLOURS[method], label=label, linewidth=1.8)
        lower = np.maximum(curve["mean"] - curve["std"], curve["mean"] / 10)
        ax.fill_between(curve["iteration"], lower, curve["mean"] + curve["std"], color=SUPERNAT_COLOURS[method],
                        alpha=0.2, linewidth=0)
    ax.set(xscale="log", yscale="log", xlabel="iteration", ylabel="test error (MSE, noise-free targets)",
           title="noisy linear regression")
    ax.legend()
    seeds = len(record["seeds"])
    caption = (f"{job.caption} Setup: Φ = [φ, φ_noise] with φ ~ N(0, 1) and d = {spec['d']} noise features "
               f"~ N(0, I_d/d); y = φ + P_noise ε, P_noise = φ_noise φ_noiseᵀ as written (not an orthogonal "
               f"projector), σ² = {spec['noise_variance']:g}, n = {spec['n_train']}; test set: {spec['n_test']} fresh "
               f"points with noise-free targets y = φ (not stated in the thesis). Loss ‖f − y‖²/(2n) from w = 0, "
               f"η = {spec['lr_factor']:g}/λ_max(ΦΦᵀ/n), {spec['iterations']} iterations, κ {spec['kappa']} "
               f"(thesis: 'up to isotropic rescaling'; trap T-NTK-10); learning rate, iterations, test set and κ "
               f"are our choices. The 50 × {spec['d'] + 1} feature matrix has {spec['d'] + 1} singular modes (the "
               f"thesis's sums run to n). Curves: mean ± std over {seeds} seeds, from iteration 1 (log axes). "
               f"Final test MSE: GD {final['gd'].mean():.4f}, SuperNat {final['supernat'].mean():.4f}; any run "
               f"that converges ends at the unique least-squares interpolator (P < n, y in the span of Φ).")
    save_figure(fig, job.png_path, caption, job.data_source)

# --- end of supernat ---

# --- Fig B.3: which norm measures capacity (random RBF features) (rbf_capacity) ---

RBF_COLOURS = {"test_error": "0.15", "bound_identity": "#2c6fbb", "bound_optimised": "#c0392b"}


def _plot_interpolator_clouds(fig, cell, record: dict) -> None:
    scatter_c = record["scatter_c"]
    grid = cell.subgridspec(2, (len(scatter_c) + 1) // 2, hspace=0.45, wspace=0.35)
    colours = sns.color_palette("viridis", len(scatter_c))
    i, j = (int(mode) for mode in record["projection_modes"])
    for k, c in enumerate(scatter_c):
        ax = fig.add_subplot(grid[k // grid.ncols, k % grid.ncols])
        points = record["projections"][k]
        limit = 1.1 * np.abs(points).max() or 1.0
        ax.scatter(points[:, 0], points[:, 1], s=8, color=colours[k], alpha=0.8)
        ax.set(xlim=(-limit, limit), ylim=(-limit, limit), aspect="equal", title=f"c = {c:g}")
        ax.tick_params(labelsize=6.5)
        ax.set_xlabel(f"on φ$_{{{i}}}$", fontsize=8, labelpad=1)
        ax.set_ylabel(f"on φ$_{{{j}}}$", fontsize=8, labelpad=1)


def _plot_bounds_against_c(ax, curves, margin: float) -> None:
    """Curves on a log axis sized by the points where the solution interpolates; a point where it does
    not (numerical rank < n) is an open marker, and one above the axis is written at the top edge."""
    interpolates = curves["max_train_residual"] <= 1e-6
    shown = [curves.loc[interpolates, f"{key}_mean"] + curves.loc[interpolates, f"{key}_std"] for key in RBF_CURVES]
    top = 5 * max(float(values.max()) for values in shown) if interpolates.any() else None
    for key, label in RBF_CURVES.items():
        mean, std = curves[f"{key}_mean"], curves[f"{key}_std"]
        colour = RBF_COLOURS[key]
        ax.plot(curves.index, mean, color=colour, label=label)
        ax.fill_between(curves.index, np.maximum(mean - std, mean / 10), mean + std, color=colour, alpha=0.15,
                        linewidth=0)
        ax.scatter(curves.index[interpolates], mean[interpolates], s=12, color=colour, zorder=3)
        ax.scatter(curves.index[~interpolates], np.minimum(mean[~interpolates], top or np.inf), s=30,
                   facecolor="white", edgecolor=colour, zorder=3, marker="^" if top else "o")
        for c, value in mean[~interpolates].items():
            if top and value > top:
                ax.annotate(f"{value:.2g}", (c, top), textcoords="offset points", xytext=(-4, -12), ha="right",
                            fontsize=7, color=colour)
    ax.set(yscale="log", xlabel="feature scaling factor c", ylabel="test error / Rademacher bound",
           title=f"margin γ = {margin:g}")
    if top:
        ax.set_ylim(top=top)
    ax.legend(fontsize=8, loc="center right")


def plot_fig_B_3(job: FigureJob) -> None:
    """Fig B.3: (left) centred minimum-ℓ2 interpolators projected on two right singular vectors, one
    small panel per c (equal scales on both axes, so the cloud's shape shows its anisotropy); (right)
    test error and the A = Id and optimised-A bounds against c (log y)."""
    spec = job.params
    record = read_rbf_capacity(job.inputs["runs"][0])
    curves = rbf_capacity_curves(record)
    apply_style()
    fig = plt.figure(figsize=(13, 5.2))
    outer = fig.add_gridspec(1, 2, width_ratios=[1.1, 1], wspace=0.18)
    _plot_interpolator_clouds(fig, outer[0], record)
    _plot_bounds_against_c(fig.add_subplot(outer[1]), curves, spec["margin"])
    i, j = (int(mode) for mode in record["projection_modes"])
    not_interpolating = curves.index[curves["max_train_residual"] > 1e-6]
    caption = (f"{job.caption} Setup: P = {spec['n_features']} random Fourier features (RBFSampler, γ = "
               f"{spec['gamma']:g}, random_state {spec['feature_seed']}) of N = {spec['n_points']} equally spaced "
               f"points on [−{spec['half_width']:g}, {spec['half_width']:g}] (a not stated in the thesis); "
               f"singular values rescaled to l_j^c = 1 + c(l_j − 1); labels sign(ψ) of the left singular vector "
               f"with 0-based index {spec['label_mode']} (the second; the top one keeps one sign on the interval, "
               f"which labels every point +1), oriented to be positive for x > 0; left panel on the right singular "
               f"vectors with 0-based indices {i} and {j}, equal scales on both axes. {spec['n_subsamples']} training "
               f"subsamples of n = {spec['n_train']} points; test error = 0-1 error of sign(f) on the N − n "
               f"points outside S (a tie, |f| ≤ {spec['tie_tolerance']:g}, counts ½: at c = 0 with P ≥ N the "
               f"whitened kernel is the identity and f vanishes off S). Bounds (B.2.9) divided by the margin γ = "
               f"{spec['margin']:g}, the interpolator's own training margin (its empirical ramp loss is 0), "
               f"plotted raw with the test error on one log axis, mean ± std over subsamples; the optimised "
               f"bound (1/(γn)) Σ_j |u_jᵀy| takes the best basis where singular values repeat (relative "
               f"{spec['rtol']:g}: at c = 0 all are equal and it is ‖y‖/(γn)). Singular values below "
               f"{spec['rtol']:g} × the largest count as zero")
    if len(not_interpolating):
        caption += (f"; at c = {', '.join(f'{c:g}' for c in not_interpolating)} a sample feature matrix has "
                    f"numerical rank {int(curves.loc[not_interpolating, 'min_rank'].min())} < n, so the minimum-norm "
                    f"least-squares solution replaces the interpolator")
        caption += " (open markers; a value above the axis is written at its top edge)"
    save_figure(fig, job.png_path, caption + ".", job.data_source)

# --- end of rbf_capacity ---

# --- Fig B.1: output change along the Jacobian's top singular directions (perturbation) ---

# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

# --- end of complexity ---
