# Karp thesis, chapter 2 and appendix A: the chapter's target. Its run rules are generated from its
# run families (src/linearlens/manifests/karp_thesis_runs.py, rules/families.smk), its drawings,
# plots and claims from the manifest (rules/manifests.smk).


rule karp_thesis_ch2:
    # The chapter's target: every figure and table of chapter 2 and appendix A this config builds,
    # and the thesis's claims file (which checks them).
    input:
        [entry.path("karp_thesis") for entry in built_entries("karp_thesis")
         if entry.id.split("_")[1] in ("2", "A")],
        [CLAIMS["karp_thesis"]] if CLAIMS["karp_thesis"] else [],
