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
            data=paths.prepared(GEORGE_CH4_CLASSIFIER["dataset"]),
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
            **job_resources("training", device=True),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch4_run_mlp_classifier.py"


# --- Figs 4.3-4.6, A.1-A.5: training with KFAC, EKFAC, EKFAC-ra and first-order baselines ---
# Each group (the auto-encoder; the CNNs) searches its (η, ε) points per optimiser and batch size, one job per
# run (or per optimiser and batch size at quick scale: ``one_job_per``); the envelopes and selections are
# the analysis's, at plot time.

from linearlens.analysis.george_thesis.ch4 import (
    frequency_path,
    frequency_runs,
    search_job_settings,
    search_jobs,
    search_path,
    search_paths,
    selected_run_settings,
    spectrum_path,
)

CH4_TRAINING_GROUPS = {group: GEORGE_CH4[group] for group in ("autoencoder", "vgg", "resnet") if group in GEORGE_CH4}
CH4_SEARCH_JOBS = {group: search_jobs(spec) for group, spec in CH4_TRAINING_GROUPS.items()}


if CH4_TRAINING_GROUPS:

    rule george_thesis_ch4_run_search:
        input:
            data=lambda w: paths.prepared(CH4_TRAINING_GROUPS[w.group]["dataset"]),
            code=lambda w: script_code("george_thesis_ch4_run_search.py", {"model": CH4_TRAINING_GROUPS[w.group]["model"]}),
        output:
            search_path("{group}", "{job}"),
        params:
            settings=lambda w: canonical(search_job_settings(CH4_TRAINING_GROUPS[w.group], w.job)["settings"]),
            runs=lambda w: canonical(search_job_settings(CH4_TRAINING_GROUPS[w.group], w.job)["runs"]),
            device=config["device"],
        log:
            "results/logs/george_thesis/ch4/{group}/search/{job}.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch4/{group}/search/{job}.tsv"
        wildcard_constraints:
            group=alternatives(CH4_TRAINING_GROUPS),
            job=alternatives({job for jobs in CH4_SEARCH_JOBS.values() for job in jobs}),
        threads: threads_for("train")
        resources:
            **job_resources("training", device=True),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch4_run_search.py"


CH4_FREQUENCY_GROUPS = {group: spec for group, spec in CH4_TRAINING_GROUPS.items() if frequency_runs(spec)}

if CH4_FREQUENCY_GROUPS:

    rule george_thesis_ch4_run_frequency:
        # Fig 4.4a-b: an optimiser at another recompute frequency, at the (η, ε) its search selected
        input:
            data=lambda w: paths.prepared(CH4_FREQUENCY_GROUPS[w.group]["dataset"]),
            search=lambda w: search_paths(CH4_FREQUENCY_GROUPS[w.group], w.group, w.optimiser),
            code=lambda w: script_code("george_thesis_ch4_run_frequency.py", {"model": CH4_FREQUENCY_GROUPS[w.group]["model"]}),
        output:
            frequency_path("{group}", "{optimiser}", "{freq}"),
        params:
            settings=lambda w: canonical(selected_run_settings(CH4_FREQUENCY_GROUPS[w.group], w.optimiser)),
            device=config["device"],
        log:
            "results/logs/george_thesis/ch4/{group}/frequency/{optimiser}_f{freq}.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch4/{group}/frequency/{optimiser}_f{freq}.tsv"
        wildcard_constraints:
            group=alternatives(CH4_FREQUENCY_GROUPS),
            optimiser=alternatives({o for spec in CH4_FREQUENCY_GROUPS.values() for o, _ in frequency_runs(spec)}),
            freq=r"\d+",
        threads: threads_for("train")
        resources:
            **job_resources("training", device=True),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch4_run_frequency.py"


CH4_SPECTRUM_GROUPS = {group: spec for group, spec in CH4_TRAINING_GROUPS.items() if spec.get("spectrum")}

if CH4_SPECTRUM_GROUPS:

    rule george_thesis_ch4_run_spectrum:
        # Fig 4.4c: one layer's empirical-Fisher spectrum against KFAC's and EKFAC's, KFE fixed at the start
        input:
            data=lambda w: paths.prepared(CH4_SPECTRUM_GROUPS[w.group]["dataset"]),
            search=lambda w: search_paths(CH4_SPECTRUM_GROUPS[w.group], w.group,
                                          CH4_SPECTRUM_GROUPS[w.group]["spectrum"]["optimiser"]),
            code=lambda w: script_code("george_thesis_ch4_run_spectrum.py", {"model": CH4_SPECTRUM_GROUPS[w.group]["model"]}),
        output:
            spectrum_path("{group}"),
        params:
            settings=lambda w: canonical(selected_run_settings(
                CH4_SPECTRUM_GROUPS[w.group], CH4_SPECTRUM_GROUPS[w.group]["spectrum"]["optimiser"], tracked=True)),
            device=config["device"],
        log:
            "results/logs/george_thesis/ch4/{group}/spectrum.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch4/{group}/spectrum.tsv"
        wildcard_constraints:
            group=alternatives(CH4_SPECTRUM_GROUPS),
        threads: threads_for("train")
        resources:
            **job_resources("training", device=True),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch4_run_spectrum.py"
