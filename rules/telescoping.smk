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


rule telescoping_lmc_pretrain:
    input:
        data=lambda w: paths.prepared(LMC_BRANCHES["pretrained"]["pretrain_dataset"]),
        code=script_code("telescoping_lmc_pretrain.py", LMC),
    output:
        "results/telescoping/runs/lmc/pretrained/seed{seed}/pretrained.pt",
    params:
        run=lambda w: canonical(LMC_BRANCHES["pretrained"]),
        device=config["device"],
        state=lambda w: f"results/telescoping/state/lmc/pretrained/seed{w.seed}/pretrain.pt",
    log:
        "results/logs/telescoping/lmc/pretrained/seed{seed}/pretrain.log",
    benchmark:
        "results/benchmarks/rules/telescoping/lmc/pretrained/seed{seed}/pretrain.tsv"
    wildcard_constraints:
        seed=r"\d+",
    threads: threads_for("train")
    resources:
        **job_resources("training", device=True),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/telescoping_lmc_pretrain.py"


rule telescoping_lmc_parent:
    input:
        unpack(lambda w: {"initial": f"results/telescoping/runs/lmc/pretrained/seed{w.seed}/pretrained.pt"}
               if w.branch == "pretrained" else {}),
        data=lambda w: paths.prepared(LMC["dataset"]),
        code=script_code("telescoping_lmc_parent.py", LMC),
    output:
        states="results/telescoping/runs/lmc/{branch}/seed{seed}/parent.pt",
        gradient_change="results/telescoping/runs/lmc/{branch}/seed{seed}/gradient_change.csv",
    params:
        run=lambda w: canonical(LMC_BRANCHES[w.branch]),
        device=config["device"],
        state=lambda w: f"results/telescoping/state/lmc/{w.branch}/seed{w.seed}/parent.pt",
    log:
        "results/logs/telescoping/lmc/{branch}/seed{seed}/parent.log",
    benchmark:
        "results/benchmarks/rules/telescoping/lmc/{branch}/seed{seed}/parent.tsv"
    wildcard_constraints:
        branch=alternatives(LMC_BRANCHES),
        seed=r"\d+",
    threads: threads_for("train")
    resources:
        **job_resources("training", device=True),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/telescoping_lmc_parent.py"


rule telescoping_lmc_children:
    input:
        parent="results/telescoping/runs/lmc/{branch}/seed{seed}/parent.pt",
        data=lambda w: paths.prepared(LMC["dataset"]),
        code=script_code("telescoping_lmc_children.py", LMC),
    output:
        "results/telescoping/runs/lmc/{branch}/seed{seed}/spawn{step}/inner{inner}.csv",
    params:
        run=lambda w: canonical(LMC_BRANCHES[w.branch]),
        device=config["device"],
    log:
        "results/logs/telescoping/lmc/{branch}/seed{seed}/spawn{step}/inner{inner}.log",
    benchmark:
        "results/benchmarks/rules/telescoping/lmc/{branch}/seed{seed}/spawn{step}/inner{inner}.tsv"
    wildcard_constraints:
        branch=alternatives(LMC_BRANCHES),
        seed=r"\d+",
        step=r"\d+",
        inner=r"\d+",
    threads: threads_for("train")
    resources:
        **job_resources("training", device=True),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/telescoping_lmc_children.py"
