# Karp thesis, chapter 4: the run, plot and claim rules of its figures and
# tables (src/linearlens/manifests/karp_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: karp_thesis_ch4_<verb>.

KARP_CH4 = config.get("karp_thesis", {}).get("ch4")

if KARP_CH4:
    from linearlens.manifests.karp_thesis import ONE_STEP_PATH as KARP_CH4_ONE_STEP_PATH

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
            paths.log_of(KARP_CH4_ONE_STEP_PATH),
        benchmark:
            paths.benchmark_of(KARP_CH4_ONE_STEP_PATH)
        # a (L + 1) × N by N × (L + 1) product: well under a second on one core
        threads: 1
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/karp_thesis_ch4_run_one_step.py"


rule karp_thesis_ch4:
    # The chapter's target: every figure of chapter 4 this config builds (Fig 4.1), and the thesis's
    # claims file (which checks them).
    input:
        [entry.path("karp_thesis") for entry in built_entries("karp_thesis") if entry.id.split("_")[1] == "4"],
        [CLAIMS["karp_thesis"]] if CLAIMS["karp_thesis"] else [],
