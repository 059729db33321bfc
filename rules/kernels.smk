# The method benchmarks (each times the library's route against those it replaces), kernel
# extraction (the NTK of a checkpoint, the tree kernel of a boosted ensemble) and their targets.


# The method benchmarks: one rule for each the config's `benchmarks` has (a scale may remove one:
# paper.yaml removes curvature's). The name of its settings there and of its table -> the library
# function that runs it (its module's import closure is the job's code) and the `threads:` kind its
# job takes.
METHOD_BENCHMARKS = {
    "kernels": ("linearlens.benchmarks.kernels:run_kernel_benchmark", "benchmark"),
    # as the training runs it measures
    "telescoping": ("linearlens.benchmarks.telescoping:run_tracking_benchmark", "train"),
    "iterative_linearisation": ("linearlens.benchmarks.iterative_linearisation:run_step_benchmark", "benchmark"),
    "curvature": ("linearlens.benchmarks.curvature:run_curvature_benchmark", "benchmark"),
    "optimisers": ("linearlens.benchmarks.optimisers:run_optimiser_benchmark", "benchmark"),
}
CONFIGURED_BENCHMARKS = [name for name in METHOD_BENCHMARKS if name in config["benchmarks"]]


for measured in CONFIGURED_BENCHMARKS:
    run_benchmark, threads_kind = METHOD_BENCHMARKS[measured]

    rule:
        name:
            f"benchmark_{measured}"
        input:
            code=function_code("benchmark_method.py", run_benchmark, specs=[config["benchmarks"][measured]]),
        output:
            paths.benchmark(measured),
        params:
            run=run_benchmark,
            settings=canonical(config["benchmarks"][measured]),
            device=config["device"],
        log:
            paths.log(f"benchmark_{measured}"),
        threads: threads_for(threads_kind)
        resources:
            **job_resources("kernels", device=True),
        conda:
            "../envs/torch.yaml"
        script:
            "../src/scripts/benchmark_method.py"


# The kernel benchmark's figure (the `benchmarks` target asks for it where the config has that benchmark).
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


rule benchmarks:
    input:
        # the kernel benchmark's figure, which reads its table
        rules.plot_kernel_benchmark.output if "kernels" in CONFIGURED_BENCHMARKS else [],
        [paths.benchmark(name) for name in CONFIGURED_BENCHMARKS if name != "kernels"],
        # Karp ch. 3's runs, where the config has them (the rule is in rules/karp_thesis/ch3.smk)
        [paths.benchmark("local_signal")]
        if ((config.get("karp_thesis") or {}).get("ch3") or {}).get("images") and "local_signal" in config["benchmarks"]
        else [],


# --- kernel extraction: the NTK of any checkpoint on a probe set -------------------------------


rule init_model:
    input:
        code=get_init_model_code,
    output:
        paths.checkpoint("init", "{model}.pt"),
    params:
        spec=configured_spec(INIT_MODELS, "model"),
    log:
        paths.log("init_model", "{model}"),
    threads: 1
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/init_model.py"


rule extract_ntk:
    input:
        unpack(get_ntk_extraction_inputs),
        code=script_code("extract_ntk.py"),
    output:
        gram=paths.kernel("{extraction}", "ntk.npz"),
        summary=paths.kernel("{extraction}", "summary.json"),
    params:
        settings=configured_spec(NTK_EXTRACTIONS, "extraction"),
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
        data=get_tree_ensemble_data,
        code=script_code("fit_tree_ensemble.py"),
    output:
        paths.checkpoint("trees", "{ensemble}.joblib"),
    params:
        spec=configured_spec(TREE_ENSEMBLES, "ensemble"),
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
        unpack(get_tree_kernel_inputs),
        code=script_code("extract_tree_kernel.py"),
    output:
        kernel=paths.kernel("{tree_extraction}", "tree_kernel.npz"),
        summary=paths.kernel("{tree_extraction}", "summary.json"),
    params:
        settings=configured_spec(TREE_KERNEL_EXTRACTIONS, "tree_extraction"),
    log:
        paths.log("extract_tree_kernel", "{tree_extraction}"),
    benchmark:
        paths.job_benchmark("extract_tree_kernel", "{tree_extraction}")
    threads: 1
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/extract_tree_kernel.py"
