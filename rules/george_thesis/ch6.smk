# George thesis, chapter 6 and appendix B: the chapter's target. Its run rules are generated from
# its run families (src/linearlens/manifests/george_thesis_runs.py, rules/families.smk), its figure
# and claim rules from the manifest (rules/manifests.smk).


rule george_thesis_ch6:
    # The chapter's target: every figure of chapter 6 and appendix B this config builds, and the
    # thesis's claims file (which checks them).
    input:
        [entry.path("george_thesis") for entry in built_entries("george_thesis")
         if entry.id.split("_")[1] in ("6", "B")],
        [CLAIMS["george_thesis"]] if CLAIMS["george_thesis"] else [],
