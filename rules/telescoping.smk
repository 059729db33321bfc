# Telescoping lens (Jeffares, Curth & van der Schaar 2024): one rule per kind of run, one file per
# run. Its figures and claims are generated from its manifest (src/linearlens/manifests/telescoping.py,
# rules/manifests.smk); its run families (manifests/telescoping_runs.py) are
# generated in rules/families.smk. Experiments present in the config are built; the others are skipped.


rule telescoping_tabular_run:
    input:
        unpack(lambda w: tabular_searches(w.panel)),
        data=lambda w: paths.prepared(TABULAR_PANELS[w.panel]["dataset"]),
        code=script_code("telescoping_tabular_run.py", TABULAR),
    output:
        records="results/telescoping/runs/tabular/{panel}/seed{seed}.csv",
        provenance="results/telescoping/runs/tabular/{panel}/seed{seed}.json",
        **{f"ensemble_{library}": f"results/telescoping/runs/tabular/{{panel}}/seed{{seed}}_{library}.joblib"
           for library in TABULAR.get("boosting", {})},
    params:
        experiment=canonical(TABULAR),
        searched=lambda w: canonical(list(tabular_searches(w.panel))),
        device=config["device"],
    log:
        "results/logs/telescoping/tabular/{panel}/seed{seed}.log",
    benchmark:
        "results/benchmarks/rules/telescoping/tabular/{panel}/seed{seed}.tsv"
    wildcard_constraints:
        panel=alternatives(TABULAR_PANELS),
        seed=r"\d+",
    threads: threads_for("train")
    resources:
        **job_resources("training", device=True),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/telescoping_tabular_run.py"

