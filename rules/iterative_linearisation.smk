# Iterative linearisation (Goldwaser & Ge, both versions): one file per run, figures from runs,
# claims from runs. Figures are numbered as in the longer version; the shorter version's numbers
# are given in each caption. Experiments present in the config are built; the others are skipped.


rule il_run:
    input:
        data=lambda w: prepared(IL_EXPERIMENTS[w.experiment]["dataset"]),
        code=IL_RUN_CODE,
    output:
        records="results/iterative_linearisation/runs/{experiment}/{setting}/seed{seed}.csv",
        checkpoints="results/iterative_linearisation/runs/{experiment}/{setting}/seed{seed}.pt",
    params:
        run=lambda w: {**IL_RUNS[(w.experiment, w.setting)], "device": config["device"]},
        # the run's resumable state while it trains (not an output: it survives a killed job)
        state=lambda w: f"results/iterative_linearisation/state/{w.experiment}/{w.setting}/seed{w.seed}.pt",
    log:
        "results/logs/iterative_linearisation/{experiment}/{setting}/seed{seed}.log",
    benchmark:
        "results/benchmarks/rules/iterative_linearisation/{experiment}/{setting}/seed{seed}.tsv"
    wildcard_constraints:
        experiment=alternatives(IL_EXPERIMENTS),
        setting=alternatives({setting for _, setting in IL_RUNS}),
        seed=r"\d+",
    threads: threads_for("train")
    resources:
        **gpu_resources(),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/il_run.py"


rule il_probe:
    input:
        checkpoints="results/iterative_linearisation/runs/{experiment}/{setting}/seed{seed}.pt",
        data=lambda w: prepared(IL_EXPERIMENTS[w.experiment]["dataset"]),
        code=IL_RUN_CODE,
    output:
        "results/iterative_linearisation/runs/probes/{experiment}/{setting}/seed{seed}.csv",
    params:
        probe=IL_PROBES,
        device=config["device"],
    log:
        "results/logs/iterative_linearisation/probes/{experiment}/{setting}/seed{seed}.log",
    benchmark:
        "results/benchmarks/rules/iterative_linearisation/probes/{experiment}/{setting}/seed{seed}.tsv"
    wildcard_constraints:
        experiment=alternatives([IL_PROBES["source"]] if IL_PROBES else []),
        seed=r"\d+",
    threads: threads_for("train")
    resources:
        **gpu_resources(),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/il_probe.py"


rule il_damping:
    input:
        data=lambda w: prepared(IL_DAMPING["dataset"]),
        code=IL_RUN_CODE + lib_code("kernels"),
    output:
        summary="results/iterative_linearisation/runs/damping/lambda{damping}.csv",
        predictions="results/iterative_linearisation/runs/damping/lambda{damping}.npz",
    params:
        spec=IL_DAMPING,
    log:
        "results/logs/iterative_linearisation/damping/lambda{damping}.log",
    benchmark:
        "results/benchmarks/rules/iterative_linearisation/damping/lambda{damping}.tsv"
    wildcard_constraints:
        damping=alternatives(f"{d:g}" for d in IL_DAMPING["dampings"]) if IL_DAMPING else "(?!)",
    threads: threads_for("train")
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/il_damping.py"


rule il_k1_identity:
    input:
        data=lambda w: prepared(IL["identity_check"]["dataset"]),
        code=IL_RUN_CODE,
    output:
        "results/iterative_linearisation/runs/identity/k1_vs_ordinary.json",
    params:
        check=IL.get("identity_check"),
    log:
        "results/logs/iterative_linearisation/identity.log",
    threads: 1
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/il_k1_identity.py"


rule plot_il_schematic:
    input:
        code=lib_code("figures"),
    output:
        il_figure("fig_1"),
    log:
        "results/logs/iterative_linearisation/plot_fig_1.log",
    localrule: True
    threads: 1
    conda:
        "../envs/report.yaml"
    script:
        "../src/scripts/plot_il_schematic.py"


rule plot_il_training:
    input:
        runs=lambda w: il_runs(IL_FIGURES[w.figure]),
        provenance=lambda w: il_provenance(IL_FIGURES[w.figure]),
        code=lib_code("figures"),
    output:
        "results/iterative_linearisation/figures/{figure}.png",
    params:
        experiments=lambda w: {e: IL_EXPERIMENTS[e] for e in IL_FIGURES[w.figure]},
    log:
        "results/logs/iterative_linearisation/plot_{figure}.log",
    wildcard_constraints:
        figure=alternatives(IL_FIGURES),
    localrule: True
    threads: 1
    conda:
        "../envs/report.yaml"
    script:
        "../src/scripts/plot_il_training.py"


rule plot_il_probes:
    input:
        probes=il_probe_runs() if IL_PROBES else [],
        provenance=il_provenance([IL_PROBES["source"]]) if IL_PROBES else [],
        code=lib_code("figures"),
    output:
        il_figure("fig_6"),
    params:
        experiment=IL_EXPERIMENTS.get(IL_PROBES["source"]) if IL_PROBES else {},
        probe=IL_PROBES,
    log:
        "results/logs/iterative_linearisation/plot_fig_6.log",
    localrule: True
    threads: 1
    conda:
        "../envs/report.yaml"
    script:
        "../src/scripts/plot_il_probes.py"


rule plot_il_filters:
    input:
        checkpoints=il_runs([IL_FILTERS["source"]], "pt") if IL_FILTERS else [],
        provenance=il_provenance([IL_FILTERS["source"]]) if IL_FILTERS else [],
        code=lib_code("figures", "experiments/iterative_linearisation"),
    output:
        il_figure("fig_7"),
    params:
        experiment=IL_EXPERIMENTS.get(IL_FILTERS["source"]) if IL_FILTERS else {},
        filters=IL_FILTERS,
    log:
        "results/logs/iterative_linearisation/plot_fig_7.log",
    localrule: True
    threads: 1
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/plot_il_filters.py"


rule plot_il_damping:
    input:
        summaries=il_damping_runs() if IL_DAMPING else [],
        predictions=il_damping_runs("npz") if IL_DAMPING else [],
        data=prepared(IL_DAMPING["dataset"]) if IL_DAMPING else [],
        provenance=il_provenance([]) + ([f"results/data/{IL_DAMPING['dataset']}.json"] if IL_DAMPING else []),
        code=lib_code("figures"),
    output:
        il_figure("fig_9"),
    params:
        spec=IL_DAMPING,
    log:
        "results/logs/iterative_linearisation/plot_fig_9.log",
    localrule: True
    threads: 1
    conda:
        "../envs/report.yaml"
    script:
        "../src/scripts/plot_il_damping.py"


rule il_claims:
    input:
        runs=il_runs(IL_EXPERIMENTS),
        probes=il_probe_runs() if IL_PROBES else [],
        checkpoints=il_runs([IL_FILTERS["source"]], "pt") if IL_FILTERS else [],
        damping=il_damping_runs() if IL_DAMPING else [],
        identity=["results/iterative_linearisation/runs/identity/k1_vs_ordinary.json"] if IL.get("identity_check") else [],
        code=lib_code("claims", "figures", "experiments/iterative_linearisation"),
    output:
        "results/iterative_linearisation/claims.json",
    params:
        config=IL,
        scale=config["scale"],
    log:
        "results/logs/iterative_linearisation/claims.log",
    localrule: True
    threads: 1
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/il_claims.py"
