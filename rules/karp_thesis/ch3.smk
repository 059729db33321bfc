# Karp thesis, chapter 3 and appendix B: the run, plot and claim rules of its figures and
# tables (src/linearlens/manifests/karp_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: karp_thesis_ch3_<verb>.

from linearlens.analysis.karp_thesis.ch3 import (
    EXAMPLES_PATH as KARP_CH3_EXAMPLES,
    IMAGE_STATE as KARP_CH3_STATE,
    SPARSITY_RUN as KARP_CH3_SPARSITY,
    example_datasets,
    example_images_spec,
    image_data_path,
    image_jobs,
    image_run_path,
    job_datasets,
    job_images,
    job_training,
    sparsity_settings,
    toy_run_path,
)

KARP_CH3 = config.get("karp_thesis", {}).get("ch3") or {}

# --- Fig 3.3: the LSA toy model (Sec 3.3, Algorithm 3.1) ---

if KARP_CH3.get("toy"):
    KARP_CH3_TOY = KARP_CH3["toy"]

    rule karp_thesis_ch3_run_toy:
        # the LSA model trained by SGD on fresh synthetic samples, drawn inside the run from its seed;
        # a few seconds at quick scale, about a minute at the thesis's 10,000 steps (one CPU core)
        input:
            code=script_code("karp_thesis_ch3_run_toy.py"),
        output:
            toy_run_path(KARP_CH3_TOY),
        params:
            spec=canonical(KARP_CH3_TOY),
        log:
            f"results/logs/karp_thesis/ch3/toy/seed{KARP_CH3_TOY['seed']}.log",
        benchmark:
            f"results/benchmarks/rules/karp_thesis/ch3/toy/seed{KARP_CH3_TOY['seed']}.tsv"
        threads: 1
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/karp_thesis_ch3_run_toy.py"


# --- Figs 3.4, 3.5, Tables 3.1, B.1: the network against its linearisation on noisy images ---

if KARP_CH3.get("images"):
    KARP_CH3_JOBS = list(image_jobs(KARP_CH3["images"]))

    rule karp_thesis_ch3_make_images:
        # one job's noisy-image variants, made once and read by both models' runs
        input:
            datasets=lambda w: [paths.prepared(name) for name in job_datasets(KARP_CH3["images"], w.job)],
            code=script_code("karp_thesis_ch3_make_images.py"),
        output:
            image_data_path("{job}"),
        params:
            names=lambda w: job_datasets(KARP_CH3["images"], w.job),
            images=lambda w: canonical(job_images(KARP_CH3["images"], w.job)),
        log:
            "results/logs/karp_thesis/ch3/images/{job}.log",
        benchmark:
            "results/benchmarks/rules/karp_thesis/ch3/images/{job}.tsv"
        wildcard_constraints:
            job=alternatives(KARP_CH3_JOBS),
        threads: 1
        resources:
            **job_resources("images"),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/karp_thesis_ch3_make_images.py"

    rule karp_thesis_ch3_run_images:
        # the network (WRN) or its linearisation at θ₀ trained on each variant of one data job
        input:
            data=lambda w: image_data_path(w.job),
            code=script_code("karp_thesis_ch3_run_images.py", KARP_CH3["model"]),
        output:
            image_run_path("{model}", "{job}"),
        params:
            training=lambda w: canonical(job_training(KARP_CH3, w.model, w.job)),
            device=config["device"],
            # the runs' resumable states while they train (not outputs: they survive a killed job)
            state=KARP_CH3_STATE,
        log:
            "results/logs/karp_thesis/ch3/{model}/{job}.log",
        benchmark:
            "results/benchmarks/rules/karp_thesis/ch3/{model}/{job}.tsv"
        wildcard_constraints:
            job=alternatives(KARP_CH3_JOBS),
            model="network|linearisation",
        threads: threads_for("train")
        resources:
            **job_resources("long_training", device=True),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/karp_thesis_ch3_run_images.py"

    if KARP_CH3["images"].get("examples"):

        rule karp_thesis_ch3_make_examples:
            # Fig 3.5: example images from the variants' own generators (no training)
            input:
                datasets=[paths.prepared(name) for name in example_datasets(KARP_CH3["images"])],
                code=script_code("karp_thesis_ch3_make_examples.py"),
            output:
                KARP_CH3_EXAMPLES,
            params:
                names=example_datasets(KARP_CH3["images"]),
                images=canonical(example_images_spec(KARP_CH3["images"])),
            log:
                "results/logs/karp_thesis/ch3/examples.log",
            threads: 1
            conda:
                "../../envs/torch.yaml"
            script:
                "../../src/scripts/karp_thesis_ch3_make_examples.py"

    rule benchmark_local_signal:
        # one epoch of the WRN and of its linearisation at each size, and the chapter's cost from them
        input:
            code=script_code("benchmark_local_signal.py", KARP_CH3["model"]),
        output:
            "results/benchmarks/local_signal.csv",
        params:
            spec=canonical({key: KARP_CH3[key] for key in ("images", "model", "network", "linearisation", "sparsity")
                            if key in KARP_CH3}),
            timing=canonical(config["benchmarks"].get("local_signal", {"n_train": 1000, "fraction": 1.0})),
            device=config["device"],
        log:
            "results/logs/benchmark_local_signal.log",
        threads: threads_for("benchmark")
        resources:
            **job_resources("training", device=True),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/benchmark_local_signal.py"

# --- Fig 3.2: activation sparsity of the network's ReLU layers over training ---

if KARP_CH3.get("sparsity"):

    rule karp_thesis_ch3_run_sparsity:
        input:
            data=paths.prepared(KARP_CH3["sparsity"]["dataset"]),
            code=script_code("karp_thesis_ch3_run_sparsity.py", KARP_CH3["model"]),
        output:
            KARP_CH3_SPARSITY,
        params:
            settings=canonical(sparsity_settings(KARP_CH3)),
            device=config["device"],
            # the run's resumable state while it trains (not an output: it survives a killed job)
            state=f"{KARP_CH3_STATE}/sparsity.pt",
        log:
            "results/logs/karp_thesis/ch3/sparsity.log",
        benchmark:
            "results/benchmarks/rules/karp_thesis/ch3/sparsity.tsv"
        threads: threads_for("train")
        resources:
            **job_resources("long_training", device=True),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/karp_thesis_ch3_run_sparsity.py"


rule karp_thesis_ch3:
    # The chapter's target: every figure and table of chapter 3 and appendix B this config builds,
    # and the thesis's claims file (which checks them).
    input:
        [entry.path("karp_thesis") for entry in built_entries("karp_thesis")
         if entry.id.split("_")[1] in ("3", "B")],
        [CLAIMS["karp_thesis"]] if CLAIMS["karp_thesis"] else [],
