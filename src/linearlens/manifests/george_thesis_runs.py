"""George thesis: its run families (``linearlens.families``), each declared once. rules/families.smk
generates their rules; the manifest (``george_thesis``) asks them for the files its figures read."""

from .. import paths
from ..analysis.george_thesis.ch3 import fisher_quality_spec, ntk_pair_spec, training_spec
from ..analysis.george_thesis.ch4 import frequency_runs, search_job_settings, search_jobs, selected_run_settings
from ..analysis.george_thesis.ch5 import (
    alpha_name,
    cap_run,
    check_spurious_spec,
    closed_form_spec,
    difficulty_runs,
    run_settings,
    spurious_alphas,
    spurious_run_settings,
    toy_run_spec,
    twolayer_spec,
)
from ..analysis.george_thesis.ch6 import complexity_run_specs
from ..experiments.settings import family_runs
from ..families import (
    CHAPTER,
    CHAPTER_RUNS,
    RUN_NAME,
    RUN_STATE,
    RunFamily,
    one_run,
    per_seed,
    spec_as,
    spec_data,
    spec_keys,
)

DOCUMENT = "george_thesis"


# --- Chapter 3 ----------------------------------------------------------------------------------

# Figs 3.3-3.7's showcase: one training run, its network saved at each chosen epoch (0: the
# initialisation); it keeps its state in the chapter's state folder, as showcase.pt.
TRAIN_SHOWCASE = RunFamily(
    DOCUMENT, "ch3", "showcase", one_run("showcase"),
    "showcase", {"record": "/training.csv", "checkpoints": "/checkpoints/epoch{epoch}.pt"},
    rule_name="george_thesis_ch3_train", folder=CHAPTER_RUNS,
    expands=lambda group_config: {"epoch": group_config["checkpoints"]}, inputs=spec_data,
    params=spec_as("spec", training_spec), device=True, budget="long_training", state=RUN_STATE)


def per_checkpoint(kind: str):
    """A grid of one run per checkpoint of the showcase, named ``<kind>/epoch<epoch>``."""
    return lambda group_config: {f"{kind}/epoch{epoch}": group_config for epoch in group_config["checkpoints"]}


def checkpoint_and_data(group_config: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    """The showcase's network at the run's epoch, and its prepared dataset."""
    return {"checkpoint": TRAIN_SHOWCASE.output("checkpoints", epoch=wildcards["epoch"]),
            **spec_data(group_config, wildcards, spec)}


# Figs 3.3-3.6 at one checkpoint: every Fisher approximation against the Monte-Carlo FIM.
FISHER_QUALITY = RunFamily(
    DOCUMENT, "ch3", "fisher_quality", per_checkpoint("fisher_quality"),
    "fisher_quality/epoch{epoch}", {"quality": ".json"}, group="showcase", folder="showcase",
    rule_name="george_thesis_ch3_fisher_quality", inputs=checkpoint_and_data,
    params=spec_as("spec", fisher_quality_spec), device=True, budget="long_training")
# Fig 3.7 at one checkpoint: the NTK Gram of f[c2] − f[c1] on test examples of c1 and c2.
NTK_PAIR = RunFamily(
    DOCUMENT, "ch3", "ntk_pair", per_checkpoint("ntk_pair"),
    "ntk_pair/epoch{epoch}", {"pair": ".npz"}, group="showcase", folder="showcase",
    rule_name="george_thesis_ch3_ntk_pair", inputs=checkpoint_and_data,
    params=spec_as("spec", ntk_pair_spec), device=True, budget="long_training")


# --- Chapter 4 ----------------------------------------------------------------------------------

# Fig 4.2: the MLP classifier, KFAC's and EKFAC's errors against the exact empirical Fisher
# tracked along its SGD trajectory.
RUN_MLP_CLASSIFIER = RunFamily(
    DOCUMENT, "ch4", "mlp_classifier", one_run("mlp_classifier"),
    "mlp_classifier", {"errors": "/errors.csv", "correlations": "/correlations.npz"}, folder=CHAPTER_RUNS,
    inputs=spec_data, device=True, budget="training", records_script=False, log_name="mlp_classifier/run")

# Figs 4.3-4.6, A.1-A.5: the groups trained with KFAC, EKFAC, EKFAC-ra and first-order baselines,
# each in its own folder of the chapter's runs. A run's spec names the optimiser whose search its
# job reads or makes; its other keys are the job's params.
TRAINING_GROUPS = ("autoencoder", "vgg", "resnet")


def training_groups(chapter_config: dict) -> dict[str, dict]:
    """The chapter's training groups this configuration runs, by name."""
    return {group: chapter_config[group] for group in TRAINING_GROUPS if group in chapter_config}


def search_grid(chapter_config: dict) -> dict[str, dict]:
    """Each group's search jobs (the analysis lays them out): the runs of one optimiser each."""
    return {f"{group}/search/{job}": {"optimiser": runs[0]["optimiser"], **search_job_settings(spec, runs)}
            for group, spec in training_groups(chapter_config).items() for job, runs in search_jobs(spec).items()}


def frequency_grid(chapter_config: dict) -> dict[str, dict]:
    """Fig 4.4a-b: an optimiser at another recompute frequency, at the (η, ε) its search selected."""
    return {f"{group}/frequency/{optimiser}_f{freq}": {"optimiser": optimiser,
                                                       "settings": selected_run_settings(spec, optimiser)}
            for group, spec in training_groups(chapter_config).items() for optimiser, freq in frequency_runs(spec)}


def spectrum_grid(chapter_config: dict) -> dict[str, dict]:
    """Fig 4.4c: one layer's empirical-Fisher spectrum against KFAC's and EKFAC's along the selected
    run of the tracked optimiser, the KFE fixed at the start."""
    return {f"{group}/spectrum": {"optimiser": spec["spectrum"]["optimiser"],
                                  "settings": selected_run_settings(spec, spec["spectrum"]["optimiser"], tracked=True)}
            for group, spec in training_groups(chapter_config).items() if spec.get("spectrum")}


def group_files(family: RunFamily, group: str, spec: dict, optimiser: str | None = None) -> list[str]:
    """The family's files of one training group (of ``optimiser``'s runs, if named), in grid order."""
    return family.outputs_of("runs", [run_id for run_id, run in family.grid({group: spec}).items()
                                      if optimiser is None or run["optimiser"] == optimiser])


def training_params(chapter_config: dict, wildcards: dict, spec: dict) -> dict:
    """A job's params: its spec but the optimiser it names (which picks the search files it reads)."""
    return {key: value for key, value in spec.items() if key != "optimiser"}


def training_data(chapter_config: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    return {"data": paths.prepared(chapter_config[wildcards["group"]]["dataset"])}


def selected_run_inputs(chapter_config: dict, wildcards: dict, spec: dict) -> dict[str, str | list[str]]:
    """The group's dataset, and its search's files of the optimiser whose selected run the job retrains."""
    group = wildcards["group"]
    return {**training_data(chapter_config, wildcards, spec),
            "search": group_files(RUN_SEARCH, group, chapter_config[group], spec["optimiser"])}


def training_family(name: str, grid, run_id: str, inputs=training_data) -> RunFamily:
    """A family of the training groups' runs, one CSV of per-epoch rows a job, run on the device;
    its rule keeps the params it was written with by hand (no recorded script)."""
    return RunFamily(
        DOCUMENT, "ch4", name, grid, run_id, {"runs": ".csv"}, group=CHAPTER, folder=CHAPTER_RUNS,
        configured=lambda chapter_config: bool(grid(chapter_config)),
        inputs=inputs, params=training_params, device=True, budget="training", records_script=False)


RUN_SEARCH = training_family("search", search_grid, "{group}/search/{job}")
RUN_FREQUENCY = training_family("frequency", frequency_grid, "{group}/frequency/{optimiser}_f{freq}",
                                selected_run_inputs)
RUN_SPECTRUM = training_family("spectrum", spectrum_grid, "{group}/spectrum", selected_run_inputs)


# --- Chapter 5 and appendix C ------------------------------------------------------------------

# Fig 5.1: the yin-yang toy; one job per block of seeds (``shards``), every seed at every α in one
# batch, the training sets drawn inside the run from each seed.
RUN_TOY = RunFamily(
    DOCUMENT, "ch5", "toy",
    lambda group_config: {f"shard{shard}": toy_run_spec(group_config) for shard in range(group_config["shards"])},
    "shard{shard}", {"run": ".npz"}, device=True, budget="kernels", records_script=False)
# Fig 5.4: the quadratic model in closed form.
RUN_ANALYTIC = RunFamily(
    DOCUMENT, "ch5", "analytic", lambda group_config: {"closed_forms": closed_form_spec(group_config)},
    "closed_forms", {"run": ".npz"}, threads="", records_script=False)
# Fig C.9: a 2-layer linear MLP on each example's data; tiny matrices (at most 200 × 200), so one
# thread: a second only waits on the first.
RUN_TWOLAYER = RunFamily(
    DOCUMENT, "ch5", "twolayer",
    lambda group_config: {f"twolayer/{example}": twolayer_spec(group_config, example)
                          for example in group_config["examples"]},
    "twolayer/{example}", {"run": ".npz"}, group="analytic", folder="analytic",
    log_name="analytic/twolayer_{example}", threads="", records_script=False)


def difficulty_data(group_config: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    """The C-scores of the train and test examples (published, or the pipeline's proxy), and the dataset."""
    scores = group_config["cscores"]
    published = {"scores": paths.prepared(scores["dataset"])} if scores["source"] == "published" else {}
    return {**published, "data": paths.prepared(group_config["dataset"])}


# Figs 5.2, C.1-C.6: the C-scores of the examples, in deciles.
BIN_CSCORES = RunFamily(
    DOCUMENT, "ch5", "cscores",
    lambda group_config: {"cscores": {key: group_config[key] for key in ("cscores", "bins", "tracked", "tracking_seed")}},
    "cscores", {"scores": ".npz", "table": ".csv"}, rule_name="george_thesis_ch5_bin_cscores", group="difficulty",
    folder="difficulty", inputs=difficulty_data, params=spec_as("settings"), threads="", environment="data",
    records_script=False)


def difficulty_init(architecture: str, seed) -> str:
    """θ₀ of an architecture and seed: every α of that seed starts from it (a rule of the chapter makes it)."""
    return paths.runs(DOCUMENT, "ch5", "difficulty", "init", f"{architecture}_seed{seed}.pt")


def difficulty_grid(group_config: dict) -> dict[str, dict]:
    """Every α-scaled run, with what its job needs (``run_settings``)."""
    return {"{experiment}/{architecture}/{setting}/seed{seed}".format(**run): run_settings(group_config, run)
            for run in difficulty_runs(group_config)}


def difficulty_inputs(group_config: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    """A run's C-score deciles (C-score runs), the summary of the run whose iterations cap it (the lr
    sweep), its dataset and its θ₀."""
    cap = cap_run(group_config, spec)
    return {**({"cscores": BIN_CSCORES.output("scores")} if spec["experiment"] == "cscore" else {}),
            **({"cap": RUN_DIFFICULTY.output("summary", RUN_DIFFICULTY.id_of(cap))} if cap else {}),
            "data": paths.prepared(group_config["dataset"]), "init": difficulty_init(spec["architecture"], spec["seed"])}


# Figs 5.2, C.1-C.6: α-scaled runs on C-score groups and noisy labels, with linearity metrics.
RUN_DIFFICULTY = RunFamily(
    DOCUMENT, "ch5", "difficulty", difficulty_grid,
    "{experiment}/{architecture}/{setting}/seed{seed}", {"log_points": ".csv", "summary": ".json"},
    inputs=difficulty_inputs, params=spec_as("run"), device=True, budget="long_training", state=RUN_STATE,
    records_script=False)


def spurious_grid(group_config: dict) -> dict[str, dict]:
    """One job per family and seed, training every α."""
    check_spurious_spec(group_config)
    return {f"{family}/seed{seed}": spurious_run_settings(group_config, family)
            for family in group_config["families"] for seed in group_config["seeds"]}


def spurious_weights(group_config: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    """The prepared pretrained weights a family starts from, if any, and its dataset."""
    weights = {"weights": paths.prepared(spec["pretrained"])} if spec.get("pretrained") else {}
    return {**weights, "data": paths.prepared(spec["dataset"])}


# Figs 5.3, C.7, C.8: spurious correlations; one job per family and seed trains every α, each run
# keeping its state in the job's state folder.
RUN_SPURIOUS = RunFamily(
    DOCUMENT, "ch5", "spurious", spurious_grid,
    "{family}/seed{seed}", {"rows": "/alpha{alpha}.csv", "summaries": "/alpha{alpha}.json"},
    expands=lambda group_config: {"alpha": [alpha_name(alpha) for alpha in spurious_alphas(group_config)]},
    inputs=spurious_weights,
    params=lambda group_config, wildcards, spec: {
        "run": spec, "alphas": [float(alpha) for alpha in spurious_alphas(group_config)]},
    device=True, budget="long_training", state=RUN_NAME, log_name="spurious/{family}/seed{seed}", records_script=False)


def spurious_file(name: str, run: dict) -> str:
    """The file ``name`` (rows, summaries) of one α of a spurious job: ``run`` is {family, seed, alpha}."""
    return RUN_SPURIOUS.output(name, RUN_SPURIOUS.id_of(run), alpha=run["alpha"])


# --- Chapter 6 ----------------------------------------------------------------------------------

KERNEL_RUN_KEYS = ("probe_size", "gram_points", "centring")  # group keys every run of a group carries
NAMING_KEYS = ("label", "standin")  # how figures name a family: not part of a run


def kernel_runs(group_config: dict) -> dict[tuple[str, str], dict]:
    """{(family, setting): run spec} of a group of training runs with tangent-kernel probes."""
    shared = {key: group_config[key] for key in KERNEL_RUN_KEYS}
    return {(family, setting): {**shared, **{k: v for k, v in run.items() if k not in NAMING_KEYS}}
            for family, spec in group_config["families"].items()
            for setting, run in family_runs(spec).items()}


def family_seeds(group_config: dict, family: str) -> list[int]:
    return group_config["families"][family].get("seeds", group_config["seeds"])


def kernel_grid(keep_grams: bool):
    """The runs of a kernel group, one per family, setting and seed; ``keep_grams``: whether they
    save their raw Grams (the alignment runs, for Fig B.6's uncentred alignment)."""
    def grid(group_config: dict) -> dict[str, dict]:
        return {f"{family}/{setting}/seed{seed}": {**run, "keep_grams": keep_grams}
                for (family, setting), run in kernel_runs(group_config).items()
                for seed in family_seeds(group_config, family)}
    return grid


def family_data(group_config: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    return {"data": paths.prepared(group_config["families"][wildcards["family"]]["dataset"])}


def easy_difficult_data(group_config: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    """The family's prepared dataset, and the difficult examples' when they come from another."""
    family = group_config["families"][wildcards["family"]]
    difficult = {"difficult": paths.prepared(family["difficult_dataset"])} if "difficult_dataset" in family else {}
    return {**difficult, **family_data(group_config, wildcards, spec)}


def group_data(group_config: dict, wildcards: dict, spec: dict) -> dict[str, str]:
    return {"data": paths.prepared(group_config["dataset"])}


def complexity_grid(group_config: dict) -> dict[str, dict]:
    """Each run of Fig 6.6's panels once (panels share runs), per seed."""
    return {f"{run}/seed{seed}": spec for run, spec in complexity_run_specs(group_config).items()
            for seed in group_config["seeds"]}


# Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and label alignment over training.
RUN_ALIGNMENT = RunFamily(
    DOCUMENT, "ch6", "alignment", kernel_grid(keep_grams=True),
    "{family}/{setting}/seed{seed}", {"rows": ".csv", "layers": "_layers.csv", "grams": "_grams.npz"},
    inputs=family_data, params=spec_as("run"), device=True, budget="long_training", state=RUN_STATE)
# Each alignment run's Grams summarised: its spec, the centring it summarises them with.
SUMMARISE_ALIGNMENT = RunFamily(
    DOCUMENT, "ch6", "alignment",
    lambda group_config: {run_id: {"centring": group_config["centring"]} for run_id in RUN_ALIGNMENT.grid(group_config)},
    RUN_ALIGNMENT.run_id, {"summary": "_spectra.csv", "trace_ratios": "_trace_ratios.npz"},
    rule_name="george_thesis_ch6_summarise_alignment",
    inputs=lambda group_config, wildcards, spec: {"grams": RUN_ALIGNMENT.output("grams", RUN_ALIGNMENT.id_of(wildcards))},
    params=spec_keys, threads="")
# Figs 6.4, B.7: alignment on easy vs difficult examples.
RUN_EASY_DIFFICULT = RunFamily(
    DOCUMENT, "ch6", "easy_difficult", kernel_grid(keep_grams=False),
    "{family}/{setting}/seed{seed}", {"rows": ".csv", "layers": "_layers.csv"},
    inputs=easy_difficult_data, params=spec_as("run"), device=True, budget="long_training", state=RUN_STATE)
# Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task.
RUN_DISK = RunFamily(
    DOCUMENT, "ch6", "disk", per_seed(lambda group_config: group_config),
    "seed{seed}", {"run": ".npz"}, inputs=group_data, device=True, budget="kernels")
# Fig B.2: spectral bias of a random MLP's tangent kernel.
RUN_SPECTRAL_BIAS = RunFamily(
    DOCUMENT, "ch6", "spectral_bias", one_run("spectrum"),
    "spectrum", {"spectrum": ".npz"})
# Fig 6.5: SuperNat vs gradient descent on noisy linear regression.
RUN_SUPERNAT = RunFamily(
    DOCUMENT, "ch6", "supernat", one_run("curves"),
    "curves", {"curves": ".npz"}, threads="", environment="data")
# Fig B.3: which norm measures capacity (random RBF features).
RUN_RBF_CAPACITY = RunFamily(
    DOCUMENT, "ch6", "rbf_capacity", one_run("bounds"),
    "bounds", {"bounds": ".npz"}, threads="", environment="data")
# Fig B.1: output change along the Jacobian's top singular directions; one run per seed, so the list
# of seeds is not part of a run's settings.
RUN_PERTURBATION = RunFamily(
    DOCUMENT, "ch6", "perturbation",
    per_seed(lambda group_config: {k: v for k, v in group_config.items() if k != "seeds"}),
    "seed{seed}", {"run": ".npz"}, inputs=group_data, device=True, budget="kernels", state=RUN_STATE)
# Fig 6.6: complexity measures against the generalisation gap.
RUN_COMPLEXITY = RunFamily(
    DOCUMENT, "ch6", "complexity", complexity_grid,
    "{run}/seed{seed}", {"records": ".csv", "measures": ".json"}, inputs=spec_data, device=True,
    budget="long_training", state=RUN_STATE)

FAMILIES = [TRAIN_SHOWCASE, FISHER_QUALITY, NTK_PAIR, RUN_MLP_CLASSIFIER, RUN_SEARCH, RUN_FREQUENCY, RUN_SPECTRUM,
            RUN_TOY, RUN_ANALYTIC, RUN_TWOLAYER, BIN_CSCORES, RUN_DIFFICULTY, RUN_SPURIOUS,
            RUN_ALIGNMENT, SUMMARISE_ALIGNMENT, RUN_EASY_DIFFICULT, RUN_DISK, RUN_SPECTRAL_BIAS, RUN_SUPERNAT,
            RUN_RBF_CAPACITY, RUN_PERTURBATION, RUN_COMPLEXITY]
