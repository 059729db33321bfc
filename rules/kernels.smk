# Kernel benchmarks: the layer-wise NTK and tree-kernel replay against the routes they replace.


rule benchmark_kernels:
    input:
        code=script_code("benchmark_kernels.py"),
    output:
        "results/benchmarks/kernels.csv",
    params:
        settings=canonical(config["benchmarks"]["kernels"]),
        device=config["device"],
    log:
        "results/logs/benchmark_kernels.log",
    threads: threads_for("benchmark")
    resources:
        **gpu_resources(),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/benchmark_kernels.py"


rule plot_kernel_benchmark:
    input:
        "results/benchmarks/kernels.csv",
        code=script_code("plot_kernel_benchmark.py"),
    output:
        png="results/benchmarks/kernels.png",
        pdf="results/benchmarks/kernels.pdf",
        sidecar="results/benchmarks/kernels.json",
    log:
        "results/logs/plot_kernel_benchmark.log",
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
        "results/benchmarks/telescoping.csv",
    params:
        settings=canonical(config["benchmarks"].get("telescoping", {"cases": {}, "methods": [], "timeout_s": 1})),
        device=config["device"],
    log:
        "results/logs/benchmark_telescoping.log",
    threads: threads_for("train")  # as the training runs it measures
    resources:
        **gpu_resources(),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/benchmark_telescoping.py"


rule benchmark_iterative_linearisation:
    input:
        code=script_code("benchmark_iterative_linearisation.py", config["benchmarks"].get("iterative_linearisation")),
    output:
        "results/benchmarks/iterative_linearisation.csv",
    params:
        settings=canonical(config["benchmarks"].get("iterative_linearisation",
                                          {"cases": {}, "steps": 1, "timeout_s": 1})),
        device=config["device"],
    log:
        "results/logs/benchmark_iterative_linearisation.log",
    threads: threads_for("benchmark")
    resources:
        **gpu_resources(),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/benchmark_iterative_linearisation.py"


rule benchmark_curvature:
    input:
        code=script_code("benchmark_curvature.py"),
    output:
        "results/benchmarks/curvature.csv",
    params:
        settings=canonical(config["benchmarks"].get("curvature", {"models": [], "n": [], "operations": [],
                                                                "methods": [], "dtype": "float32", "timeout_s": 1})),
        device=config["device"],
    log:
        "results/logs/benchmark_curvature.log",
    threads: threads_for("benchmark")
    resources:
        **gpu_resources(),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/benchmark_curvature.py"


rule benchmark_optimisers:
    input:
        code=script_code("benchmark_optimisers.py", config["benchmarks"].get("optimisers")),
    output:
        "results/benchmarks/optimisers.csv",
    params:
        settings=canonical(config["benchmarks"].get("optimisers", {"cases": {}, "methods": ["sgd"], "timeout_s": 1})),
        device=config["device"],
    log:
        "results/logs/benchmark_optimisers.log",
    threads: threads_for("benchmark")
    resources:
        **gpu_resources(),
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
        ["results/benchmarks/local_signal.csv"] if config.get("karp_thesis", {}).get("ch3", {}).get("images") else [],


# --- kernel extraction: the NTK of any checkpoint on a probe set -------------------------------


rule init_model:
    input:
        code=lambda w: script_code("init_model.py", config["init_models"][w.model]),
    output:
        "results/checkpoints/init/{model}.pt",
    params:
        spec=lambda w: canonical(config["init_models"][w.model]),
    log:
        "results/logs/init_model/{model}.log",
    threads: 1
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/init_model.py"


rule extract_ntk:
    input:
        checkpoint=lambda w: NTK_EXTRACTIONS[w.extraction]["checkpoint"],
        probe=lambda w: prepared(NTK_EXTRACTIONS[w.extraction]["probe"]["dataset"]),
        code=script_code("extract_ntk.py"),
    output:
        gram="results/kernels/{extraction}/ntk.npz",
        summary="results/kernels/{extraction}/summary.json",
    params:
        settings=lambda w: canonical(NTK_EXTRACTIONS[w.extraction]),
        device=config["device"],
    log:
        "results/logs/extract_ntk/{extraction}.log",
    benchmark:
        "results/benchmarks/rules/extract_ntk/{extraction}.tsv"
    threads: threads_for("train")
    resources:
        **gpu_resources(),
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
        data=lambda w: prepared(TREE_ENSEMBLES[w.ensemble]["dataset"]),
        code=script_code("fit_tree_ensemble.py"),
    output:
        "results/checkpoints/trees/{ensemble}.joblib",
    params:
        spec=lambda w: canonical(TREE_ENSEMBLES[w.ensemble]),
        device=config["device"],
    log:
        "results/logs/fit_tree_ensemble/{ensemble}.log",
    benchmark:
        "results/benchmarks/rules/fit_tree_ensemble/{ensemble}.tsv"
    threads: threads_for("train")
    resources:
        **gpu_resources(),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/fit_tree_ensemble.py"


rule extract_tree_kernel:
    input:
        ensemble=lambda w: TREE_KERNEL_EXTRACTIONS[w.tree_extraction]["ensemble"],
        probe=lambda w: prepared(TREE_KERNEL_EXTRACTIONS[w.tree_extraction]["probe"]["dataset"]),
        code=script_code("extract_tree_kernel.py"),
    output:
        kernel="results/kernels/{tree_extraction}/tree_kernel.npz",
        summary="results/kernels/{tree_extraction}/summary.json",
    params:
        settings=lambda w: canonical(TREE_KERNEL_EXTRACTIONS[w.tree_extraction]),
    log:
        "results/logs/extract_tree_kernel/{tree_extraction}.log",
    benchmark:
        "results/benchmarks/rules/extract_tree_kernel/{tree_extraction}.tsv"
    threads: 1
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/extract_tree_kernel.py"
