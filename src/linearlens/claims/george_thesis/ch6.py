"""Claims for Chapter 6 (NTK alignment) and appendix B. The thesis's claims about Figs 6.1-6.6 and B.1-B.8
(tangent-kernel spectrum, alignment with the labels, SuperNat, complexity measures); Fig 6.5's left half is
an algorithm box, drawn with its curves."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...analysis.george_thesis.ch6 import (
    COMPLEXITY_MEASURES,
    DISK_RATIO_INDEX,
    SPECTRAL_RATIO_INDEX,
    disk_summary,
    frequency_trend,
    gap_correlations,
    half_rise_step,
    high_span,
    noise_label,
    panel_curves,
    percent,
    perturbation_summary,
    rbf_capacity_curves,
    rbf_capacity_trends,
    read_complexity_finals,
    read_kernel_runs,
    read_npz,
    read_perturbation_runs,
    read_rbf_capacity,
    read_supernat,
    rise_decades,
    spearman,
    still_rising,
    supernat_best_errors,
    supernat_final_errors,
)
from ...manifests.jobs import ClaimsJob
from .. import ClaimCheck

# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and label alignment over training ---


@dataclass(frozen=True)
class AlignmentThresholds:
    """The thesis's numbers (H17, H18, H21), the same at every scale: a check tests the
    statement at the strength the thesis states. Where the runs are stand-ins (quick: MLPs and a
    small CNN on 8×8 digits, 500×500 probe kernels), a miss of one of the thesis's numbers is put
    down to the stand-in (``stand_in``). Read from ``george_thesis.claim_thresholds.alignment``."""

    erank_share_clean: float  # H17: min effective rank / initial one, below, without random labels
    erank_share_noisy: float  # H17: the same with the most random labels
    eigenvalue_growth: float  # H17: max and mean eigenvalue gain by full training accuracy, above
    top40_share: float  # H17: T_40 at the end, above
    cka_gain: float  # H18: peak CKA / initial CKA, above (train and test kernels)
    layer_cka: float  # H18: per-layer CKA (peak) above this for at least two intermediate layers
    lr_erank_ratio: list[float]  # H21: min erank at the small lr / at the large lr, within ("about 3×")
    stand_in: bool  # the networks and data are stand-ins for VGG19 / ResNet18 on CIFAR-10 and the MLP on MNIST


STAND_IN_NOTE = ("the thesis's number is for VGG19 on CIFAR-10 with 1000×1000 probe kernels; here an MLP stand-in on "
                 "8×8 digits with 500×500 kernels")


def _verdict(value: float, passed: bool) -> bool | None:
    """None when the measurement is not a number (a diverged run)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return bool(passed)


NOT_MEASURABLE = "not evaluated: the measurement is not a number (the run diverged)"


def _judged(value: float, passed: bool, limits: AlignmentThresholds | None = None) -> dict:
    """A check's verdict on ``value`` (None, with the reason, when it is not a number); a failure of
    one of the thesis's numbers on stand-in runs is put down to the stand-in."""
    verdict = _verdict(value, passed)
    if verdict is None:
        return {"passed": None, "note": NOT_MEASURABLE}
    if verdict is False and limits is not None and limits.stand_in:
        return {"passed": False, "failure_reason": "stand_in", "note": STAND_IN_NOTE}
    return {"passed": verdict}


def _run_of(frame: pd.DataFrame, run: dict) -> pd.DataFrame:
    return frame[(frame.family == run["family"]) & (frame.setting == run["setting"]) & (frame.seed == run["seed"])]


def alignment_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H17 (spectrum), H18 (alignment with the labels), H21 (learning rate) on the runs of Figs
    6.2, 6.3 and B.8."""
    limits = AlignmentThresholds(**job.params["thresholds"])
    runs = job.params["runs"]
    rows = read_kernel_runs(job.inputs["rows"], runs)
    spectra = read_kernel_runs(job.inputs["spectra"], runs)
    layers = read_kernel_runs(job.inputs["layers"], runs)
    large_lr = max(run["lr"] for run in runs)
    checks = []
    noisiest = max(r["label_noise"] for r in runs)
    for run in (r for r in runs if r["lr"] == large_lr):
        checks += _spectrum_checks(run, _run_of(rows, run), _run_of(spectra, run), limits, runs)
        checks += _cka_checks(run, _run_of(rows, run), _run_of(layers, run), limits)
        if run["label_noise"] == noisiest > 0:
            checks.append(layer_peak_check(run, _run_of(rows, run), _run_of(layers, run)))
    checks += _learning_rate_checks(runs, spectra, limits)
    return checks


def _spectrum_checks(run, rows, spectra, limits, runs) -> list[ClaimCheck]:
    train = spectra[spectra.probe == "train"].set_index("step")
    name = noise_label(run["label_noise"])
    noisiest = max(r["label_noise"] for r in runs)
    share_limit = limits.erank_share_clean if run["label_noise"] == 0 else (
        limits.erank_share_noisy if run["label_noise"] == noisiest else None)
    erank_share = float(train.effective_rank.min() / train.effective_rank.iloc[0])
    erank = (f"{erank_share:.3f} (initial {train.effective_rank.iloc[0]:.1f}, min {train.effective_rank.min():.1f})")
    if share_limit is None:
        checks = [ClaimCheck("H17", "fig_6_2", f"{name}: the effective rank drops early in training",
                             "min effective rank / initial (reported)", erank, None,
                             note="not evaluated: the thesis gives the drop for no and for 50% random labels only")]
    else:
        checks = [ClaimCheck("H17", "fig_6_2", f"{name}: the effective rank drops early in training, to < "
                             f"{share_limit:.0%} of its initial value", f"min effective rank / initial < {share_limit:g}",
                             erank, **_judged(erank_share, erank_share < share_limit, limits))]
    if "trace_ratio_40" in train:
        t40 = train["trace_ratio_40"]
        checks.append(ClaimCheck(
            "H17", "fig_6_2", f"{name}: the top-40 eigenvalues hold more than {limits.top40_share:.0%} of the trace",
            f"T_40 at the end > at step 0 and > {limits.top40_share:g}", f"T_40 {t40.iloc[0]:.3f} -> {t40.iloc[-1]:.3f}",
            **_judged(float(t40.iloc[-1]), t40.iloc[-1] > t40.iloc[0] and t40.iloc[-1] > limits.top40_share, limits)))
    fitted = rows[rows.train_accuracy >= 1.0]
    at = int(fitted.step.iloc[0]) if len(fitted) else int(rows.step.iloc[-1])
    growth = {s: float(train.loc[at, f"eigenvalue_{s}"] / train[f"eigenvalue_{s}"].iloc[0]) for s in ("max", "mean")}
    limit = limits.eigenvalue_growth
    smallest = min(growth.values())
    checks.append(ClaimCheck(
        "H17", "fig_6_2", f"{name}: max and mean eigenvalues gain over two orders of magnitude by 100% training accuracy",
        f"growth of both at the first step with training accuracy 1 (else the last) > {limit:g}",
        f"max x{growth['max']:.1f}, mean x{growth['mean']:.1f} at step {at}"
        + ("" if len(fitted) else " (training accuracy never reached 1)"),
        **_judged(smallest, smallest > limit, limits)))
    if run["label_noise"] == noisiest and noisiest > 0:
        rho = spearman(train.effective_rank.to_numpy(), rows.set_index("step").loc[train.index, "test_accuracy"])
        checks.append(ClaimCheck(
            "H17", "fig_6_2", f"{name}: the train kernel's effective rank anti-correlates with test accuracy",
            "Spearman rho(effective rank, test accuracy) over the run < 0", f"rho = {rho:.2f}",
            **_judged(rho, rho < 0)))
    return checks


def _cka_checks(run, rows, layers, limits) -> list[ClaimCheck]:
    name = noise_label(run["label_noise"])
    checks = []
    for probe in ("train", "test"):
        curve = rows[f"{probe}_cka"]
        gain = float(curve.max() / curve.iloc[0])
        checks.append(ClaimCheck(
            "H18", "fig_6_3", f"{name}: the {probe} kernel's CKA with the labels increases during training",
            f"peak CKA / initial CKA > {limits.cka_gain:g}", f"{curve.iloc[0]:.3f} -> peak {curve.max():.3f} "
            f"(x{gain:.2f}), end {curve.iloc[-1]:.3f}", bool(gain > limits.cka_gain)))
    if run["label_noise"] > 0:
        learning = rows[rows.step <= rows.step[rows.test_accuracy.idxmax()]]
        peaks = {probe: float(learning[f"{probe}_cka"].max()) for probe in ("train", "test")}
        ratio = peaks["test"] / peaks["train"] if peaks["train"] > 0 else np.inf
        checks.append(ClaimCheck(
            "H18", "fig_6_3", f"{name}: during learning the test kernel's CKA reaches a much higher value than the "
            "train kernel's", f"peak test CKA / peak train CKA up to the test-accuracy peak ≥ {MUCH_HIGHER:g}",
            f"test {peaks['test']:.3f} vs train {peaks['train']:.3f} (×{ratio:.2f})", bool(ratio >= MUCH_HIGHER),
            document_threshold="'a much higher value' (no number stated)"))
    train_layers = layers[layers.probe == "train"]
    peaks = train_layers.groupby("layer_index").cka.max()
    intermediate = peaks.iloc[1:-1]
    limit = limits.layer_cka
    above = int((intermediate > limit).sum())
    checks.append(ClaimCheck(
        "H18", "fig_6_3", f"{name}: several intermediate layers align (layer CKA > {limit:g}), the top layers less",
        f"at least 2 intermediate layers with peak CKA > {limit:g}, and the last layer's peak below the best "
        "intermediate one", "peaks by layer " + ", ".join(f"{v:.2f}" for v in peaks),
        **_judged(float(peaks.max()), above >= 2 and peaks.iloc[-1] < intermediate.max(), limits)))
    return checks


MUCH_HIGHER = 1.5  # "a much higher value" (test over train CKA, Sec 6.2): our reading, the thesis gives no number
PEAK_FACTOR = 2.0  # "peak when the test accuracy does", on the thesis's log-iteration axis: within a factor 2


def layer_peak_check(run: dict, rows: pd.DataFrame, layers: pd.DataFrame) -> ClaimCheck:
    """H18 (§6.3.3): "in the presence of high label noise, [layer] CKAs tend to peak when the test
    accuracy does": most (more than half) of the layer CKA curves (train and test kernels) peak within
    a factor PEAK_FACTOR in iterations of the test-accuracy peak ("tend to": not every one; the thesis
    gives no tolerance, its x-axis is logarithmic)."""
    at = max(float(rows.step[rows.test_accuracy.idxmax()]), 1.0)
    peaks = layers.loc[layers.groupby(["probe", "layer_index"]).cka.idxmax(), ["probe", "layer_index", "step"]]
    ratios = np.maximum(peaks.step.clip(lower=1.0) / at, at / peaks.step.clip(lower=1.0))
    text = "; ".join(f"{probe}: " + ", ".join(f"{int(step)}" for step in part.step)
                     for probe, part in peaks.groupby("probe"))
    return ClaimCheck("H18", "fig_6_3", f"{noise_label(run['label_noise'])}: the layer CKAs peak when the test accuracy "
                      "does", f"more than half of the layer CKA curves peak within ×{PEAK_FACTOR:g} of the "
                      "test-accuracy peak step", f"test accuracy peaks at step {at:.0f}; layer CKA peaks at steps "
                      f"({text}): {int((ratios <= PEAK_FACTOR).sum())} of {len(ratios)} within",
                      bool((ratios <= PEAK_FACTOR).mean() > 0.5),
                      document_threshold="'tend to peak when the test accuracy does' (no tolerance stated)")


def _learning_rate_checks(runs, spectra, limits) -> list[ClaimCheck]:
    """H21 (Fig B.8, §6.3.5): with the smaller learning rate the effective rank drops "to a much (about
    3 times) higher value": the ratio of the two runs' lowest effective ranks, at the thesis's strength."""
    lrs = sorted({run["lr"] for run in runs})
    if len(lrs) < 2:
        return []
    small, large = lrs[0], lrs[-1]
    checks = []
    for noise in sorted({run["label_noise"] for run in runs}):
        pair = {r["lr"]: r for r in runs if r["label_noise"] == noise and r["lr"] in (small, large)}
        if len(pair) < 2:
            continue
        minimum = {lr: _run_of(spectra, run).query("probe == 'train'").effective_rank.min() for lr, run in pair.items()}
        checks.append(learning_rate_check(noise, small, large, minimum[small], minimum[large], limits))
    return checks


def learning_rate_check(noise: float, small: float, large: float, erank_small: float, erank_large: float,
                        limits: AlignmentThresholds) -> ClaimCheck:
    low, high = limits.lr_erank_ratio
    ratio = float(erank_small / erank_large)
    return ClaimCheck(
        "H21", "fig_B_8", f"{noise_label(noise)}: with lr {small:g} the effective rank drops to a value about 3x "
        f"higher than with lr {large:g}", f"min erank ratio (lr {small:g} / lr {large:g}) in [{low:g}, {high:g}]",
        f"{ratio:.2f} ({erank_small:.1f} vs {erank_large:.1f})", **_judged(ratio, low <= ratio <= high, limits),
        document_threshold="about 3× (§6.3.5)")


# --- Figs 6.4, B.7: alignment on easy vs difficult examples ---


def easy_difficult_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H19 (easy examples align before and above difficult ones, Fig 6.4) and H20 (depth, Fig B.7)."""
    runs = job.params["runs"]
    rows = read_kernel_runs(job.inputs["rows"], runs)
    families = job.params["families"]
    checks = []
    for family, part in rows.groupby("family", sort=False):
        if family == _depth_family(runs, rows):
            continue
        peaks = part.groupby("seed")[["easy_cka", "difficult_cka"]].max().mean()
        early = part.groupby("seed").apply(_gains_when_easy_half_risen).mean()
        label = families[family]["label"]
        checks.append(ClaimCheck(
            "H19", "fig_6_4", f"difficult = {label}: easy examples align higher than difficult ones",
            "peak CKA on easy > peak CKA on difficult (seed mean)",
            f"easy {peaks.easy_cka:.3f}, difficult {peaks.difficult_cka:.3f}", bool(peaks.easy_cka > peaks.difficult_cka)))
        checks.append(ClaimCheck(
            "H19", "fig_6_4", f"difficult = {label}: easy examples align first",
            "CKA gained since step 0, at the step where the easy CKA has covered half its rise: easy > difficult "
            "(seed mean)", f"at step {early.step:.0f}: easy +{early.easy:.3f}, difficult {early.difficult:+.3f}",
            bool(early.easy > early.difficult)))
        if job.params.get("difficult", {}).get(family, "random_labels") != "random_labels":
            checks.append(structured_later_rise_check(label, part))
    checks += _depth_checks(rows[rows.family == _depth_family(runs, rows)])
    return checks


def structured_later_rise_check(label: str, part: pd.DataFrame) -> ClaimCheck:
    """H19, structured difficult examples (KMNIST, §6.3.4): "we also note an increase of the CKA later
    in training": their CKA rises (its peak above its start) and gets half-way up after the easy
    examples' does (seed means)."""
    per_seed = part.groupby("seed").apply(lambda run: pd.Series({
        "easy": half_rise_step(run.step, run.easy_cka), "difficult": half_rise_step(run.step, run.difficult_cka),
        "rise": run.difficult_cka.max() / run.difficult_cka.iloc[0]})).mean()
    later = bool(np.isfinite(per_seed.difficult) and per_seed.difficult > per_seed.easy)
    return ClaimCheck(
        "H19", "fig_6_4", f"difficult = {label}: the difficult examples' CKA also increases, later in training",
        "half-rise step of the difficult examples' CKA (it must rise) after the easy examples' (seed mean)",
        f"half-rise step: easy {per_seed.easy:.0f}, difficult {per_seed.difficult:.0f}; difficult peak / start "
        f"{per_seed.rise:.2f}", later)


def _gains_when_easy_half_risen(run: pd.DataFrame) -> pd.Series:
    """How much alignment each kind has gained by the time the easy examples' CKA is half-way
    up. (The half-rise step of the difficult curve itself is no measure: with random labels it
    barely rises, and its half-way step is noise.)"""
    step = half_rise_step(run.step, run.easy_cka)
    at = run[run.step == step].iloc[0] if np.isfinite(step) else run.iloc[-1]
    first = run.iloc[0]
    return pd.Series({"step": at.step, "easy": at.easy_cka - first.easy_cka,
                      "difficult": at.difficult_cka - first.difficult_cka})


def _depth_family(runs, rows) -> str | None:
    """The family of Fig B.7: the one with several settings (depths)."""
    settings = rows.groupby("family").setting.nunique()
    several = settings[settings > 1]
    return several.index[0] if len(several) else None


def _depth(setting: str) -> int:
    return int("".join(ch for ch in setting if ch.isdigit()))


def _still_aligning(rows: pd.DataFrame) -> str:
    """Why the depth runs end before the regime Fig B.7 is about, read from the data: runs whose
    easy-example CKA ends above all its earlier records are still aligning when training stops, so its peak,
    half-rise step, rise time and the easy/difficult ratio are those of a cut curve ("" if none)."""
    ends = rows.groupby(["setting", "seed"]).apply(lambda run: pd.Series({
        "rising": still_rising(run.easy_cka), "step": run.step.iloc[-1],
        "accuracy": run.train_accuracy.iloc[-1] if "train_accuracy" in run else np.nan}))
    rising = ends[ends.rising.astype(bool)]
    if rising.empty:
        return ""
    runs = ", ".join(f"{setting} seed {seed} (training accuracy {row.accuracy:.2f})"
                     for (setting, seed), row in rising.iterrows())
    return (f"the easy examples' CKA is still rising when training stops at step {int(ends.step.max()):,} in "
            f"{len(rising)} of {len(ends)} runs ({runs}): the peaks, half-rise steps, rise times and ratios compared "
            "are those of cut curves")


def _depth_checks(rows: pd.DataFrame) -> list[ClaimCheck]:
    if rows.empty:
        return []
    per_run = rows.groupby(["setting", "seed"]).apply(lambda run: pd.Series({
        "start": half_rise_step(run.step, run.easy_cka),
        "decades": rise_decades(run.step, run.easy_cka),
        "ratio": run.easy_cka.max() / max(run.difficult_cka.max(), 1e-12),
        "span": high_span(run.step, run.easy_cka / run.difficult_cka.clip(lower=1e-12))})).reset_index()
    per_run["depth"] = per_run.setting.map(_depth)
    by_depth = per_run.groupby("depth")[["start", "decades", "ratio", "span"]].mean()
    cut_short = _still_aligning(rows)

    def trend(column: str, sign: int, what: str, statement: str, fmt: str) -> ClaimCheck:
        rho = spearman(by_depth.index, by_depth[column])
        values = ", ".join(f"depth {d}: {v:{fmt}}" for d, v in by_depth[column].items())
        check = f"Spearman rho(depth, {what}; seed mean) {'>' if sign > 0 else '<'} 0"
        if cut_short:
            return ClaimCheck("H20", "fig_B_7", statement, check, f"rho = {rho:.2f} ({values})", None,
                              note=f"not evaluated at this scale: {cut_short}")
        if np.isnan(rho):
            return ClaimCheck("H20", "fig_B_7", statement, check, f"rho undefined ({values})", None,
                              note="not evaluated: ρ is undefined (a depth's curve never rises, or all depths tie)")
        return ClaimCheck("H20", "fig_B_7", statement, check, f"rho = {rho:.2f} ({values})", bool(rho * sign > 0))

    return [
        trend("start", 1, "step of half the easy-CKA rise", "deeper networks start aligning later", ".0f"),
        trend("decades", -1, "decades of iterations from 10% to 90% of the easy-CKA rise",
              "with depth the alignment increases faster", ".2f"),
        trend("ratio", 1, "peak easy CKA / peak difficult CKA",
              "with depth the easy/difficult alignment ratio reaches a higher value", ".2f"),
        trend("span", -1, "iterations with the easy/difficult CKA ratio at least half-way up to its peak",
              "with depth the easy/difficult ratio stays high for fewer iterations", ".0f"),
    ]


# --- Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task ---

@dataclass(frozen=True)
class DiskThresholds:
    """H16: λ20/λ1 at the first row over λ20/λ1 at the last row, more than ``ratio_drop``
    (the thesis: 1.5% → 0.2%, 7.5×; paper.yaml asks for ≥ 5×, base.yaml only for a decrease); and the
    class structure in the top eigenfunctions: their largest |correlation| with the grid labels
    rises from the first row to the last. Read from ``george_thesis.claim_thresholds.disk``."""

    ratio_drop: float
    ratio_drop_strict: bool  # True: drop > ratio_drop (a decrease); False: drop ≥ ratio_drop
    note: str  # why this scale's threshold is not the thesis's 7.5×


def disk_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H16 on the seed means of the disk runs (Fig 6.1)."""
    limits = DiskThresholds(**job.params["thresholds"])
    summary = disk_summary(job.inputs["runs"])
    by_row = summary.groupby("iteration")[["ratio", "label_correlation"]].mean()
    first, last = by_row.iloc[0], by_row.iloc[-1]
    start, end = int(by_row.index[0]), int(by_row.index[-1])
    seeds = summary["seed"].nunique()
    drop = first["ratio"] / last["ratio"]
    passed = drop > limits.ratio_drop if limits.ratio_drop_strict else drop >= limits.ratio_drop
    ratio = f"λ{DISK_RATIO_INDEX}/λ1"
    wanted = "decreases" if limits.ratio_drop_strict and limits.ratio_drop == 1 else (
        f"drops by {'more than' if limits.ratio_drop_strict else 'at least'} {limits.ratio_drop:g}×")
    return [
        ClaimCheck("H16", "fig_6_1", f"spectrum anisotropy grows: {ratio} = 1.5% at iteration 0, 0.2% at iteration 2000",
                   f"{ratio} (mean over {seeds} seed(s)) {wanted} from iteration {start:,} to {end:,}",
                   f"{percent(first['ratio'])} → {percent(last['ratio'])} ({drop:.2f}× drop)", bool(passed),
                   note=limits.note, document_threshold="1.5% → 0.2% (a 7.5× drop)"),
        ClaimCheck("H16", "fig_6_1", "class structure (the boundary circle) appears in the top eigenfunctions",
                   f"largest |correlation| of the top eigenfunctions with the centred grid labels (mean over {seeds} "
                   f"seed(s)) is higher at iteration {end:,} than at {start:,}",
                   f"{first['label_correlation']:.3f} → {last['label_correlation']:.3f}",
                   bool(last["label_correlation"] > first["label_correlation"])),
    ]


# --- Fig B.2: spectral bias of a random MLP's tangent kernel ---

@dataclass(frozen=True)
class SpectralBiasThresholds:
    """H24 (quick = full scale): over the eigenvectors j < 25 the dominant DFT frequency
    is monotone in j: every step non-decreasing (``monotone_share``, "monotone" read
    literally) and a rank correlation ρ(j, frequency) of at least ``spearman`` (the trend the
    thesis calls a remarkable alignment with Fourier modes); λ10/λ1 of the order of the thesis's 4%:
    within a factor 4 either way."""

    monotone_share: float
    spearman: float
    ratio_range: list[float]


def spectral_bias_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H24 on the random MLP's tangent kernel (Fig B.2)."""
    limits = SpectralBiasThresholds(**job.params["thresholds"])
    run = read_npz(job.inputs["run"][0])
    trend = frequency_trend(run["dominant_frequency"])
    ratio = float(run["ratios"][SPECTRAL_RATIO_INDEX - 1])
    low, high = limits.ratio_range
    statement = "eigenvectors of increasing j have increasing Fourier frequency (first half of the spectrum)"
    span = f"j < {trend['count']}"
    return [
        ClaimCheck("H24", "fig_B_2", statement,
                   f"share of steps j → j + 1 ({span}) whose dominant frequency does not decrease ≥ "
                   f"{limits.monotone_share:.0%}", f"{trend['monotone_share']:.3f}",
                   bool(trend["monotone_share"] >= limits.monotone_share)),
        ClaimCheck("H24", "fig_B_2", statement, f"Spearman ρ(j, dominant frequency) over {span} ≥ {limits.spearman:g}",
                   f"{trend['spearman']:.3f}", bool(trend["spearman"] >= limits.spearman)),
        ClaimCheck("H24", "fig_B_2", f"fast eigenvalue decay: λ{SPECTRAL_RATIO_INDEX}/λ1 ≈ 4%",
                   f"λ{SPECTRAL_RATIO_INDEX}/λ1 within [{percent(low)}, {percent(high)}]", percent(ratio),
                   bool(low <= ratio <= high)),
    ]


# --- Fig 6.5: SuperNat vs gradient descent on noisy linear regression ---

@dataclass(frozen=True)
class SupernatThresholds:
    seed_share: float  # H22: SuperNat's final test error is below GD's in at least this share of the seeds
    equal_within: float  # relative difference that counts as equal (two runs at the same minimiser)



def supernat_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H22: SuperNat's test error ends below gradient descent's on the noisy linear-regression toy."""
    limits = SupernatThresholds(**job.params["thresholds"])
    record = read_supernat(job.inputs["runs"][0])
    final = supernat_final_errors(record)
    best = supernat_best_errors(record)
    kappa = job.params["spec"]["kappa"]
    gd, supernat = final["gd"].mean(), final["supernat"].mean()
    margin = 1 - limits.equal_within
    below = final["supernat"] < margin * final["gd"]
    statement = "SuperNat's test error is below gradient descent's on noisy linear regression (Fig 6.5 right)"
    context = (f"; lowest seed-mean test error over the run: GD {best.loc['gd', 'mean']:.4f} at iteration "
               f"{best.loc['gd', 'iteration']}, SuperNat {best.loc['supernat', 'mean']:.4f} at iteration "
               f"{best.loc['supernat', 'iteration']} (κ {kappa})")
    return [
        ClaimCheck("H22", "fig_6_5", statement,
                   f"seed-mean test MSE at the last iteration: SuperNat < GD by more than {limits.equal_within:g} "
                   "relative",
                   f"SuperNat {supernat:.4f}, GD {gd:.4f} over {len(final)} seeds" + context,
                   bool(supernat < margin * gd)),
        ClaimCheck("H22", "fig_6_5", statement + ", seed by seed",
                   f"SuperNat's final test MSE below GD's (by more than {limits.equal_within:g} relative) in "
                   f"≥ {limits.seed_share:.0%} of the seeds",
                   f"{int(below.sum())} of {len(final)} seeds (largest |difference| "
                   f"{(final['supernat'] - final['gd']).abs().max():.2e})",
                   bool(below.mean() >= limits.seed_share)),
    ]


# --- Fig B.3: which norm measures capacity (random RBF features) ---

@dataclass(frozen=True)
class RbfCapacityThresholds:
    identity_max_spearman: float  # H25: ρ(A = Id bound, test error) over c below this: it fails to track
    optimised_min_spearman: float  # H25: ρ(optimised bound, test error) over c at least this: it tracks
    loose_growth: float  # H25: A = Id bound at c = 1 ≥ this × its minimum over c; the optimised one below it



def rbf_capacity_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H25: the A = Id bound becomes loose and fails to track the test error as c → 1; the optimised-A
    bound (Prop B.2.5) tracks it."""
    limits = RbfCapacityThresholds(**job.params["thresholds"])
    curves = rbf_capacity_curves(read_rbf_capacity(job.inputs["runs"][0]))
    trends = rbf_capacity_trends(curves)
    over = f"over {len(curves)} values of c in [0, 1] (subsample means)"
    growth = limits.loose_growth
    id_rho, opt_rho = trends["bound_identity_spearman"], trends["bound_optimised_spearman"]
    id_growth, opt_growth = trends["bound_identity_growth"], trends["bound_optimised_growth"]
    return [
        ClaimCheck("H25", "fig_B_3", "the A = Id bound becomes increasingly loose as c → 1",
                   f"A = Id bound at c = 1 ≥ {growth:g} × its minimum over c",
                   f"{id_growth:.3g} × (c = 1: {curves['bound_identity_mean'].iloc[-1]:.3g}, "
                   f"minimum {curves['bound_identity_mean'].min():.3g})", bool(id_growth >= growth)),
        ClaimCheck("H25", "fig_B_3", "the A = Id bound fails to reflect the shape of the test error",
                   f"Spearman ρ(A = Id bound, test error) {over} < {limits.identity_max_spearman:g}",
                   f"ρ = {id_rho:.3f}", bool(id_rho < limits.identity_max_spearman)),
        ClaimCheck("H25", "fig_B_3", "the optimised-A bound (Prop B.2.5) tracks the test error",
                   f"Spearman ρ(optimised bound, test error) {over} ≥ {limits.optimised_min_spearman:g}",
                   f"ρ = {opt_rho:.3f}", bool(opt_rho >= limits.optimised_min_spearman)),
        ClaimCheck("H25", "fig_B_3", "the optimised-A bound does not become loose as c → 1",
                   f"optimised bound at c = 1 < {growth:g} × its minimum over c",
                   f"{opt_growth:.3g} × (c = 1: {curves['bound_optimised_mean'].iloc[-1]:.3g}, "
                   f"minimum {curves['bound_optimised_mean'].min():.3g})", bool(opt_growth < growth)),
    ]


# --- Fig B.1: output change along the Jacobian's top singular directions ---

@dataclass(frozen=True)
class PerturbationThresholds:
    ratio: float  # H26: mean change along the top directions / mean along random ones, at least ("≫ 1")
    share_above: float  # H26: share of top directions that move f more than every random one, at least



def perturbation_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H26 (Fig B.1): perturbations along the top singular directions of the Jacobian change f a lot, along
    random directions almost nothing. Every seed must pass; the measured value is the worst seed's."""
    limits = PerturbationThresholds(**job.params["thresholds"])
    summary = perturbation_summary(read_perturbation_runs(job.inputs["runs"]))
    ratio, share = summary["ratio"].min(), summary["share_above_random"].min()
    per_seed = "; ".join(f"seed {int(row.seed)}: top mean {row.mean_top:.3g}, random mean {row.mean_random:.3g}, "
                         f"top min {row.min_top:.3g}, random max {row.max_random:.3g}" for row in summary.itertuples())
    statement = ("perturbing w along the top singular directions of the Jacobian changes f a lot; along random "
                 "directions almost nothing")
    return [
        ClaimCheck("H26", "fig_B_1", statement,
                   f"mean ‖Δf‖ along the top directions / mean along random ones ≥ {limits.ratio:g} for every seed "
                   f"(measured: the smallest ratio over seeds; {per_seed})", float(ratio), bool(ratio >= limits.ratio)),
        ClaimCheck("H26", "fig_B_1", "large only for top singular directions: every top direction moves f more "
                   "than any random one",
                   f"share of top directions whose ‖Δf‖ exceeds the largest random one ≥ {limits.share_above:.0%} "
                   "for every seed (measured: the smallest share over seeds)", float(share),
                   bool(share >= limits.share_above)),
    ]


# --- Fig 6.6: complexity measures against the generalisation gap ---

@dataclass(frozen=True)
class ComplexityThresholds:
    """H23: our measure (6.4.11) follows the generalisation gap. The thesis's strength (paper.yaml):
    Spearman ρ high (≥ 0.8) on every sweep, and the highest of the measures on the corruption sweep;
    base.yaml's, for the stand-in sweeps: the sign of ρ on every sweep (``note`` says why). Read from
    ``george_thesis.claim_thresholds.complexity``."""

    rho_above: float  # ρ(ours, gap) on every sweep must exceed this …
    rho_inclusive: bool  # … or equal it
    corruption_highest: bool  # and be the highest ρ of all measures on the corruption sweep
    note: str  # why this scale's threshold differs from the thesis's; empty where it is the thesis's
COMPLEXITY_DOCUMENT_THRESHOLD = "ρ(ours, gap) ≥ 0.8 on every sweep, the highest of all measures on the corruption sweep"
COMPLEXITY_STATEMENT = ("The proposed complexity measure and Neyshabur et al.'s are the only ones to follow the shape "
                        "of the generalisation gap as width, label corruption and channels vary")


def _rhos(row: pd.Series) -> str:
    return ", ".join(f"{measure} {row[measure]:.2f}" for measure in COMPLEXITY_MEASURES)


def _exceeds(value: float, bound: float, inclusive: bool) -> bool:
    return value >= bound if inclusive else value > bound


def complexity_claims(job: ClaimsJob) -> list[ClaimCheck]:
    """H23 on the runs of Fig 6.6: Spearman ρ of every measure with the gap in each panel (seed
    means per swept value)."""
    spec, limits = job.params["spec"], ComplexityThresholds(**job.params["thresholds"])
    rhos = gap_correlations(panel_curves(read_complexity_finals(job.inputs, spec)))
    checks = [complexity_check(panel, rhos.loc[panel], spec["panels"][panel]["vary"] == "corruption", limits)
              for panel in rhos.index]
    return checks + [complexity_contrast_check(panel, rhos.loc[panel], limits) for panel in rhos.index]


def complexity_check(panel: str, row: pd.Series, corruption: bool, limits: ComplexityThresholds) -> ClaimCheck:
    ours = row["learning_flow"]
    highest = corruption and limits.corruption_highest
    check = f"{panel} sweep: ρ(ours, gap) {'≥' if limits.rho_inclusive else '>'} {limits.rho_above:g}"
    check += " and the highest ρ of all measures" if highest else ""
    passed = None if np.isnan(ours) else _exceeds(ours, limits.rho_above, limits.rho_inclusive)
    if passed and highest:
        passed = bool(ours >= row.drop("learning_flow").max(skipna=True))
    return ClaimCheck("H23", "fig_6_6", COMPLEXITY_STATEMENT, check,
                      f"Spearman ρ with the gap ({panel}): {_rhos(row)}", None if passed is None else bool(passed),
                      note="not evaluated: ρ is undefined (a constant gap or measure)" if passed is None else limits.note,
                      document_threshold=COMPLEXITY_DOCUMENT_THRESHOLD if limits.note else "")


# Ours and Neyshabur et al.'s are the measures the thesis says follow the gap; "the only ones" is the contrast.
FOLLOWING_MEASURES = ("learning_flow", "neyshabur")


def complexity_contrast_check(panel: str, row: pd.Series, limits: ComplexityThresholds) -> ClaimCheck:
    """H23's contrast ("the only ones"): every other measure follows the gap less than ours, its
    Spearman ρ with the gap strictly below ours (a tie, as every monotone measure on a short sweep,
    is no contrast); measures undefined on the panel (NaN) are left out."""
    ours = row["learning_flow"]
    others = row.drop(list(FOLLOWING_MEASURES)).dropna()
    followers = others[others >= ours]
    passed = None if np.isnan(ours) or others.empty else bool(followers.empty)
    note = ("not evaluated: ρ is undefined (a constant gap or measure)" if passed is None else limits.note)
    return ClaimCheck("H23", "fig_6_6", COMPLEXITY_STATEMENT + " (the contrast: the other measures do not)",
                      f"{panel} sweep: every other measure's ρ with the gap < ours ({ours:.2f})",
                      f"Spearman ρ with the gap ({panel}): {_rhos(row)}; as high as ours: "
                      + (", ".join(followers.index) or "none"), passed, note=note,
                      document_threshold="the other measures fail to reflect the shape of the gap (Fig 6.6)"
                      if limits.note else "")
