"""Families of runs as the configs write them: keys shared by every run, and named settings that
override them. Plain dicts, no torch: the workflow expands them when it builds the DAG."""

from __future__ import annotations


def family_runs(family: dict) -> dict[str, dict]:
    """{setting: full run spec} of a family of runs: the family's shared keys, each setting's keys
    on top (its ``model`` keys merged into the shared model). A family with ``widths`` instead of
    settings is a width sweep of a one-hidden-layer model."""
    shared = {k: v for k, v in family.items() if k not in ("settings", "seeds", "dataset", "main", "widths")}
    settings = family.get("settings") or {
        f"width{width}": {"label": f"{width} hidden units", "model": {"hidden": [width]}}
        for width in family["widths"]}  # a width sweep (double descent)
    runs = {}
    for name, setting in settings.items():
        run = {**shared, **{k: v for k, v in setting.items() if k != "model"}}
        run["model"] = {**shared["model"], **setting.get("model", {})}
        runs[name] = run
    return runs


def settings_grid(experiment: dict) -> dict[tuple[str, str], dict]:
    """{(setting, learning-rate label): full run spec} for every setting and learning rate of an
    experiment config (shared keys at the top, per-setting keys and a learning-rate list below)."""
    shared = {k: v for k, v in experiment.items() if k not in ("settings", "seeds", "dataset")}
    grid = {}
    for name, setting in experiment["settings"].items():
        for lr in setting["learning_rates"]:
            spec = {**shared, **{k: v for k, v in setting.items() if k != "learning_rates"}}
            spec["optimiser"] = {**setting["optimiser"], "lr": lr}
            grid[(name, f"{lr:g}")] = spec
    return grid


def branch_runs(experiment: dict) -> dict[str, dict]:
    """The random-initialisation branch and, when configured, the pretrained branch (its keys
    override the shared ones; ``pretrain`` and ``pretrain_dataset`` say how it starts)."""
    shared = {k: v for k, v in experiment.items() if k != "pretrained"}
    runs = {"random": shared}
    if "pretrained" in experiment:
        runs["pretrained"] = {**shared, **experiment["pretrained"]}
    return runs


def experiment_runs(experiment: dict) -> dict[str, dict]:
    """{setting: run spec} of one experiment of the config: its shared keys with each setting's
    on top; with ``train_sizes``, one run per (setting, training-set size), named
    ``<setting>_n<size>``."""
    runs = family_runs(experiment)
    for name, run in runs.items():
        missing = {"K", "optimiser", "steps", "eval_every"} - set(run)
        if missing:
            raise ValueError(f"setting {name!r} has no {sorted(missing)}, neither its own nor shared")
    sizes = experiment.get("train_sizes")
    if not sizes:
        return runs
    return {f"{name}_n{size}": {**{k: v for k, v in run.items() if k != "train_sizes"}, "train_size": size}
            for name, run in runs.items() for size in sizes}
