# George thesis, chapter 3: the chapter's target. Its run rules (the showcase's training run, and
# the Fisher quality and NTK pair of each checkpoint) are generated from its run families
# (src/linearlens/manifests/george_thesis_runs.py, rules/families.smk), its figure, drawing and claim
# rules from the manifest (rules/manifests.smk).


rule george_thesis_ch3:
    # The chapter's target: every figure of chapter 3 this config builds, and the thesis's claims
    # file (which checks them).
    input:
        [entry.path("george_thesis") for entry in built_entries("george_thesis") if entry.id.split("_")[1] == "3"],
        [CLAIMS["george_thesis"]] if CLAIMS["george_thesis"] else [],
