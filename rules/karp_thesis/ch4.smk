# Karp thesis, chapter 4: the run, plot and claim rules of its figures and
# tables (src/linearlens/manifests/karp_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: karp_thesis_ch4_<verb>.

KARP_CH4 = config.get("karp_thesis", {}).get("ch4")

if KARP_CH4:
    from linearlens.analysis.karp_thesis.ch4 import ONE_STEP_PATH as KARP_CH4_ONE_STEP_PATH

    rule karp_thesis_ch4_run_one_step:
        # Fig 4.1: one gradient step on V under uniform attention (W = 0), the gradient averaged over
        # the sampled sequences in closed form
        input:
            code=script_code("karp_thesis_ch4_run_one_step.py"),
        output:
            KARP_CH4_ONE_STEP_PATH,
        params:
            spec=canonical(KARP_CH4),
        log:
            "results/logs/karp_thesis/ch4/one_step.log",
        benchmark:
            "results/benchmarks/rules/karp_thesis/ch4/one_step.tsv"
        # a (L + 1) × N by N × (L + 1) product: well under a second on one core
        threads: 1
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/karp_thesis_ch4_run_one_step.py"
