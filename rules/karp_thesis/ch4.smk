# Karp thesis, chapter 4: the chapter's target. Its run rule is generated from its run family
# (src/linearlens/manifests/karp_thesis_runs.py, rules/families.smk), its plots and claims from the
# manifest (rules/manifests.smk).


rule karp_thesis_ch4:
    # The chapter's target: every figure of chapter 4 this config builds (Fig 4.1), and the thesis's
    # claims file (which checks them).
    input:
        [entry.path("karp_thesis") for entry in built_entries("karp_thesis") if entry.id.split("_")[1] == "4"],
        [CLAIMS["karp_thesis"]] if CLAIMS["karp_thesis"] else [],
