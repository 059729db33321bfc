# Karp thesis, chapter 5 and appendix C: the run, plot and claim rules of its figures and
# tables (src/linearlens/manifests/karp_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: karp_thesis_ch5_<verb>.

from linearlens.analysis.karp_thesis.ch5 import (
    checkpoint_path as karp_ch5_checkpoint_path,
    growing_run_setting,
    growth_part_path,
    growth_parts,
    growth_run_path,
    growth_state_dir,
    part_operators,
    pretrained_path,
    pretraining_setting,
    pretraining_state_dir,
    stacking_run_path,
    stacking_run_setting,
    stacking_state_dir,
)
from linearlens.manifests.karp_thesis import CH5_CLAIMS, ch5_growth_claim_runs

KARP_CH5 = config.get("karp_thesis", {}).get("ch5") or {}
KARP_CH5_GROWING = KARP_CH5.get("growing") or {}

# --- Figs 5.2-5.4, Tables 5.1, 5.2: every operator of a setting grown from one pretrained model ---

if KARP_CH5_GROWING:
    KARP_CH5_PRETRAINED_HERE = [name for name, setting in KARP_CH5_GROWING.items() if not setting["checkpoint"]]
    KARP_CH5_GIVEN = {setting["checkpoint"]: [name for name, other in KARP_CH5_GROWING.items()
                                              if other["checkpoint"] == setting["checkpoint"]]
                      for setting in KARP_CH5_GROWING.values() if setting["checkpoint"]}

    rule karp_thesis_ch5_pretrain:
        # the L-layer model a setting grows, with its optimiser state (a setting without a checkpoint)
        input:
            corpus=lambda w: paths.prepared(KARP_CH5_GROWING[w.setting]["dataset"]),
            code=script_code("karp_thesis_ch5_pretrain.py"),
        output:
            pretrained_path("{setting}", "{seed}"),
        params:
            setting=lambda w: canonical(pretraining_setting(KARP_CH5_GROWING[w.setting])),
            micro_batch_size=lambda w: KARP_CH5_GROWING[w.setting].get("micro_batch_size"),
            device=config["device"],
            # the training state while the job runs (not an output: it survives a killed job)
            state=lambda w: pretraining_state_dir(w.setting),
        log:
            "results/logs/karp_thesis/ch5/pretrain/{setting}/seed{seed}.log",
        benchmark:
            "results/benchmarks/rules/karp_thesis/ch5/pretrain/{setting}/seed{seed}.tsv"
        wildcard_constraints:
            setting=alternatives(KARP_CH5_PRETRAINED_HERE),
            seed=r"\d+",
        threads: threads_for("train")
        resources:
            **job_resources("long_training", device=True),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/karp_thesis_ch5_pretrain.py"

    if KARP_CH5_GIVEN:

        rule karp_thesis_ch5_missing_checkpoint:
            # runs only when a configured checkpoint is not there: says what is missing (writes nothing)
            output:
                "{checkpoint}",
            params:
                settings=lambda w: KARP_CH5_GIVEN[w.checkpoint],
            log:
                "results/logs/karp_thesis/ch5/missing_checkpoint/{checkpoint}.log",
            wildcard_constraints:
                checkpoint=alternatives(KARP_CH5_GIVEN),
            threads: 1
            conda:
                "../../envs/torch.yaml"
            script:
                "../../src/scripts/karp_thesis_ch5_missing_checkpoint.py"

    rule karp_thesis_ch5_grow:
        # one job's operators: each grown from the checkpoint and trained on the same batches
        input:
            corpus=lambda w: paths.prepared(KARP_CH5_GROWING[w.setting]["dataset"]),
            checkpoint=lambda w: karp_ch5_checkpoint_path(w.setting, KARP_CH5_GROWING[w.setting], w.seed),
            code=script_code("karp_thesis_ch5_grow.py"),
        output:
            growth_part_path("{setting}", "{seed}", "{part}"),
        params:
            setting=lambda w: canonical(growing_run_setting(KARP_CH5_GROWING[w.setting])),
            operators=lambda w: part_operators(KARP_CH5_GROWING[w.setting], w.part),
            micro_batch_size=lambda w: KARP_CH5_GROWING[w.setting].get("micro_batch_size"),
            device=config["device"],
            # finished operators and the training state while the job runs (not outputs: they
            # survive a killed job)
            state=lambda w: growth_state_dir(w.setting),
        log:
            "results/logs/karp_thesis/ch5/grow/{setting}/seed{seed}/{part}.log",
        benchmark:
            "results/benchmarks/rules/karp_thesis/ch5/grow/{setting}/seed{seed}/{part}.tsv"
        wildcard_constraints:
            setting=alternatives(KARP_CH5_GROWING),
            seed=r"\d+",
            part=r"all|start\d+-b\d+-(random|duplicate)",
        threads: threads_for("train")
        resources:
            **job_resources("long_training", device=True),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/karp_thesis_ch5_grow.py"

    rule karp_thesis_ch5_gather:
        # a setting's jobs joined into its growth run, with the setting and the data source
        input:
            parts=lambda w: [growth_part_path(w.setting, w.seed, part) for part in growth_parts(KARP_CH5_GROWING[w.setting])],
            provenance=lambda w: f"results/data/{KARP_CH5_GROWING[w.setting]['dataset']}.json",
            code=script_code("karp_thesis_ch5_gather.py"),
        output:
            growth_run_path("{setting}", "{seed}"),
        params:
            setting=lambda w: canonical(KARP_CH5_GROWING[w.setting]),
        log:
            "results/logs/karp_thesis/ch5/gather/{setting}/seed{seed}.log",
        wildcard_constraints:
            setting=alternatives(KARP_CH5_GROWING),
            seed=r"\d+",
        threads: 1
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/karp_thesis_ch5_gather.py"

# --- Table C.2: last against adaptive stacking ---

if KARP_CH5.get("stacking"):
    KARP_CH5_STACKING = KARP_CH5["stacking"]

    rule karp_thesis_ch5_stack:
        # one model stacked in stages, by last stacking and by LAG@probe_steps at each stage
        input:
            corpus=paths.prepared(KARP_CH5_STACKING["dataset"]),
            provenance=f"results/data/{KARP_CH5_STACKING['dataset']}.json",
            code=script_code("karp_thesis_ch5_stack.py"),
        output:
            stacking_run_path("{seed}"),
        params:
            spec=canonical(stacking_run_setting(KARP_CH5_STACKING)),
            micro_batch_size=KARP_CH5_STACKING.get("micro_batch_size"),
            device=config["device"],
            # finished stages and probes and the training state (not outputs: they survive a killed job)
            state=stacking_state_dir(),
        log:
            "results/logs/karp_thesis/ch5/stack/seed{seed}.log",
        benchmark:
            "results/benchmarks/rules/karp_thesis/ch5/stack/seed{seed}.tsv"
        wildcard_constraints:
            seed=r"\d+",
        threads: threads_for("train")
        resources:
            **job_resources("long_training", device=True),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/karp_thesis_ch5_stack.py"

# --- Table C.1: 1-shot QA of the UL2 picks, not reproducible offline ---

# Table C.1's 1-shot scores: no harness or evaluation set exists here, so no run makes them (the job
# names what is missing); the rehearsal of the paper path leaves them out too.
KARP_CH5_DOWNSTREAM_SCORES = "results/karp_thesis/runs/ch5/downstream/scores.csv"

if KARP_CH5.get("downstream"):

    rule karp_thesis_ch5_evaluate_downstream:
        # names the evaluation sets and the harness Table C.1 needs (writes nothing)
        output:
            KARP_CH5_DOWNSTREAM_SCORES,
        params:
            spec=canonical(KARP_CH5["downstream"]),
        log:
            "results/logs/karp_thesis/ch5/downstream.log",
        threads: 1
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/karp_thesis_ch5_evaluate_downstream.py"

# --- what needs the thesis's unreleased inputs: only the opt-in target paper_karp_thesis_unreleased ---
# The figures and tables of settings grown from a given checkpoint, their claims, and Table C.1's
# evaluation. Without those files their jobs fail, naming what is missing; so "everything" and
# paper_karp_thesis leave them out and run to their end.

KARP_CH5_GIVEN_RUNS = ch5_growth_claim_runs(config.get("karp_thesis", {}), given_checkpoint=True)
KARP_CH5_UNRELEASED_CLAIMS = "results/karp_thesis/claims_unreleased.json"

if KARP_CH5_GIVEN_RUNS:
    given_runs = {path for paths in KARP_CH5_GIVEN_RUNS.values() for path in paths}
    UNRELEASED["karp_thesis"].append(KARP_CH5_UNRELEASED_CLAIMS)
    # with fixture_data the generated checkpoints stand in for the thesis's: their figures and tables
    # are built (and reported) like every other
    if not config.get("fixture_data"):
        UNRELEASED["karp_thesis"] += [
            entry.path("karp_thesis") for entry in built_entries("karp_thesis")
            if entry.inputs and any(given_runs & set(paths) for paths in entry.inputs(config["karp_thesis"]).values())
        ]
        # a corpus that only those settings read (UL2's mixture) is prepared by the opt-in target too
        KARP_CH5_RELEASED_DATASETS = {setting["dataset"] for setting in KARP_CH5_GROWING.values()
                                      if not setting["checkpoint"]}
        KARP_CH5_RELEASED_DATASETS |= {KARP_CH5["stacking"]["dataset"]} if KARP_CH5.get("stacking") else set()
        UNRELEASED["karp_thesis"] += [paths.prepared(setting["dataset"]) for setting in KARP_CH5_GROWING.values()
                                      if setting["dataset"] not in KARP_CH5_RELEASED_DATASETS]

    rule karp_thesis_ch5_unreleased_claims:
        # the document's growing claims on the runs of settings grown from given checkpoints
        input:
            **KARP_CH5_GIVEN_RUNS,
            code=function_code("check_claims.py", CH5_CLAIMS.function),
        output:
            KARP_CH5_UNRELEASED_CLAIMS,
        params:
            claim_sets=canonical([{"function": CH5_CLAIMS.function, "params": CH5_CLAIMS.params(config["karp_thesis"]),
                                   "inputs": {name: name for name in KARP_CH5_GIVEN_RUNS}}]),
            document="karp_thesis",
            scale=config["scale"],
        log:
            "results/logs/karp_thesis/claims_unreleased.log",
        localrule: True
        threads: 1
        conda:
            f"../../envs/{CH5_CLAIMS.environment}.yaml"
        script:
            "../../src/scripts/check_claims.py"

if KARP_CH5.get("downstream"):
    UNRELEASED["karp_thesis"].append(KARP_CH5_DOWNSTREAM_SCORES)
