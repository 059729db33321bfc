# Karp thesis, chapter 5 and appendix C: what is not a run family, and the chapter's target. Its run
# rules (pretrain, grow, gather, stack) are generated from its run families
# (src/linearlens/manifests/karp_thesis_runs.py, rules/families.smk), its drawings, plots and claims
# from the manifest (rules/manifests.smk). Rule names: karp_thesis_ch5_<verb>.

from linearlens.manifests.karp_thesis import CH5_CLAIMS, ch5_growth_claim_runs

KARP_CH5 = config.get("karp_thesis", {}).get("ch5") or {}
KARP_CH5_GROWING = KARP_CH5.get("growing") or {}

# --- Figs 5.2-5.4, Tables 5.1, 5.2 of settings grown from a given checkpoint: one not there ---

# the settings grown from each given checkpoint
KARP_CH5_GIVEN = {setting["checkpoint"]: [name for name, other in KARP_CH5_GROWING.items()
                                          if other["checkpoint"] == setting["checkpoint"]]
                  for setting in KARP_CH5_GROWING.values() if setting["checkpoint"]}

if KARP_CH5_GIVEN:

    rule karp_thesis_ch5_missing_checkpoint:
        # runs only when a configured checkpoint is not there: says what is missing (writes nothing)
        output:
            "{checkpoint}",
        params:
            settings=lambda w: KARP_CH5_GIVEN[w.checkpoint],
        log:
            paths.log("karp_thesis", "ch5", "missing_checkpoint", "{checkpoint}"),
        wildcard_constraints:
            checkpoint=alternatives(KARP_CH5_GIVEN),
        threads: 1
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/karp_thesis_ch5_missing_checkpoint.py"

# --- Table C.1: 1-shot QA of the UL2 picks, not reproducible offline ---

# Table C.1's 1-shot scores: no harness or evaluation set exists here, so no run makes them (the job
# names what is missing); the rehearsal of the paper path leaves them out too.
KARP_CH5_DOWNSTREAM_SCORES = paths.runs("karp_thesis", "ch5", "downstream", "scores.csv")

if KARP_CH5.get("downstream"):

    rule karp_thesis_ch5_evaluate_downstream:
        # names the evaluation sets and the harness Table C.1 needs (writes nothing)
        output:
            KARP_CH5_DOWNSTREAM_SCORES,
        params:
            spec=canonical(KARP_CH5["downstream"]),
        log:
            paths.log("karp_thesis", "ch5", "downstream"),
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
KARP_CH5_UNRELEASED_CLAIMS = paths.unreleased_claims("karp_thesis")

if KARP_CH5_GIVEN_RUNS:
    given_runs = {path for files in KARP_CH5_GIVEN_RUNS.values() for path in files}
    UNRELEASED["karp_thesis"].append(KARP_CH5_UNRELEASED_CLAIMS)
    # with fixture_data the generated checkpoints stand in for the thesis's: their figures and tables
    # are built (and reported) like every other
    if not config.get("fixture_data"):
        UNRELEASED["karp_thesis"] += [
            entry.path("karp_thesis") for entry in built_entries("karp_thesis")
            if entry.inputs and any(given_runs & set(files) for files in entry.inputs(config["karp_thesis"]).values())
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
            paths.log("karp_thesis", "claims_unreleased"),
        localrule: True
        threads: 1
        conda:
            f"../../envs/{CH5_CLAIMS.environment}.yaml"
        script:
            "../../src/scripts/check_claims.py"

if KARP_CH5.get("downstream"):
    UNRELEASED["karp_thesis"].append(KARP_CH5_DOWNSTREAM_SCORES)
