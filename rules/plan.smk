# The cost before the launch: `snakemake paper_plan --cores 1` prints, per document and run family
# of the paper DAG (config/paper.yaml's default target, and the opt-in paper_karp_thesis_unreleased
# apart), the jobs, GPU-hours, peak GPU memory and download size, whatever config it is started
# with; `snakemake rehearse_gpu` measures the heavy families' steps on a GPU for it.

# The paper configuration's files: config/base.yaml and its paper overlay.
PAPER_CONFIG = [os.path.relpath(path) for path in scale_files("paper", CONFIG_DIR)]
REHEARSE_GPU_CSV = paths.benchmark("rehearse_gpu")


rule paper_plan:
    input:
        config=PAPER_CONFIG,
        # measured step times where rehearse_gpu has run; the plan never starts it
        measured=lambda w: [REHEARSE_GPU_CSV] if os.path.exists(REHEARSE_GPU_CSV) else [],
        snakefile=os.path.relpath(Path(workflow.basedir) / "Snakefile"),
        rules=sorted(os.path.relpath(path) for path in (Path(workflow.basedir) / "rules").rglob("*.smk")),
        code=script_code("paper_plan.py"),
    output:
        table=paths.plan("paper_plan.csv"),
        markdown=paths.plan("paper_plan.md"),
    log:
        paths.log("plan", "paper_plan"),
    localrule: True
    threads: 1
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/paper_plan.py"


# A few steps of each heavy family at paper size on the GPU (benchmarks.rehearse_gpu): step time
# and peak memory, which paper_plan turns into GPU-hours. Needs CUDA (`--config device=cuda`).
rule rehearse_gpu:
    input:
        config=PAPER_CONFIG,
        code=script_code("rehearse_gpu.py"),
    output:
        REHEARSE_GPU_CSV,
    params:
        device=config["device"],
    log:
        paths.log("benchmarks", "rehearse_gpu"),
    threads: threads_for("train")
    resources:
        **job_resources("kernels", device=True),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/rehearse_gpu.py"
