# Karp thesis, chapter 3 and appendix B: the run, plot and claim rules of its figures and
# tables (src/linearlens/manifests/karp_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: karp_thesis_ch3_<verb>.

KARP_CH3 = config.get("karp_thesis", {}).get("ch3") or {}


# --- Fig 3.3: the LSA toy model (Sec 3.3, Algorithm 3.1) ---

if KARP_CH3.get("toy"):
    from linearlens.analysis.karp_thesis.ch3 import toy_run_path as karp_ch3_toy_run_path

    KARP_CH3_TOY = KARP_CH3["toy"]

    rule karp_thesis_ch3_run_toy:
        # the LSA model trained by SGD on fresh synthetic samples, drawn inside the run from its seed;
        # a few seconds at quick scale, about a minute at the thesis's 10,000 steps (one CPU core)
        input:
            code=script_code("karp_thesis_ch3_run_toy.py"),
        output:
            karp_ch3_toy_run_path(KARP_CH3_TOY),
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


rule karp_thesis_ch3:
    # The chapter's target: every figure and table of chapter 3 and appendix B this config builds,
    # and the thesis's claims file (which checks them).
    input:
        [entry.path("karp_thesis") for entry in built_entries("karp_thesis")
         if entry.id.split("_")[1] in ("3", "B")],
        [CLAIMS["karp_thesis"]] if CLAIMS["karp_thesis"] else [],
