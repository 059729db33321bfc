# George thesis, chapter 4 and appendix A: the run, plot and claim rules of its figures
# (src/linearlens/manifests/george_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: george_thesis_ch4_<verb>.

from linearlens.analysis.george_thesis.ch4 import mlp_classifier_paths

GEORGE_CH4 = config.get("george_thesis", {}).get("ch4") or {}


# --- Fig 4.2: gradient correlations in the KFE; KFAC vs EKFAC against the exact empirical Fisher ---

if "mlp_classifier" in GEORGE_CH4:
    GEORGE_CH4_CLASSIFIER = GEORGE_CH4["mlp_classifier"]

    rule george_thesis_ch4_run_mlp_classifier:
        input:
            data=prepared(GEORGE_CH4_CLASSIFIER["dataset"]),
            code=script_code("george_thesis_ch4_run_mlp_classifier.py"),
        output:
            **mlp_classifier_paths(),
        params:
            spec=canonical(GEORGE_CH4_CLASSIFIER),
            device=config["device"],
        log:
            "results/logs/george_thesis/ch4/mlp_classifier/run.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch4/mlp_classifier/run.tsv"
        threads: threads_for("train")
        resources:
            **gpu_resources(),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch4_run_mlp_classifier.py"


rule george_thesis_ch4:
    # The chapter's target: every figure of chapter 4 and appendix A this config builds, and the
    # thesis's claims file (which checks them).
    input:
        [entry.path("george_thesis") for entry in built_entries("george_thesis")
         if entry.id.split("_")[1] in ("4", "A")],
        [CLAIMS["george_thesis"]] if CLAIMS["george_thesis"] else [],
