# Karp thesis, chapter 3 and appendix B: the chapter's data and benchmark rules. Its
# run rules are generated from its run families (src/linearlens/manifests/karp_thesis_runs.py,
# rules/families.smk), its drawings, plots, claims and target from the manifest (rules/manifests.smk).

from linearlens.analysis.karp_thesis.ch3 import (
    example_datasets,
    example_images_spec,
    image_jobs,
    job_datasets,
    job_images,
)
from linearlens.manifests.karp_thesis_runs import EXAMPLES_PATH as KARP_CH3_EXAMPLES, image_data_path

KARP_CH3 = config.get("karp_thesis", {}).get("ch3") or {}

# --- Figs 3.4, 3.5, Tables 3.1, B.1: the noisy images the network and its linearisation train on ---

if KARP_CH3.get("images"):
    KARP_CH3_IMAGES = KARP_CH3["images"]

    rule karp_thesis_ch3_make_images:
        # one job's noisy-image variants, made once and read by both models' runs
        input:
            datasets=lambda w: [paths.prepared(name) for name in job_datasets(KARP_CH3_IMAGES, w.job)],
            code=script_code("karp_thesis_ch3_make_images.py"),
        output:
            image_data_path("{job}"),
        params:
            names=lambda w: job_datasets(KARP_CH3_IMAGES, w.job),
            images=lambda w: canonical(job_images(KARP_CH3_IMAGES, w.job)),
        log:
            paths.log("karp_thesis", "ch3", "images", "{job}"),
        benchmark:
            paths.job_benchmark("karp_thesis", "ch3", "images", "{job}")
        wildcard_constraints:
            job=alternatives(image_jobs(KARP_CH3_IMAGES)),
        threads: 1
        resources:
            **job_resources("images"),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/karp_thesis_ch3_make_images.py"

    if KARP_CH3_IMAGES.get("examples"):

        rule karp_thesis_ch3_make_examples:
            # Fig 3.5: example images from the variants' own generators (no training)
            input:
                datasets=[paths.prepared(name) for name in example_datasets(KARP_CH3_IMAGES)],
                code=script_code("karp_thesis_ch3_make_examples.py"),
            output:
                KARP_CH3_EXAMPLES,
            params:
                names=example_datasets(KARP_CH3_IMAGES),
                images=canonical(example_images_spec(KARP_CH3_IMAGES)),
            log:
                paths.log("karp_thesis", "ch3", "examples"),
            threads: 1
            conda:
                "../../envs/torch.yaml"
            script:
                "../../src/scripts/karp_thesis_ch3_make_examples.py"

    TIMED_SETTINGS = ("images", "model", "network", "linearisation", "sparsity")  # what the timed epochs train with

    if "local_signal" in config["benchmarks"]:  # a scale or a user may remove the benchmark
        rule benchmark_local_signal:
            # one epoch of the WRN and of its linearisation at each size, and the chapter's cost from them
            input:
                code=script_code("benchmark_local_signal.py", KARP_CH3),
            output:
                paths.benchmark("local_signal"),
            params:
                spec=canonical({key: KARP_CH3[key] for key in TIMED_SETTINGS if key in KARP_CH3}),
                timing=canonical(config["benchmarks"]["local_signal"]),
                device=config["device"],
            log:
                paths.log("benchmark_local_signal"),
            threads: threads_for("benchmark")
            resources:
                **job_resources("training", device=True),
            conda:
                "../../envs/torch.yaml"
            script:
                "../../src/scripts/benchmark_local_signal.py"
