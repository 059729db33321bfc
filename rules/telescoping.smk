# Telescoping lens (Jeffares, Curth & van der Schaar 2024): one file per run, figures from runs,
# claims from runs. Experiments present in the config are built; the others are skipped.


rule telescoping_approximation_run:
    input:
        data=lambda w: prepared(APPROXIMATION["dataset"]),
        code=lib_code("experiments/telescoping", "linearize", "models", "train"),
    output:
        "results/telescoping/runs/approximation/{setting}/lr{lr}/seed{seed}.csv",
    params:
        run=lambda w: APPROXIMATION_RUNS[(w.setting, w.lr)],
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
        gpu=gpu_request(),
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
    threads: 1
    conda:
        "../envs/report.yaml"
    script:
        "../src/scripts/plot_telescoping_approximation.py"


rule telescoping_claims:
    input:
        approximation=approximation_runs(),
        code=lib_code("claims"),
    output:
        "results/telescoping/claims.json",
    params:
        experiments=TELESCOPING,
        scale=config["scale"],
    log:
        "results/logs/telescoping/claims.log",
    threads: 1
    conda:
        "../envs/report.yaml"
    script:
        "../src/scripts/telescoping_claims.py"
