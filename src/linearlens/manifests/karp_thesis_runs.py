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
from ..analysis.karp_thesis.ch5 import (
    growing_run_setting,
    growth_parts,
    part_operators,
    pretraining_setting,
    stacking_run_setting,
)
from ..families import CHAPTER, CHAPTER_RUNS, CHAPTER_STATE, RUN_STATE, RunFamily, one_run, per_seed, spec_as, spec_keys

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


def pair_family(kept: bool) -> RunFamily:
    """Pairs (S, S′) of one trial at each size of a group, trained in lockstep to the last snapshot."""
    return RunFamily(
        DOCUMENT, "ch2", "pairs", pair_grid(kept), "{run}/block{block}",
        {"rows": ".csv", **({"states": "_states.pt"} if kept else {})},
        rule_name="karp_thesis_ch2_train_kept_pairs" if kept else "karp_thesis_ch2_train_pairs",
        script="karp_thesis_ch2_train_pairs.py", group=CHAPTER, inputs=training_data, params=spec_keys,
        device=True, budget="long_training", state=RUN_STATE)


# Figs 2.1-2.3, A.2-A.13, Table 2.1: the pair runs; Figs 2.4, A.14, A.15 read the kept pairs' states.
TRAIN_PAIRS = pair_family(kept=False)
TRAIN_KEPT_PAIRS = pair_family(kept=True)
# Fig A.1: A(S) alone at the sweep's sizes the pair runs do not have.
TRAIN_SWEEP = RunFamily(
    DOCUMENT, "ch2", "sweep", sweep_grid, "{run}", {"rows": ".csv"}, rule_name="karp_thesis_ch2_train_sweep",
    group=CHAPTER, configured=lambda chapter_config: bool(sweep_settings(chapter_config)), inputs=training_data,
    params=spec_keys, device=True, budget="long_training", state=RUN_STATE)
# Figs 2.4, A.14, A.15: linear mode connectivity of the kept pairs.
INTERPOLATE = RunFamily(
    DOCUMENT, "ch2", "interpolation", interpolation_grid, "{configuration}/trial{trial}", {"curves": ".csv"},
    rule_name="karp_thesis_ch2_interpolate", group=CHAPTER,
    configured=lambda chapter_config: bool(chapter_config.get("interpolation") and interpolated(chapter_config)),
    inputs=kept_states, params=spec_keys, device=True, budget="kernels")



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
    DOCUMENT, "ch3", "toy", toy_grid, "seed{seed}", {"rows": ".csv"}, configured=bool, threads="")
# Figs 3.4, 3.5, Tables 3.1, B.1: the network (WRN) or its linearisation at θ₀ trained on each
# variant of one data job; the job keeps each variant's state in the chapter's state folder.
RUN_IMAGES = RunFamily(
    DOCUMENT, "ch3", "images", image_grid, "{model}/{job}", {"rows": ".csv"}, group=CHAPTER,
    configured=lambda chapter_config: bool(chapter_config.get("images")), inputs=image_data,
    params=spec_keys, device=True, budget="long_training", state=CHAPTER_STATE, folder=CHAPTER_RUNS)
# Fig 3.2: the active fraction of the network's ReLU layers over training.
RUN_SPARSITY = RunFamily(
    DOCUMENT, "ch3", "sparsity", sparsity_grid, "sparsity", {"rows": ".csv"}, group=CHAPTER,
    configured=lambda chapter_config: bool(chapter_config.get("sparsity")), inputs=sparsity_data,
    params=spec_keys, device=True, budget="long_training", state=RUN_STATE, folder=CHAPTER_RUNS)


# --- Chapter 4 ----------------------------------------------------------------------------------

# Fig 4.1: one gradient step on V under uniform attention (W = 0), the gradient averaged over the
# sampled sequences in closed form: V₀, V₁, the task and its settings. A (L + 1) × N by N × (L + 1)
# product: well under a second on one core.
RUN_ONE_STEP = RunFamily(
    DOCUMENT, "ch4", "one_step", one_run("one_step"), "one_step", {"run": ".npz"}, group=CHAPTER, threads="",
    folder=CHAPTER_RUNS)


# --- Chapter 5 and appendix C -------------------------------------------------------------------
# Each growing setting's spec is the setting as configured; the jobs' params hold only what each
# computes from (linearlens.analysis.karp_thesis.ch5), so a result reruns when that changes. The
# scripts name their own state files (finished operators, stages), in a state folder per job. Their
# code inputs are their scripts' closures, which build the transformer (a setting names no zoo model).

def pretraining_grid(growing: dict) -> dict[str, dict]:
    """One pretraining run per seed of each setting that has no given checkpoint."""
    return {f"{name}/seed{seed}": setting for name, setting in growing.items() if not setting["checkpoint"]
            for seed in setting["seeds"]}


def growth_run_grid(growing: dict) -> dict[str, dict]:
    """One growth run per setting and seed."""
    return {f"{name}/seed{seed}": setting for name, setting in growing.items() for seed in setting["seeds"]}


def growth_job_grid(growing: dict) -> dict[str, dict]:
    """A growth run's jobs: one per operator, or one for all (the setting's ``one_job_per``)."""
    return {f"{run}/{part}": {"setting": setting, "part": part}
            for run, setting in growth_run_grid(growing).items() for part in growth_parts(setting)}


def setting_corpus(growing: dict, wildcards: dict, setting: dict) -> dict[str, str]:
    return {"corpus": paths.prepared(setting["dataset"])}


def pretraining_params(growing: dict, wildcards: dict, setting: dict) -> dict:
    return {"setting": pretraining_setting(setting), "micro_batch_size": setting.get("micro_batch_size")}


def checkpoint_path(name: str, setting: dict, seed: int | str) -> str:
    """The model the setting grows: the configured checkpoint, or the one pretrained here."""
    return setting["checkpoint"] or PRETRAIN.output("checkpoint", f"{name}/seed{seed}")


def growth_job_inputs(growing: dict, wildcards: dict, job: dict) -> dict[str, str]:
    return {**setting_corpus(growing, wildcards, job["setting"]),
            "checkpoint": checkpoint_path(wildcards["setting"], job["setting"], wildcards["seed"])}


def growth_job_params(growing: dict, wildcards: dict, job: dict) -> dict:
    setting = job["setting"]
    return {"setting": growing_run_setting(setting), "operators": part_operators(setting, job["part"]),
            "micro_batch_size": setting.get("micro_batch_size")}


def growth_parts_and_provenance(growing: dict, wildcards: dict, setting: dict) -> dict:
    run = GATHER.id_of(wildcards)
    return {"parts": GROW.outputs_of("run", [f"{run}/{part}" for part in growth_parts(setting)]),
            "provenance": paths.provenance(setting["dataset"])}


stacking_grid = per_seed(lambda stacking: stacking)


def stacking_inputs(stacking: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    return {"corpus": paths.prepared(stacking["dataset"]), "provenance": paths.provenance(stacking["dataset"])}


def stacking_params(stacking: dict, wildcards: dict, spec: dict) -> dict:
    return {"spec": stacking_run_setting(stacking), "micro_batch_size": stacking.get("micro_batch_size")}


def growth_run_paths(chapter_config: dict, name: str) -> list[str]:
    """The growth runs of a setting, one per seed."""
    return GATHER.outputs_of("run", [f"{name}/seed{seed}" for seed in chapter_config["growing"][name]["seeds"]])


def stacking_run_paths(chapter_config: dict) -> list[str]:
    stacking = chapter_config.get("stacking")
    return STACK.outputs_of("run", stacking_grid(stacking)) if stacking else []


# Figs 5.2-5.4, Tables 5.1, 5.2: the L-layer model a setting grows, with its optimiser state.
PRETRAIN = RunFamily(
    DOCUMENT, "ch5", "pretrained", pretraining_grid, "{setting}/seed{seed}", {"checkpoint": ".pt"},
    rule_name="karp_thesis_ch5_pretrain", group="growing", configured=lambda growing: bool(pretraining_grid(growing)),
    inputs=setting_corpus, params=pretraining_params, device=True, budget="long_training", state="pretrain/{setting}")
# One job's operators: each grown from the checkpoint and trained on the same batches.
GROW = RunFamily(
    DOCUMENT, "ch5", "growth", growth_job_grid, "{setting}/seed{seed}/{part}", {"run": ".npz"},
    rule_name="karp_thesis_ch5_grow", group="growing", configured=bool, inputs=growth_job_inputs,
    params=growth_job_params, device=True, budget="long_training", state="growth/{setting}")
# A setting's jobs joined into its growth run, with the setting and the data source.
GATHER = RunFamily(
    DOCUMENT, "ch5", "growth", growth_run_grid, "{setting}/seed{seed}", {"run": ".npz"},
    rule_name="karp_thesis_ch5_gather", group="growing", configured=bool, inputs=growth_parts_and_provenance,
    params=spec_as("setting"), threads="")
# Table C.2: one model stacked in stages, by last stacking and by LAG@probe_steps at each stage.
STACK = RunFamily(
    DOCUMENT, "ch5", "stacking", stacking_grid, "seed{seed}", {"run": ".npz"}, rule_name="karp_thesis_ch5_stack",
    configured=bool, inputs=stacking_inputs, params=stacking_params, device=True, budget="long_training",
    state="stacking")

FAMILIES = [TRAIN_PAIRS, TRAIN_KEPT_PAIRS, TRAIN_SWEEP, INTERPOLATE, RUN_TOY, RUN_IMAGES, RUN_SPARSITY,
            RUN_ONE_STEP, PRETRAIN, GROW, GATHER, STACK]
