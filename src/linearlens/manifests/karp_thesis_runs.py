"""Karp thesis: its run families (``linearlens.families``), each declared once. rules/families.smk
generates their rules; the manifest (``karp_thesis``) reads their files."""

from .. import paths
from ..analysis.karp_thesis.ch2 import (
    block_pairs,
    blocks,
    configurations,
    groups_of,
    interpolated,
    kept_groups,
    kept_sizes,
    run_name,
    size_groups,
    sweep_groups,
    sweep_settings,
    sweep_sizes_trained,
    training_settings,
)
from ..analysis.karp_thesis.ch3 import IMAGE_MODELS, image_jobs, job_training, sparsity_settings
from ..families import CHAPTER, RunFamily

DOCUMENT = "karp_thesis"


# --- Chapter 2 and appendix A -------------------------------------------------------------------

def pair_grid(kept: bool):
    """One job per block of pairs of a (configuration, trial, group of sizes), ``kept``: of the groups
    that keep their members' states at the main snapshot (mode connectivity), or of the others. The
    run's configuration, trial and sizes are params, so the job's code stays the training code."""
    def grid(chapter_config: dict) -> dict[str, dict]:
        return {f"{run_name(name, trial, group)}/block{block}": {
                    "settings": training_settings(chapter_config, name),
                    "pairs": block_pairs(settings, block),
                    "keep_sizes": kept_sizes(settings),
                    "run": [name, trial, group]}
                for name, settings in configurations(chapter_config).items()
                for trial in settings["trials"] for group in size_groups(settings)
                if (group in kept_groups(settings)) == kept
                for block in range(blocks(settings))}
    return grid


def sweep_grid(chapter_config: dict) -> dict[str, dict]:
    """Fig A.1's A(S) alone, one job per group of the sizes the pair runs do not have."""
    sweep = sweep_settings(chapter_config)
    configuration, trial = sweep["configuration"], sweep["trial"]
    return {run_name(configuration, trial, group): {
                "settings": training_settings(chapter_config, configuration),
                "samples": sweep["samples"],
                "run": [configuration, trial, group]}
            for group in sweep_groups(chapter_config)}


def interpolation_grid(chapter_config: dict) -> dict[str, dict]:
    """Linear mode connectivity of one configuration and trial's kept pairs."""
    return {f"{name}/trial{trial}": {"settings": training_settings(chapter_config, name),
                                     "interpolation": chapter_config["interpolation"]}
            for name, trial in interpolated(chapter_config)}


def training_data(chapter_config: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    return {"data": paths.prepared(spec["settings"]["dataset"])}


def pair_family_of(settings: dict, group: tuple[int, ...]) -> RunFamily:
    return TRAIN_KEPT_PAIRS if group in kept_groups(settings) else TRAIN_PAIRS


def pair_rows_paths(chapter_config: dict, configuration: str, trials=None, sizes=None) -> list[str]:
    """The row files of the configuration's pair runs: those of ``trials`` and of the groups holding
    ``sizes`` (all by default)."""
    settings = configurations(chapter_config)[configuration]
    return [pair_family_of(settings, group).output("rows", f"{run_name(configuration, trial, group)}/block{block}")
            for trial in (trials or settings["trials"]) for group in groups_of(settings, sizes)
            for block in range(blocks(settings))]


def pair_states_paths(chapter_config: dict, configuration: str, trial: int) -> list[str]:
    """The kept states of a configuration and trial: every block of every group with a kept size."""
    settings = configurations(chapter_config)[configuration]
    return TRAIN_KEPT_PAIRS.outputs_of("states", [f"{run_name(configuration, trial, group)}/block{block}"
                                                  for group in kept_groups(settings) for block in range(blocks(settings))])


def sweep_inputs(chapter_config: dict) -> dict[str, list[str]]:
    """Fig A.1's rows: the sweep's own runs, and the pair runs of its configuration and trial at its other sizes."""
    sweep = sweep_settings(chapter_config)
    configuration, trial = sweep["configuration"], sweep["trial"]
    paired = [m for m in sweep["sizes"] if m not in sweep_sizes_trained(chapter_config)]
    return {"sweep": TRAIN_SWEEP.outputs_of("rows", sweep_grid(chapter_config)),
            "pairs": pair_rows_paths(chapter_config, configuration, [trial], paired) if paired else []}


def interpolation_path(configuration: str, trial: int) -> str:
    """The curves of every kept size of a configuration and trial (one job)."""
    return INTERPOLATE.output("curves", f"{configuration}/trial{trial}")


def kept_states(chapter_config: dict, wildcards: dict, spec: dict) -> dict:
    """The states the pair runs of this configuration and trial kept, and its data."""
    states = pair_states_paths(chapter_config, wildcards["configuration"], int(wildcards["trial"]))
    return {"states": states, **training_data(chapter_config, wildcards, spec)}


def spec_params(chapter_config: dict, spec: dict) -> dict:
    """The run's spec, one param per key."""
    return spec


def pair_family(kept: bool) -> RunFamily:
    """Pairs (S, S′) of one trial at each size of a group, trained in lockstep to the last snapshot."""
    return RunFamily(
        DOCUMENT, "ch2", "kept_pairs" if kept else "pairs", pair_grid(kept), "{run}/block{block}",
        {"rows": ".csv", **({"states": "_states.pt"} if kept else {})}, verb="train",
        script="karp_thesis_ch2_train_pairs.py", group=CHAPTER, folder="pairs", inputs=training_data,
        params=spec_params, device=True, budget="long_training", resumable=True)


# Figs 2.1-2.3, A.2-A.13, Table 2.1: the pair runs; Figs 2.4, A.14, A.15 read the kept pairs' states.
TRAIN_PAIRS = pair_family(kept=False)
TRAIN_KEPT_PAIRS = pair_family(kept=True)
# Fig A.1: A(S) alone at the sweep's sizes the pair runs do not have.
TRAIN_SWEEP = RunFamily(
    DOCUMENT, "ch2", "sweep", sweep_grid, "{run}", {"rows": ".csv"}, verb="train", group=CHAPTER,
    configured=lambda chapter_config: bool(sweep_settings(chapter_config)), inputs=training_data,
    params=spec_params, device=True, budget="long_training", resumable=True)
# Figs 2.4, A.14, A.15: linear mode connectivity of the kept pairs.
INTERPOLATE = RunFamily(
    DOCUMENT, "ch2", "", interpolation_grid, "{configuration}/trial{trial}", {"curves": ".csv"},
    verb="interpolate", group=CHAPTER, folder="interpolation",
    configured=lambda chapter_config: bool(chapter_config.get("interpolation") and interpolated(chapter_config)),
    inputs=kept_states, params=spec_params, device=True, budget="kernels")



# --- Chapter 3 and appendix B -------------------------------------------------------------------

def toy_grid(toy: dict) -> dict[str, dict]:
    """Fig 3.3's one run of the LSA toy model, named by its seed."""
    return {f"seed{toy['seed']}": toy}


def image_grid(chapter_config: dict) -> dict[str, dict]:
    """One job per model and data job: the model trained on each of the job's variants."""
    return {f"{model}/{job}": {"training": job_training(chapter_config, model, job)}
            for model in IMAGE_MODELS for job in image_jobs(chapter_config["images"])}


def sparsity_grid(chapter_config: dict) -> dict[str, dict]:
    return {"sparsity": {"settings": sparsity_settings(chapter_config)}}


def image_data_path(job: str) -> str:
    """A data job's noisy-image variants, made once and read by both models' runs."""
    return paths.chapter_data(DOCUMENT, "ch3", f"{job}.npz")


EXAMPLES_PATH = paths.chapter_data(DOCUMENT, "ch3", "examples.npz")  # Fig 3.5's example images


def image_data(chapter_config: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    return {"data": image_data_path(wildcards["job"])}


def sparsity_data(chapter_config: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    return {"data": paths.prepared(chapter_config["sparsity"]["dataset"])}


def image_run_paths(chapter_config: dict) -> list[str]:
    """Every noisy-image run's rows, by model and then by data job."""
    return RUN_IMAGES.outputs_of("rows", image_grid(chapter_config))


# Fig 3.3: the LSA model trained by SGD on fresh synthetic samples, drawn inside the run from its
# seed; a few seconds at quick scale, about a minute at the thesis's 10,000 steps (one CPU core).
RUN_TOY = RunFamily(
    DOCUMENT, "ch3", "toy", toy_grid, "seed{seed}", {"rows": ".csv"}, configured=bool, builds_models=False,
    threads="")
# Figs 3.4, 3.5, Tables 3.1, B.1: the network (WRN) or its linearisation at θ₀ trained on each
# variant of one data job; the job keeps each variant's state in the chapter's state folder.
RUN_IMAGES = RunFamily(
    DOCUMENT, "ch3", "images", image_grid, "{model}/{job}", {"rows": ".csv"}, group=CHAPTER,
    configured=lambda chapter_config: bool(chapter_config.get("images")), inputs=image_data,
    params=spec_params, device=True, budget="long_training", resumable=True, state_folder="", own_folder=False)
# Fig 3.2: the active fraction of the network's ReLU layers over training.
RUN_SPARSITY = RunFamily(
    DOCUMENT, "ch3", "sparsity", sparsity_grid, "sparsity", {"rows": ".csv"}, group=CHAPTER,
    configured=lambda chapter_config: bool(chapter_config.get("sparsity")), inputs=sparsity_data,
    params=spec_params, device=True, budget="long_training", resumable=True, own_folder=False)

FAMILIES = [TRAIN_PAIRS, TRAIN_KEPT_PAIRS, TRAIN_SWEEP, INTERPOLATE, RUN_TOY, RUN_IMAGES, RUN_SPARSITY]
