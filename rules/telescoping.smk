# Telescoping lens (Jeffares, Curth & van der Schaar 2024): one file per run, figures from runs,
# claims from runs. Experiments present in the config are built; the others are skipped.


rule plot_telescoping_schematic:
    input:
        code=lib_code("figures"),
    output:
        telescoping_figure("fig_1"),
    log:
        "results/logs/telescoping/plot_schematic.log",
    localrule: True
    threads: 1
    conda:
        "../envs/report.yaml"
    script:
        "../src/scripts/plot_telescoping_schematic.py"


rule telescoping_approximation_run:
    input:
        data=lambda w: prepared(APPROXIMATION["dataset"]),
        code=lib_code("experiments/telescoping", "linearize", "models", "train"),
    output:
        "results/telescoping/runs/approximation/{setting}/lr{lr}/seed{seed}.csv",
    params:
        run=lambda w: APPROXIMATION_RUNS[(w.setting, w.lr)],
        device=config["device"],
    log:
        "results/logs/telescoping/approximation/{setting}/lr{lr}/seed{seed}.log",
    benchmark:
        "results/benchmarks/rules/telescoping/approximation/{setting}/lr{lr}/seed{seed}.tsv"
    wildcard_constraints:
        setting=alternatives({setting for setting, _ in APPROXIMATION_RUNS}),
        lr=alternatives({lr for _, lr in APPROXIMATION_RUNS}),
        seed=r"\d+",
    threads: threads_for("train")
    resources:
        **gpu_resources(),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/telescoping_approximation_run.py"


rule plot_telescoping_approximation:
    input:
        runs=approximation_runs(),
        provenance=lambda w: f"results/data/{APPROXIMATION['dataset']}.json",
        code=lib_code("figures"),
    output:
        fig_2=telescoping_figure("fig_2"),
        fig_7=telescoping_figure("fig_7"),
        fig_8=telescoping_figure("fig_8"),
    params:
        settings=APPROXIMATION["settings"] if APPROXIMATION else {},
    log:
        "results/logs/telescoping/plot_approximation.log",
    localrule: True
    threads: 1
    conda:
        "../envs/report.yaml"
    script:
        "../src/scripts/plot_telescoping_approximation.py"


rule telescoping_smoother_run:
    input:
        data=lambda w: prepared(SMOOTHER_FAMILIES[w.family]["dataset"]),
        code=lib_code("experiments/telescoping", "linearize", "models", "train", "kernels"),
    output:
        "results/telescoping/runs/{family}/{setting}/seed{seed}.csv",
    params:
        run=lambda w: SMOOTHER_RUNS[w.family][w.setting],
        device=config["device"],
    log:
        "results/logs/telescoping/{family}/{setting}/seed{seed}.log",
    benchmark:
        "results/benchmarks/rules/telescoping/{family}/{setting}/seed{seed}.tsv"
    wildcard_constraints:
        family=alternatives(SMOOTHER_RUNS),
        setting=alternatives({s for runs in SMOOTHER_RUNS.values() for s in runs}),
        seed=r"\d+",
    threads: threads_for("train")
    resources:
        **gpu_resources(),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/telescoping_smoother_run.py"


rule plot_telescoping_grokking:
    input:
        runs=lambda w: smoother_runs(GROKKING_FIGURES[w.figure]),
        provenance=lambda w: [f"results/data/{GROKKING[f]['dataset']}.json" for f in GROKKING_FIGURES[w.figure]],
        code=lib_code("figures", "claims"),
    output:
        "results/telescoping/figures/{figure}.png",
    params:
        grokking=GROKKING,
    log:
        "results/logs/telescoping/plot_{figure}.log",
    wildcard_constraints:
        figure=alternatives(GROKKING_FIGURES),
    localrule: True
    threads: 1
    conda:
        "../envs/report.yaml"
    script:
        "../src/scripts/plot_telescoping_grokking.py"


rule plot_telescoping_double_descent:
    input:
        runs=lambda w: smoother_runs(DOUBLE_DESCENT_FIGURES[w.figure]),
        provenance=lambda w: [f"results/data/{SMOOTHER_FAMILIES[f]['dataset']}.json"
                              for f in DOUBLE_DESCENT_FIGURES[w.figure]],
        code=lib_code("figures"),
    output:
        "results/telescoping/figures/{figure}.png",
    log:
        "results/logs/telescoping/plot_{figure}.log",
    wildcard_constraints:
        figure=alternatives(DOUBLE_DESCENT_FIGURES),
    localrule: True
    threads: 1
    conda:
        "../envs/report.yaml"
    script:
        "../src/scripts/plot_telescoping_double_descent.py"


rule telescoping_tabular_search:
    input:
        data=lambda w: prepared(TABULAR_PANELS[w.panel]["dataset"]),
        code=lib_code("experiments/tabular", "kernels", "models", "train"),
    output:
        "results/telescoping/runs/tabular/{panel}/search_{model}.json",
    params:
        experiment=TABULAR,
        search=TABULAR_SEARCH,
        device=config["device"],
    log:
        "results/logs/telescoping/tabular/{panel}/search_{model}.log",
    benchmark:
        "results/benchmarks/rules/telescoping/tabular/{panel}/search_{model}.tsv"
    wildcard_constraints:
        panel=alternatives(TABULAR_PANELS),
        model=alternatives(TABULAR_SEARCH.get("models", [])),
    threads: threads_for("train")
    resources:
        **gpu_resources(),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/telescoping_tabular_search.py"


rule telescoping_tabular_run:
    input:
        unpack(lambda w: tabular_searches(w.panel)),
        data=lambda w: prepared(TABULAR_PANELS[w.panel]["dataset"]),
        code=lib_code("experiments/tabular", "kernels", "models", "train"),
    output:
        records="results/telescoping/runs/tabular/{panel}/seed{seed}.csv",
        provenance="results/telescoping/runs/tabular/{panel}/seed{seed}.json",
        **{f"ensemble_{library}": f"results/telescoping/runs/tabular/{{panel}}/seed{{seed}}_{library}.joblib"
           for library in TABULAR.get("boosting", {})},
    params:
        experiment=TABULAR,
        searched=lambda w: list(tabular_searches(w.panel)),
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
        **gpu_resources(),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/telescoping_tabular_run.py"


rule plot_telescoping_tabular:
    input:
        runs=lambda w: tabular_runs(TABULAR_FIGURES[w.figure]),
        provenance=lambda w: [f"results/data/{TABULAR_PANELS[p]['dataset']}.json" for p in TABULAR_FIGURES[w.figure]],
        code=lib_code("figures"),
    output:
        "results/telescoping/figures/{figure}.png",
    params:
        panels=TABULAR_PANELS,
    log:
        "results/logs/telescoping/plot_{figure}.log",
    wildcard_constraints:
        figure=alternatives(TABULAR_FIGURES),
    localrule: True
    threads: 1
    conda:
        "../envs/report.yaml"
    script:
        "../src/scripts/plot_telescoping_tabular.py"


rule lmc_pretrain:
    input:
        data=lambda w: prepared(LMC_BRANCHES["pretrained"]["pretrain_dataset"]),
        code=lib_code("experiments/lmc", "models", "train"),
    output:
        "results/telescoping/runs/lmc/pretrained/seed{seed}/pretrained.pt",
    params:
        run=lambda w: LMC_BRANCHES["pretrained"],
        device=config["device"],
    log:
        "results/logs/telescoping/lmc/pretrained/seed{seed}/pretrain.log",
    benchmark:
        "results/benchmarks/rules/telescoping/lmc/pretrained/seed{seed}/pretrain.tsv"
    wildcard_constraints:
        seed=r"\d+",
    threads: threads_for("train")
    resources:
        **gpu_resources(),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/lmc_pretrain.py"


rule lmc_parent:
    input:
        unpack(lambda w: {"initial": f"results/telescoping/runs/lmc/pretrained/seed{w.seed}/pretrained.pt"}
               if w.branch == "pretrained" else {}),
        data=lambda w: prepared(LMC["dataset"]),
        code=lib_code("experiments/lmc", "kernels", "models", "train"),
    output:
        states="results/telescoping/runs/lmc/{branch}/seed{seed}/parent.pt",
        gradient_change="results/telescoping/runs/lmc/{branch}/seed{seed}/gradient_change.csv",
    params:
        run=lambda w: LMC_BRANCHES[w.branch],
        device=config["device"],
    log:
        "results/logs/telescoping/lmc/{branch}/seed{seed}/parent.log",
    benchmark:
        "results/benchmarks/rules/telescoping/lmc/{branch}/seed{seed}/parent.tsv"
    wildcard_constraints:
        branch=alternatives(LMC_BRANCHES),
        seed=r"\d+",
    threads: threads_for("train")
    resources:
        **gpu_resources(),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/lmc_parent.py"


rule lmc_children:
    input:
        parent=lambda w: lmc_parent(w.branch, w.seed),
        data=lambda w: prepared(LMC["dataset"]),
        code=lib_code("experiments/lmc", "models", "train"),
    output:
        "results/telescoping/runs/lmc/{branch}/seed{seed}/spawn{step}/inner{inner}.csv",
    params:
        run=lambda w: LMC_BRANCHES[w.branch],
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
        **gpu_resources(),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/lmc_children.py"


rule plot_telescoping_lmc:
    input:
        children=lmc_children_runs(),
        gradient_changes=lmc_gradient_changes(),
        provenance=lambda w: [f"results/data/{name}.json" for name in
                              dict.fromkeys([LMC["dataset"]] + [r["pretrain_dataset"] for r in LMC_BRANCHES.values()
                                                                if "pretrain_dataset" in r])],
        code=lib_code("figures"),
    output:
        telescoping_figure("fig_6"),
    log:
        "results/logs/telescoping/plot_fig_6.log",
    localrule: True
    threads: 1
    conda:
        "../envs/report.yaml"
    script:
        "../src/scripts/plot_telescoping_lmc.py"


rule telescoping_claims:
    input:
        approximation=approximation_runs(),
        grokking=smoother_runs(GROKKING),
        double_descent=smoother_runs([f"dd_{name}" for name in DOUBLE_DESCENT]),
        tabular=tabular_runs(TABULAR_PANELS),
        lmc=lmc_children_runs(),
        gradient_changes=lmc_gradient_changes(),
        code=lib_code("claims"),
    output:
        "results/telescoping/claims.json",
    params:
        experiments=TELESCOPING,
        scale=config["scale"],
    log:
        "results/logs/telescoping/claims.log",
    localrule: True
    threads: 1
    conda:
        "../envs/report.yaml"
    script:
        "../src/scripts/telescoping_claims.py"
