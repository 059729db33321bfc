"""The telescoping-lens paper's claims (spec §3) as checks with explicit thresholds."""

from __future__ import annotations

import pandas as pd

from . import ClaimCheck

# Figs 2/7: f̃ must be at least this many times closer to the network than f^lin at the end.
APPROXIMATION_ADVANTAGE = 10.0
# Fig 8: f̃'s test accuracy may differ from the network's by at most this, at every logged step.
ACCURACY_TOLERANCE = 0.01


def _final(runs: pd.DataFrame) -> pd.DataFrame:
    """Each run's last record, averaged over seeds: one row per (setting, lr)."""
    last = runs.loc[runs.groupby(["setting", "lr", "seed"])["step"].idxmax()]
    return last.groupby(["setting", "lr"], as_index=False).mean(numeric_only=True)


def approximation_checks(runs: pd.DataFrame, settings: dict) -> list[ClaimCheck]:
    runs = runs.reset_index(drop=True)
    final = _final(runs)
    checks = []
    for name, setting in settings.items():
        label = setting.get("label", name)
        at_setting = final[final["setting"] == name].sort_values("lr")
        smallest = at_setting.iloc[0]
        ratio = smallest["error_linearised"] / smallest["error_telescoping"]
        checks.append(ClaimCheck(
            "A1", "fig_7", f"{label}: the telescoping model is far more accurate than the "
            "linearisation around θ₀ (orders of magnitude for small γ)",
            f"final mean |f − f^lin| / mean |f − f̃| ≥ {APPROXIMATION_ADVANTAGE:g} at γ={smallest['lr']:g} "
            "(mean over seeds)", round(float(ratio), 2), bool(ratio >= APPROXIMATION_ADVANTAGE)))
        if len(at_setting) > 1:
            errors = at_setting["error_telescoping"].to_numpy()
            grows = bool((errors[1:] > errors[:-1]).all())
            checks.append(ClaimCheck(
                "A2", "fig_2" if name in ("sgd", "adamw") else "fig_7",
                f"{label}: the approximation error grows with the learning rate γ",
                "final mean |f − f̃| increases strictly along γ = "
                + ", ".join(f"{lr:g}" for lr in at_setting["lr"]),
                ", ".join(f"{e:.3g}" for e in errors), grows))
        trajectory = runs[(runs["setting"] == name) & (runs["lr"] == smallest["lr"])]
        by_step = trajectory.groupby("step").mean(numeric_only=True)
        telescoping_gap = float((by_step["accuracy_telescoping"] - by_step["accuracy_network"]).abs().max())
        linear_gap = float((by_step["accuracy_linearised"] - by_step["accuracy_network"]).abs().max())
        checks.append(ClaimCheck(
            "A3", "fig_8", f"{label}: the telescoping model's test accuracy is indistinguishable from "
            "the network's throughout training",
            f"max over logged steps of |acc(f̃) − acc(f)| ≤ {ACCURACY_TOLERANCE:g} at γ={smallest['lr']:g} "
            "(seed mean)", round(telescoping_gap, 4), telescoping_gap <= ACCURACY_TOLERANCE))
        checks.append(ClaimCheck(
            "A4", "fig_8", f"{label}: the linearised model's accuracy deviates from the network's "
            "more than the telescoping model's does",
            "max over logged steps of |acc(f^lin) − acc(f)| exceeds that of f̃ by more than "
            f"{ACCURACY_TOLERANCE:g}", round(linear_gap, 4), linear_gap > telescoping_gap + ACCURACY_TOLERANCE))
    return checks
