# Kernel benchmarks: the layer-wise NTK and tree-kernel replay against the routes they replace.


rule benchmark_kernels:
    input:
        code=script_code("benchmark_kernels.py"),
    output:
        paths.benchmark("kernels"),
    params:
        settings=canonical(config["benchmarks"]["kernels"]),
        device=config["device"],
    log:
        paths.log("benchmark_kernels"),
    threads: threads_for("benchmark")
    resources:
        **job_resources("kernels", device=True),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/benchmark_kernels.py"


rule plot_kernel_benchmark:
    input:
        paths.benchmark("kernels"),
        code=script_code("plot_kernel_benchmark.py"),
    output:
        png=paths.benchmark("kernels", ".png"),
        pdf=paths.benchmark("kernels", ".pdf"),
        sidecar=paths.benchmark("kernels", ".json"),
    log:
        paths.log("plot_kernel_benchmark"),
    localrule: True
    threads: 1
    conda:
        "../envs/report.yaml"
    script:
        "../src/scripts/plot_kernel_benchmark.py"


rule benchmark_telescoping:
    input:
        code=script_code("benchmark_telescoping.py"),
    output:
        paths.benchmark("telescoping"),
    params:
        settings=canonical(config["benchmarks"].get("telescoping", {"cases": {}, "methods": [], "timeout_s": 1})),
        device=config["device"],
    log:
        paths.log("benchmark_telescoping"),
    threads: threads_for("train")  # as the training runs it measures
    resources:
        **job_resources("kernels", device=True),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/benchmark_telescoping.py"


rule benchmark_iterative_linearisation:
    input:
        code=script_code("benchmark_iterative_linearisation.py", config["benchmarks"].get("iterative_linearisation")),
    output:
        paths.benchmark("iterative_linearisation"),
    params:
        settings=canonical(config["benchmarks"].get("iterative_linearisation",
                                          {"cases": {}, "steps": 1, "timeout_s": 1})),
        device=config["device"],
    log:
        paths.log("benchmark_iterative_linearisation"),
    threads: threads_for("benchmark")
    resources:
        **job_resources("kernels", device=True),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/benchmark_iterative_linearisation.py"


rule benchmark_curvature:
    input:
        code=script_code("benchmark_curvature.py"),
    output:
        paths.benchmark("curvature"),
    params:
        settings=canonical(config["benchmarks"].get("curvature", {"models": [], "n": [], "operations": [],
                                                                "methods": [], "dtype": "float32", "timeout_s": 1})),
        device=config["device"],
    log:
        paths.log("benchmark_curvature"),
    threads: threads_for("benchmark")
    resources:
        **job_resources("kernels", device=True),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/benchmark_curvature.py"


rule benchmark_optimisers:
    input:
        code=script_code("benchmark_optimisers.py", config["benchmarks"].get("optimisers")),
    output:
        paths.benchmark("optimisers"),
    params:
        settings=canonical(config["benchmarks"].get("optimisers", {"cases": {}, "methods": ["sgd"], "timeout_s": 1})),
        device=config["device"],
    log:
        paths.log("benchmark_optimisers"),
    threads: threads_for("benchmark")
    resources:
        **job_resources("kernels", device=True),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/benchmark_optimisers.py"


rule benchmarks:
    input:
        rules.plot_kernel_benchmark.output,
        rules.benchmark_curvature.output,
        rules.benchmark_optimisers.output,
        rules.benchmark_telescoping.output,
        rules.benchmark_iterative_linearisation.output,
        # Karp ch. 3's runs, where the config has them (the rule is in rules/karp_thesis/ch3.smk)
        [paths.benchmark("local_signal")] if config.get("karp_thesis", {}).get("ch3", {}).get("images") else [],


# --- kernel extraction: the NTK of any checkpoint on a probe set -------------------------------


rule init_model:
    input:
        code=lambda w: script_code("init_model.py", config["init_models"][w.model]),
    output:
        paths.checkpoint("init", "{model}.pt"),
    params:
        spec=lambda w: canonical(config["init_models"][w.model]),
    log:
        paths.log("init_model", "{model}"),
    threads: 1
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/init_model.py"


rule extract_ntk:
    input:
        checkpoint=lambda w: NTK_EXTRACTIONS[w.extraction]["checkpoint"],
        probe=lambda w: paths.prepared(NTK_EXTRACTIONS[w.extraction]["probe"]["dataset"]),
        code=script_code("extract_ntk.py"),
    output:
        gram=paths.kernel("{extraction}", "ntk.npz"),
        summary=paths.kernel("{extraction}", "summary.json"),
    params:
        settings=lambda w: canonical(NTK_EXTRACTIONS[w.extraction]),
        device=config["device"],
    log:
        paths.log("extract_ntk", "{extraction}"),
    benchmark:
        paths.job_benchmark("extract_ntk", "{extraction}")
    threads: threads_for("train")
    resources:
        **job_resources("kernels", device=True),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/extract_ntk.py"


rule kernels:
    input:
        kernel_outputs(),


# --- tree kernels of boosted ensembles ----------------------------------------------------------


rule fit_tree_ensemble:
    input:
        data=lambda w: paths.prepared(TREE_ENSEMBLES[w.ensemble]["dataset"]),
        code=script_code("fit_tree_ensemble.py"),
    output:
        paths.checkpoint("trees", "{ensemble}.joblib"),
    params:
        spec=lambda w: canonical(TREE_ENSEMBLES[w.ensemble]),
        device=config["device"],
    log:
        paths.log("fit_tree_ensemble", "{ensemble}"),
    benchmark:
        paths.job_benchmark("fit_tree_ensemble", "{ensemble}")
    threads: threads_for("train")
    resources:
        **job_resources("training", device=True),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/fit_tree_ensemble.py"


rule extract_tree_kernel:
    input:
        ensemble=lambda w: TREE_KERNEL_EXTRACTIONS[w.tree_extraction]["ensemble"],
        probe=lambda w: paths.prepared(TREE_KERNEL_EXTRACTIONS[w.tree_extraction]["probe"]["dataset"]),
        code=script_code("extract_tree_kernel.py"),
    output:
        kernel=paths.kernel("{tree_extraction}", "tree_kernel.npz"),
        summary=paths.kernel("{tree_extraction}", "summary.json"),
    params:
        settings=lambda w: canonical(TREE_KERNEL_EXTRACTIONS[w.tree_extraction]),
    log:
        paths.log("extract_tree_kernel", "{tree_extraction}"),
    benchmark:
        paths.job_benchmark("extract_tree_kernel", "{tree_extraction}")
    threads: 1
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/extract_tree_kernel.py"
