"""Run families: declared once, they keep every rule name and path that users' results trees and
cluster profiles rely on, and make exactly the runs their figures read."""

import importlib
from pathlib import Path

import pytest

from linearlens.config import load_scale
from linearlens.families import (
    CHAPTER,
    CHAPTER_RUNS,
    CHAPTER_STATE,
    RUN_NAME,
    RUN_STATE,
    RunFamily,
    declared_families,
    spec_as,
    spec_keys,
)
from linearlens.manifests import george_thesis as george_manifest
from linearlens.manifests import george_thesis_runs as george
from linearlens.manifests import iterative_linearisation_runs as il
from linearlens.manifests import karp_thesis_runs as karp
from linearlens.manifests import telescoping_runs as telescoping

ROOT = Path(__file__).resolve().parents[1]

def test_a_family_parses_its_run_ids_into_wildcards():
    family = RunFamily("doc", "ch1", "sweep", lambda group: {}, "{family}/{setting}/seed{seed}", {"rows": ".csv"})
    assert family.rule == "doc_ch1_run_sweep" and family.script_file == "doc_ch1_run_sweep.py"
    values = family.wildcard_values(["mlp/lr0.1/seed0", "mlp/lr0.01/seed1", "cnn/lr0.1/seed0"])
    assert values == {"family": {"mlp", "cnn"}, "setting": {"lr0.1", "lr0.01"}, "seed": {"0", "1"}}
    with pytest.raises(ValueError, match="does not have the form"):
        family.wildcard_values(["mlp/seed0"])
    assert family.output("rows", "mlp/lr0.1/seed0") == "results/doc/runs/ch1/sweep/mlp/lr0.1/seed0.csv"
    assert not family.resumable


def test_a_family_may_write_into_another_folder_and_read_its_whole_chapter():
    family = RunFamily("doc", "ch1", "kept", lambda group: {}, "seed{seed}", {"rows": ".csv"},
                       rule_name="doc_ch1_train_kept", group=CHAPTER, folder="pairs",
                       configured=lambda chapter: "pairs" in chapter, state=RUN_STATE)
    assert family.rule == "doc_ch1_train_kept" and family.script_file == "doc_ch1_train_kept.py"
    assert family.output("rows", "seed0") == "results/doc/runs/ch1/pairs/seed0.csv"
    assert family.state_path({"seed": "0"}) == "results/doc/state/ch1/pairs/seed0.pt"
    assert family.config_group({"ch1": {"pairs": 1}}) == {"pairs": 1}
    assert family.config_group({"ch1": {"sweep": 1}}) is None and family.config_group({}) is None
    in_the_chapter = RunFamily("doc", "ch1", "kept", lambda group: {}, "{set}/seed{seed}", {"rows": ".csv"},
                               folder=CHAPTER_RUNS, state=RUN_STATE)
    assert in_the_chapter.output("rows", "a/seed0") == "results/doc/runs/ch1/a/seed0.csv"
    assert in_the_chapter.state_path({"set": "a", "seed": "0"}) == "results/doc/state/ch1/a/seed0.pt"


def test_a_job_is_given_its_run_state_file_or_the_folder_its_script_keeps_its_states_in():
    def grow(state):
        return RunFamily("doc", "ch1", "grow", lambda group: {}, "{setting}/seed{seed}", {"run": ".npz"}, state=state)
    run = {"setting": "bert", "seed": "0"}
    assert grow(RUN_STATE).state_path(run) == "results/doc/state/ch1/grow/bert/seed0.pt"
    assert grow(RUN_NAME).state_path(run) == "results/doc/state/ch1/grow/bert/seed0"
    assert grow("growth/{setting}").state_path(run) == "results/doc/state/ch1/growth/bert"
    assert grow(CHAPTER_STATE).state_path(run) == "results/doc/state/ch1"
    assert grow("{setting}/seed{seed}/pretrain.pt").state_path(run) == "results/doc/state/ch1/bert/seed0/pretrain.pt"
    assert all(grow(state).resumable for state in (RUN_STATE, CHAPTER_STATE)) and not grow(None).resumable



def test_a_job_may_be_logged_under_its_own_name_rather_than_its_first_output():
    named = RunFamily("doc", "", "lmc", lambda group: {}, "seed{seed}", {"model": "/pretrained.pt"},
                      log_name="lmc/seed{seed}/pretrain")
    assert named.log() == "results/logs/doc/lmc/seed{seed}/pretrain.log"
    assert named.benchmark() == "results/benchmarks/rules/doc/lmc/seed{seed}/pretrain.tsv"
    unnamed = RunFamily("doc", "", "lmc", lambda group: {}, "seed{seed}", {"model": "/pretrained.pt"})
    assert unnamed.log() == "results/logs/doc/lmc/seed{seed}/pretrained.log"


def test_a_family_may_add_outputs_its_config_names():
    family = RunFamily("doc", "", "tabular", lambda group: {}, "{panel}/seed{seed}",
                       {"records": ".csv", "ensemble_{name}": "_{name}.joblib", "checkpoints": "/epoch{epoch}.pt"},
                       expands=lambda group: {"name": group["boosting"], "epoch": [0, 2]})
    run = "results/doc/runs/tabular/{panel}/seed{seed}"
    checkpoints = [f"{run}/epoch0.pt", f"{run}/epoch2.pt"]
    assert family.output_patterns({"boosting": ["xgboost", "lightgbm"]}) == {
        "records": f"{run}.csv", "ensemble_xgboost": f"{run}_xgboost.joblib",
        "ensemble_lightgbm": f"{run}_lightgbm.joblib", "checkpoints": checkpoints}
    assert family.output_patterns({"boosting": []}) == {"records": f"{run}.csv", "checkpoints": checkpoints}
    assert family.output("checkpoints", "a/seed0", epoch=2) == "results/doc/runs/tabular/a/seed0/epoch2.pt"
    assert family.output("ensemble_{name}", name="xgboost") == f"{run}_xgboost.joblib"
    for values in ({}, {"epoch": 2, "name": "xgboost"}, {"seed": 0}):
        with pytest.raises(ValueError, match="'checkpoints' takes the values"):
            family.output("checkpoints", **values)


def test_a_job_is_logged_after_its_first_output_that_names_no_expanded_value():
    def showcase(outputs, log_name=""):
        return RunFamily("doc", "ch1", "showcase", lambda group: {}, "seed{seed}", outputs,
                         expands=lambda group: {"epoch": group["checkpoints"]}, log_name=log_name)
    family = showcase({"checkpoints": "/epoch{epoch}.pt", "record": "/training.csv"})
    assert family.log() == "results/logs/doc/ch1/showcase/seed{seed}/training.log"
    assert family.benchmark() == "results/benchmarks/rules/doc/ch1/showcase/seed{seed}/training.tsv"
    with pytest.raises(ValueError, match="doc_ch1_run_showcase: every output names an expanded value"):
        showcase({"checkpoints": "/epoch{epoch}.pt"})
    assert showcase({"checkpoints": "/epoch{epoch}.pt"}, log_name="showcase/seed{seed}").log() == (
        "results/logs/doc/ch1/showcase/seed{seed}.log")


def test_every_run_of_a_family_must_take_the_same_params():
    family = RunFamily("doc", "", "sweep", lambda group: {}, "{setting}/seed{seed}", {"rows": ".csv"},
                       params=spec_keys)
    grid = {"a/seed0": {"lr": 1, "eps": 2}, "a/seed1": {"eps": 3, "lr": 1}}
    assert family.param_names({}, grid) == ["lr", "eps"] and family.param_names({}, {}) == []
    with pytest.raises(ValueError, match="doc_run_sweep: run 'b/seed0' has the params \\['lr'\\], run 'a/seed0'"):
        family.param_names({}, {**grid, "b/seed0": {"lr": 1}})


def test_a_job_may_take_params_from_its_wildcards():
    family = RunFamily("doc", "", "lmc", lambda group: {}, "{branch}/seed{seed}", {"rows": ".csv"},
                       params=lambda group, wildcards, spec: {"run": group[wildcards["branch"]]})
    assert family.params({"a": 1, "b": 2}, {"branch": "b", "seed": "0"}, {}) == {"run": 2}
    assert RunFamily("doc", "", "lmc", lambda group: {}, "seed{seed}", {"rows": ".csv"}).params(
        {}, {"seed": "0"}, {"lr": 1}) == {"spec": {"lr": 1}}
    assert family.wildcards_of("b/seed3") == {"branch": "b", "seed": "3"}
    assert spec_as("run")({}, {}, {"lr": 1}) == {"run": {"lr": 1}}
    assert spec_as("spec", sorted)({}, {}, {"lr": 1, "eps": 2}) == {"spec": ["eps", "lr"]}
    assert spec_keys({}, {}, {"lr": 1, "eps": 2}) == {"lr": 1, "eps": 2}


def test_the_converted_il_runs_keep_the_params_their_rule_recorded():
    """IL's runs carry the device inside their run spec and record no script, as their hand-written
    rule did: a change there would rerun every run already made."""
    assert il.RUN.device and il.RUN.device_in == "run" and not il.RUN.records_script
    assert set(il.RUN.params({}, {}, {"K": 1})) == {"run"}
    assert il.IDENTITY.log_name == "identity" and il.IDENTITY.log() == "results/logs/iterative_linearisation/identity.log"


# Chapter 6's rules and files as they were written by hand, before the families generated them.
GEORGE_CH6 = {
    "george_thesis_ch6_run_alignment": ["alignment/{family}/{setting}/seed{seed}.csv",
                                        "alignment/{family}/{setting}/seed{seed}_layers.csv",
                                        "alignment/{family}/{setting}/seed{seed}_grams.npz"],
    "george_thesis_ch6_summarise_alignment": ["alignment/{family}/{setting}/seed{seed}_spectra.csv",
                                              "alignment/{family}/{setting}/seed{seed}_trace_ratios.npz"],
    "george_thesis_ch6_run_easy_difficult": ["easy_difficult/{family}/{setting}/seed{seed}.csv",
                                             "easy_difficult/{family}/{setting}/seed{seed}_layers.csv"],
    "george_thesis_ch6_run_disk": ["disk/seed{seed}.npz"],
    "george_thesis_ch6_run_spectral_bias": ["spectral_bias/spectrum.npz"],
    "george_thesis_ch6_run_supernat": ["supernat/curves.npz"],
    "george_thesis_ch6_run_rbf_capacity": ["rbf_capacity/bounds.npz"],
    "george_thesis_ch6_run_perturbation": ["perturbation/seed{seed}.npz"],
    "george_thesis_ch6_run_complexity": ["complexity/{run}/seed{seed}.csv", "complexity/{run}/seed{seed}.json"],
}


def assert_grids_hold_the_runs_read(scale, document, families, runs_folder):
    """Each family's grid makes every file of ``runs_folder`` (or of each folder of a tuple) its
    figures and claim sets read, and no run that none reads."""
    manifest = importlib.import_module(f"linearlens.manifests.{document}")
    document_config = load_scale(scale)[document]
    read = {path for item in [*manifest.ENTRIES, *manifest.CLAIM_SETS]
            if item.inputs and item.configured(document_config)
            for files in item.inputs(document_config).values() for path in files
            if path.startswith(runs_folder)}
    made = set()
    for family in families:
        if (group := family.config_group(document_config)) is not None:
            outputs = {run_id: {family.output(name, run_id) for name in family.outputs}
                       for run_id in family.grid(group)}
            assert {run_id for run_id, files in outputs.items() if not files & read} == set(), family.rule
            made |= set().union(*outputs.values())
    assert read and read <= made


def george_families(chapter: str) -> list[RunFamily]:
    return [family for family in george.FAMILIES if family.chapter == chapter]


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper", "rehearsal"])
def test_george_ch6_grids_hold_the_runs_the_figures_read(scale):
    assert_grids_hold_the_runs_read(scale, "george_thesis", george_families("ch6"), "results/george_thesis/runs/ch6/")


# Chapter 3's rules and files as they were written by hand, before the families generated them.
GEORGE_CH3 = {
    "george_thesis_ch3_train": ["showcase/training.csv", "showcase/checkpoints/epoch{epoch}.pt"],
    "george_thesis_ch3_fisher_quality": ["showcase/fisher_quality/epoch{epoch}.json"],
    "george_thesis_ch3_ntk_pair": ["showcase/ntk_pair/epoch{epoch}.npz"],
}


def test_george_ch3_training_writes_one_checkpoint_per_configured_epoch():
    train = george.TRAIN_SHOWCASE
    outputs = train.output_patterns(train.config_group(load_scale("quick")["george_thesis"]))
    runs = "results/george_thesis/runs/ch3/showcase"
    assert outputs == {"record": f"{runs}/training.csv",
                       "checkpoints": [f"{runs}/checkpoints/epoch{epoch}.pt" for epoch in (0, 1, 3)]}


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper", "rehearsal"])
def test_george_ch3_grids_hold_the_runs_the_figures_read(scale):
    # the training run's checkpoints are read by these runs, not by a figure
    assert_grids_hold_the_runs_read(scale, "george_thesis", [george.FISHER_QUALITY, george.NTK_PAIR],
                                    "results/george_thesis/runs/ch3/")


# Chapter 4's rules and files as they were written by hand, before the families generated them.
GEORGE_CH4 = {
    "george_thesis_ch4_run_mlp_classifier": ["mlp_classifier/errors.csv", "mlp_classifier/correlations.npz"],
    "george_thesis_ch4_run_search": ["{group}/search/{job}.csv"],
    "george_thesis_ch4_run_frequency": ["{group}/frequency/{optimiser}_f{freq}.csv"],
    "george_thesis_ch4_run_spectrum": ["{group}/spectrum.csv"],
}


# Chapter 5's rules and files as they were written by hand, before the families generated them.
GEORGE_CH5 = {
    "george_thesis_ch5_run_toy": ["toy/shard{shard}.npz"],
    "george_thesis_ch5_run_analytic": ["analytic/closed_forms.npz"],
    "george_thesis_ch5_run_twolayer": ["analytic/twolayer/{example}.npz"],
    "george_thesis_ch5_bin_cscores": ["difficulty/cscores.npz", "difficulty/cscores.csv"],
    "george_thesis_ch5_run_difficulty": ["difficulty/{experiment}/{architecture}/{setting}/seed{seed}.csv",
                                         "difficulty/{experiment}/{architecture}/{setting}/seed{seed}.json"],
    "george_thesis_ch5_run_spurious": ["spurious/{family}/seed{seed}/alpha{alpha}.csv",
                                       "spurious/{family}/seed{seed}/alpha{alpha}.json"],
}


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper", "rehearsal"])
def test_george_ch4_grids_hold_the_runs_the_figures_read(scale):
    assert_grids_hold_the_runs_read(scale, "george_thesis", george_families("ch4"), "results/george_thesis/runs/ch4/")


def test_george_ch4_retrained_runs_read_every_search_job_of_their_optimiser():
    chapter = load_scale("quick")["george_thesis"]["ch4"]
    searches = george.RUN_SEARCH.grid(chapter)
    assert all(run["optimiser"] == job["optimiser"] for job in searches.values() for run in job["runs"])
    optimiser_of = {george.RUN_SEARCH.output("runs", run_id): job["optimiser"] for run_id, job in searches.items()}
    for family in (george.RUN_FREQUENCY, george.RUN_SPECTRUM):
        for run_id, spec in family.grid(chapter).items():
            wildcards = family.wildcards_of(run_id)
            read = family.inputs(chapter, wildcards, spec)["search"]
            assert read and read == [path for path, optimiser in optimiser_of.items()
                                     if f"/ch4/{wildcards['group']}/" in path and optimiser == spec["optimiser"]]


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper", "rehearsal"])
def test_george_ch5_grids_hold_the_runs_the_figures_read(scale):
    ch5 = [george.RUN_TOY, george.RUN_ANALYTIC, george.RUN_TWOLAYER, george.BIN_CSCORES, george.RUN_DIFFICULTY]
    assert_grids_hold_the_runs_read(scale, "george_thesis", ch5, tuple(
        f"results/george_thesis/runs/ch5/{folder}/" for folder in ("toy", "analytic", "difficulty")))


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper", "rehearsal"])
def test_george_ch5_spurious_jobs_write_every_alpha_the_figures_and_claims_read(scale):
    """One job per family and seed writes every α's rows and summary; the claims read them all."""
    spurious = george.RUN_SPURIOUS
    group = spurious.config_group(load_scale(scale)["george_thesis"])
    made = {pattern.format(**spurious.wildcards_of(run_id)) for run_id in spurious.grid(group)
            for patterns in spurious.output_patterns(group).values() for pattern in patterns}
    assert len(made) == 2 * len(group["alphas"]) * len(group["families"]) * len(group["seeds"])
    claims = george_manifest.SPURIOUS_CLAIMS.inputs(load_scale(scale)["george_thesis"])
    assert set(claims["runs"]) | set(claims["summaries"]) == made
    assert spurious.state_path({"family": "celeba", "seed": "0"}) == "results/george_thesis/state/ch5/spurious/celeba/seed0"
    assert spurious.log() == "results/logs/george_thesis/ch5/spurious/{family}/seed{seed}.log"


def test_george_ch5_twolayer_jobs_keep_their_logs_beside_the_closed_forms():
    assert george.RUN_TWOLAYER.log() == "results/logs/george_thesis/ch5/analytic/twolayer_{example}.log"
    assert george.RUN_TWOLAYER.benchmark() == "results/benchmarks/rules/george_thesis/ch5/analytic/twolayer_{example}.tsv"


def test_george_ch5_difficulty_runs_read_their_theta0_their_deciles_and_the_run_that_caps_them():
    difficulty = load_scale("quick")["george_thesis"]["ch5"]["difficulty"]
    grid = george.RUN_DIFFICULTY.grid(difficulty)
    capped_id, capped = next((run_id, spec) for run_id, spec in grid.items() if spec["capped"])
    inputs = george.RUN_DIFFICULTY.inputs(difficulty, george.RUN_DIFFICULTY.wildcards_of(capped_id), capped)
    assert inputs["cap"] in george.RUN_DIFFICULTY.outputs_of("summary", grid) and "cscores" not in inputs
    assert inputs["init"] == f"results/george_thesis/runs/ch5/difficulty/init/{capped['architecture']}_seed{capped['seed']}.pt"
    cscore_id, cscore = next((run_id, spec) for run_id, spec in grid.items() if spec["experiment"] == "cscore")
    inputs = george.RUN_DIFFICULTY.inputs(difficulty, george.RUN_DIFFICULTY.wildcards_of(cscore_id), cscore)
    assert inputs["cscores"] == "results/george_thesis/runs/ch5/difficulty/cscores.npz" and "cap" not in inputs


# Chapter 2's rules and files as they were written by hand, before the families generated them.
KARP_CH2 = {
    "karp_thesis_ch2_train_pairs": ["pairs/{run}/block{block}.csv"],
    "karp_thesis_ch2_train_kept_pairs": ["pairs/{run}/block{block}.csv", "pairs/{run}/block{block}_states.pt"],
    "karp_thesis_ch2_train_sweep": ["sweep/{run}.csv"],
    "karp_thesis_ch2_interpolate": ["interpolation/{configuration}/trial{trial}.csv"],
}


def karp_families(chapter: str) -> list[RunFamily]:
    return [family for family in karp.FAMILIES if family.chapter == chapter]


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper", "rehearsal"])
@pytest.mark.parametrize("chapter", ["ch2", "ch3", "ch4"])
def test_karp_grids_hold_the_runs_the_figures_and_claims_read(scale, chapter):
    assert_grids_hold_the_runs_read(scale, "karp_thesis", karp_families(chapter), f"results/karp_thesis/runs/{chapter}/")


# Chapter 3's rules and files as they were written by hand, before the families generated them.
KARP_CH3 = {
    "karp_thesis_ch3_run_toy": ["toy/seed{seed}.csv"],
    "karp_thesis_ch3_run_images": ["{model}/{job}.csv"],
    "karp_thesis_ch3_run_sparsity": ["sparsity.csv"],
}


def test_karp_ch3_data_jobs_keep_their_states_in_the_chapter_state_folder():
    families = {family.rule: family for family in karp_families("ch3")}
    # a data job's variants each keep their state, under the chapter's state folder
    assert families["karp_thesis_ch3_run_images"].state_path({"model": "network", "job": "cifar2_gaussian"}) == (
        "results/karp_thesis/state/ch3")
    assert families["karp_thesis_ch3_run_sparsity"].state_path({}) == "results/karp_thesis/state/ch3/sparsity.pt"


# Chapter 4's rule and file as it was written by hand.
KARP_CH4 = {"karp_thesis_ch4_run_one_step": ["one_step.npz"]}


# Chapter 5's rules and files as they were written by hand, before the families generated them.
KARP_CH5 = {
    "karp_thesis_ch5_pretrain": ["pretrained/{setting}/seed{seed}.pt"],
    "karp_thesis_ch5_grow": ["growth/{setting}/seed{seed}/{part}.npz"],
    "karp_thesis_ch5_gather": ["growth/{setting}/seed{seed}.npz"],
    "karp_thesis_ch5_stack": ["stacking/seed{seed}.npz"],
}


def test_karp_ch5_jobs_keep_their_states_in_the_folders_their_scripts_resume_from():
    families = {family.rule: family for family in karp_families("ch5")}
    run = {"setting": "bert", "seed": "0", "part": "all"}
    assert families["karp_thesis_ch5_pretrain"].state_path(run) == "results/karp_thesis/state/ch5/pretrain/bert"
    assert families["karp_thesis_ch5_grow"].state_path(run) == "results/karp_thesis/state/ch5/growth/bert"
    assert families["karp_thesis_ch5_stack"].state_path({"seed": "0"}) == "results/karp_thesis/state/ch5/stacking"
    assert not families["karp_thesis_ch5_gather"].resumable


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper", "rehearsal"])
def test_karp_ch5_grids_hold_the_runs_the_figures_read_and_the_jobs_they_gather(scale):
    assert_grids_hold_the_runs_read(scale, "karp_thesis", [karp.GATHER, karp.STACK], "results/karp_thesis/runs/ch5/")
    growing = load_scale(scale)["karp_thesis"]["ch5"]["growing"]
    runs = [({"setting": name, "seed": str(seed)}, setting) for name, setting in growing.items()
            for seed in setting["seeds"]]
    gathered = {part for wildcards, setting in runs
                for part in karp.growth_parts_and_provenance(growing, wildcards, setting)["parts"]}
    assert gathered == set(karp.GROW.outputs_of("run", karp.growth_job_grid(growing)))
    # the runs grown from a model pretrained here read its checkpoint, and nothing else is pretrained
    checkpoints = {karp.checkpoint_path(wildcards["setting"], setting, wildcards["seed"])
                   for wildcards, setting in runs}
    pretrained = set(karp.PRETRAIN.outputs_of("checkpoint", karp.pretraining_grid(growing)))
    assert pretrained == {path for path in checkpoints if path.startswith("results/karp_thesis/runs/ch5/")}
    # the paper path grows the thesis's checkpoints (its rehearsal, generated stand-ins)
    assert bool(pretrained) == (scale in ("smoke", "quick"))


# The telescoping rules and files converted so far, as they were written by hand.
TELESCOPING = {
    "telescoping_approximation_run": ["approximation/{setting}/lr{lr}/seed{seed}.csv"],
    "telescoping_smoother_run": ["{family}/{setting}/seed{seed}.csv"],
    "telescoping_tabular_search": ["tabular/{panel}/search_{model}.json"],
    "telescoping_tabular_run": ["tabular/{panel}/seed{seed}.csv", "tabular/{panel}/seed{seed}.json",
                                "tabular/{panel}/seed{seed}_{library}.joblib"],
    "telescoping_lmc_pretrain": ["lmc/pretrained/seed{seed}/pretrained.pt"],
    "telescoping_lmc_parent": ["lmc/{branch}/seed{seed}/parent.pt", "lmc/{branch}/seed{seed}/gradient_change.csv"],
    "telescoping_lmc_children": ["lmc/{branch}/seed{seed}/spawn{step}/inner{inner}.csv"],
}


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper", "rehearsal"])
def test_telescoping_grids_hold_the_runs_the_figures_read(scale):
    approximation = "results/telescoping/runs/approximation/"
    assert_grids_hold_the_runs_read(scale, "telescoping", [telescoping.RUN_APPROXIMATION], approximation)
    smoother = tuple(f"results/telescoping/runs/{family}/"
                     for family in telescoping.smoother_families(load_scale(scale)["telescoping"]))
    assert_grids_hold_the_runs_read(scale, "telescoping", [telescoping.RUN_SMOOTHER], smoother)
    lmc = [telescoping.RUN_LMC_PARENT, telescoping.RUN_LMC_CHILDREN]
    assert_grids_hold_the_runs_read(scale, "telescoping", lmc, "results/telescoping/runs/lmc/")


@pytest.mark.parametrize("scale", ["quick", "paper"])
def test_tabular_runs_write_an_ensemble_per_boosting_library_and_read_their_searches(scale):
    tabular = load_scale(scale)["telescoping"]["tabular"]
    patterns = telescoping.RUN_TABULAR.output_patterns(tabular)
    assert {name for name in patterns if name.startswith("ensemble_")} == {
        f"ensemble_{library}" for library in tabular.get("boosting", {})}
    assert all(patterns[f"ensemble_{library}"] == f"results/telescoping/runs/tabular/{{panel}}/seed{{seed}}_{library}.joblib"
               for library in tabular.get("boosting", {}))
    panel = next(iter(tabular["panels"]))
    inputs = telescoping.RUN_TABULAR.inputs(tabular, {"panel": panel, "seed": "0"}, tabular)
    assert set(inputs) == {"data", *tabular.get("search", {}).get("models", [])}
    assert telescoping.RUN_TABULAR.params(tabular, {}, tabular)["searched"] == list(tabular.get("search", {}).get("models", []))


def test_lmc_jobs_keep_their_state_files_and_train_their_branch():
    pretrain, parent = telescoping.RUN_LMC_PRETRAIN, telescoping.RUN_LMC_PARENT
    assert pretrain.state_path({"seed": "0"}) == "results/telescoping/state/lmc/pretrained/seed0/pretrain.pt"
    assert parent.state_path({"branch": "random", "seed": "1"}) == "results/telescoping/state/lmc/random/seed1/parent.pt"
    lmc = load_scale("quick")["telescoping"]["lmc"]
    pretrained = parent.params(lmc, {"branch": "pretrained", "seed": "0"}, lmc)["run"]
    assert pretrained["spawn_steps"] != lmc["spawn_steps"] and pretrained["spawn_steps"] == lmc["pretrained"]["spawn_steps"]
    inputs = parent.inputs(lmc, {"branch": "pretrained", "seed": "0"}, lmc)
    assert inputs["initial"] == "results/telescoping/runs/lmc/pretrained/seed0/pretrained.pt"
    assert "initial" not in parent.inputs(lmc, {"branch": "random", "seed": "0"}, lmc)


def test_the_paper_searches_each_tabular_panel_for_each_model_searched():
    tabular = load_scale("paper")["telescoping"]["tabular"]
    searches = {telescoping.RUN_TABULAR_SEARCH.output("search", run_id)
                for run_id in telescoping.search_grid(tabular)}
    assert searches == {f"results/telescoping/runs/tabular/{panel}/search_{model}.json"
                        for panel in tabular["panels"] for model in tabular["search"]["models"]}
    assert telescoping.RUN_TABULAR_SEARCH.config_group(load_scale("quick")["telescoping"]) is None


# The iterative-linearisation rules and files converted so far, as they were written by hand.
ITERATIVE_LINEARISATION = {
    "iterative_linearisation_damping": ["damping/lambda{damping}.csv", "damping/lambda{damping}.npz"],
    "iterative_linearisation_probe": ["probes/{experiment}/{setting}/seed{seed}.csv"],
    "iterative_linearisation_run": ["{experiment}/{setting}/seed{seed}.csv", "{experiment}/{setting}/seed{seed}.pt"],
    "iterative_linearisation_k1_identity": ["identity/k1_vs_ordinary.json"],
}


def test_the_probe_family_reads_the_checkpoints_of_its_run():
    probe = next(family for family in il.FAMILIES if family.rule == "iterative_linearisation_probe")
    inputs = probe.inputs({}, {"experiment": "augmented", "setting": "k1", "seed": "0"}, {"dataset": "cifar10"})
    assert inputs["checkpoints"] == "results/iterative_linearisation/runs/augmented/k1/seed0.pt"


# Each document's converted families, the rules and files they replace, and where a run's state lies.
KEPT = [
    pytest.param(george_families("ch3"), GEORGE_CH3, "results/george_thesis/runs/ch3/",
                 {"george_thesis_ch3_train": ("showcase", "results/george_thesis/state/ch3/showcase.pt")},
                 id="george_ch3"),
    pytest.param(george_families("ch4"), GEORGE_CH4, "results/george_thesis/runs/ch4/", {}, id="george_ch4"),
    pytest.param(george_families("ch5"), GEORGE_CH5, "results/george_thesis/runs/ch5/",
                 {"george_thesis_ch5_run_difficulty": ("noisy/resnet18/alpha1_lr0.1/seed0", "results/george_thesis/"
                                                       "state/ch5/difficulty/noisy/resnet18/alpha1_lr0.1/seed0.pt")},
                 id="george_ch5"),
    pytest.param(george_families("ch6"), GEORGE_CH6, "results/george_thesis/runs/ch6/",
                 {"george_thesis_ch6_run_perturbation": ("seed3", "results/george_thesis/state/ch6/perturbation/seed3.pt")},
                 id="george_ch6"),
    pytest.param(karp_families("ch2"), KARP_CH2, "results/karp_thesis/runs/ch2/",
                 {"karp_thesis_ch2_train_kept_pairs": ("1a/trial0/m100/block2",
                                                       "results/karp_thesis/state/ch2/pairs/1a/trial0/m100/block2.pt")},
                 id="karp_ch2"),
    pytest.param(karp_families("ch3"), KARP_CH3, "results/karp_thesis/runs/ch3/", {}, id="karp_ch3"),
    pytest.param(karp_families("ch4"), KARP_CH4, "results/karp_thesis/runs/ch4/", {}, id="karp_ch4"),
    pytest.param(karp_families("ch5"), KARP_CH5, "results/karp_thesis/runs/ch5/", {}, id="karp_ch5"),
    pytest.param(telescoping.FAMILIES, TELESCOPING, "results/telescoping/runs/",
                 {"telescoping_approximation_run": ("sgd/lr0.1/seed0",
                                                    "results/telescoping/state/approximation/sgd/lr0.1/seed0.pt"),
                  "telescoping_smoother_run": ("dd_mnist_clean/width4/seed0",
                                               "results/telescoping/state/dd_mnist_clean/width4/seed0.pt")},
                 id="telescoping"),
    pytest.param(il.FAMILIES, ITERATIVE_LINEARISATION, "results/iterative_linearisation/runs/",
                 {"iterative_linearisation_run": ("full_batch/k1/seed0",
                                                  "results/iterative_linearisation/state/full_batch/k1/seed0.pt")},
                 id="iterative_linearisation"),
]


@pytest.mark.parametrize("declared, by_hand, runs_folder, states", KEPT)
def test_families_keep_the_hand_written_rule_names_and_paths(declared, by_hand, runs_folder, states):
    """The families generate exactly the rules written by hand, with their output paths, an existing
    script, and their state where it was."""
    families = {family.rule: family for family in declared}
    assert set(families) == set(by_hand)
    for rule, outputs in by_hand.items():
        patterns = list(families[rule].output_patterns().values())
        assert patterns == [f"{runs_folder}{output}" for output in outputs], rule
        assert (ROOT / "src" / "scripts" / families[rule].script_file).is_file()
    for rule, (run_id, state) in states.items():
        assert families[rule].state_path(families[rule].wildcards_of(run_id)) == state


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper", "rehearsal"])
@pytest.mark.parametrize("folder", ["damping", "probes", "identity"])
def test_iterative_linearisation_grids_hold_the_runs_the_figures_read(scale, folder):
    family = next(family for family in il.FAMILIES if family.name == folder)
    if family.config_group(load_scale(scale)["iterative_linearisation"]) is None:
        pytest.skip(f"no {folder} at {scale} scale")
    assert_grids_hold_the_runs_read(scale, "iterative_linearisation", [family],
                                    f"results/iterative_linearisation/runs/{folder}/")


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper", "rehearsal"])
def test_iterative_linearisation_run_grid_holds_the_runs_the_figures_read(scale):
    experiments = tuple(f"results/iterative_linearisation/runs/{name}/"
                        for name in load_scale(scale)["iterative_linearisation"]["experiments"])
    assert_grids_hold_the_runs_read(scale, "iterative_linearisation", [il.RUN], experiments)


def test_every_family_is_declared_once():
    rules = [family.rule for family in declared_families()]
    assert len(rules) == len(set(rules))
