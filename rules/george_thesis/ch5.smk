# George thesis, chapter 5 and appendix C: the preparation its runs start from. Its run rules are
# generated from its run families (src/linearlens/manifests/george_thesis_runs.py,
# rules/families.smk), its drawings, plots, claims and target from the manifest (rules/manifests.smk).

from linearlens.manifests.george_thesis_runs import difficulty_init

GEORGE_CH5_DIFFICULTY = (config.get("george_thesis", {}).get("ch5") or {}).get("difficulty")


# --- Figs 5.2, C.1-C.6: θ₀ of an architecture and seed, read by every α of that seed ---

if GEORGE_CH5_DIFFICULTY:

    rule george_thesis_ch5_init_difficulty:
        # the generic init script
        input:
            code=get_difficulty_init_code,
        output:
            difficulty_init("{architecture}", "{seed}"),
        params:
            spec=get_difficulty_init_spec,
        log:
            paths.log_of(difficulty_init("{architecture}", "{seed}")),
        wildcard_constraints:
            architecture=alternatives(GEORGE_CH5_DIFFICULTY["architectures"]),
            seed=r"\d+",
        threads: 1
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/init_model.py"
