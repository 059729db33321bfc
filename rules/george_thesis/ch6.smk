# George thesis, chapter 6 and appendix B: the run, plot and claim rules of its figures
# (src/linearlens/manifests/george_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: george_thesis_ch6_<verb>.

from linearlens.manifests.george_thesis import CH6_RUNS, kernel_runs

GEORGE_CH6 = config.get("george_thesis", {}).get("ch6") or {}
CH6_STATE = "results/george_thesis/state/ch6"


# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and label alignment over training ---

ALIGNMENT = GEORGE_CH6.get("alignment")
ALIGNMENT_RUNS = kernel_runs(ALIGNMENT) if ALIGNMENT else {}

if ALIGNMENT:

    rule george_thesis_ch6_run_alignment:
        input:
            data=lambda w: paths.prepared(ALIGNMENT["families"][w.family]["dataset"]),
            code=lambda w: script_code("george_thesis_ch6_run_alignment.py", ALIGNMENT_RUNS[(w.family, w.setting)]),
        output:
            rows=f"{CH6_RUNS}/alignment/{{family}}/{{setting}}/seed{{seed}}.csv",
            layers=f"{CH6_RUNS}/alignment/{{family}}/{{setting}}/seed{{seed}}_layers.csv",
            grams=f"{CH6_RUNS}/alignment/{{family}}/{{setting}}/seed{{seed}}_grams.npz",
        params:
            run=lambda w: canonical({**ALIGNMENT_RUNS[(w.family, w.setting)], "keep_grams": True}),
            device=config["device"],
            # the run's resumable state while it trains (not an output: it survives a killed job)
            state=lambda w: f"{CH6_STATE}/alignment/{w.family}/{w.setting}/seed{w.seed}.pt",
        log:
            "results/logs/george_thesis/ch6/alignment/{family}/{setting}/seed{seed}.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch6/alignment/{family}/{setting}/seed{seed}.tsv"
        wildcard_constraints:
            family=alternatives({family for family, _ in ALIGNMENT_RUNS}),
            setting=alternatives({setting for _, setting in ALIGNMENT_RUNS}),
            seed=r"\d+",
        threads: threads_for("train")
        resources:
            **gpu_resources(),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch6_run_alignment.py"

    rule george_thesis_ch6_summarise_alignment:
        input:
            grams=f"{CH6_RUNS}/alignment/{{family}}/{{setting}}/seed{{seed}}_grams.npz",
            code=script_code("george_thesis_ch6_summarise_alignment.py"),
        output:
            summary=f"{CH6_RUNS}/alignment/{{family}}/{{setting}}/seed{{seed}}_spectra.csv",
            trace_ratios=f"{CH6_RUNS}/alignment/{{family}}/{{setting}}/seed{{seed}}_trace_ratios.npz",
        params:
            centring=ALIGNMENT["centring"],
        log:
            "results/logs/george_thesis/ch6/alignment/{family}/{setting}/seed{seed}_spectra.log",
        wildcard_constraints:
            family=alternatives({family for family, _ in ALIGNMENT_RUNS}),
            setting=alternatives({setting for _, setting in ALIGNMENT_RUNS}),
            seed=r"\d+",
        threads: 1
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch6_summarise_alignment.py"


# --- Figs 6.4, B.7: alignment on easy vs difficult examples ---

EASY_DIFFICULT = GEORGE_CH6.get("easy_difficult")
EASY_DIFFICULT_RUNS = kernel_runs(EASY_DIFFICULT) if EASY_DIFFICULT else {}


if EASY_DIFFICULT:

    rule george_thesis_ch6_run_easy_difficult:
        input:
            # the difficult examples' prepared dataset, when they come from another dataset
            unpack(lambda w: {"difficult": paths.prepared(name)} if (
                name := EASY_DIFFICULT["families"][w.family].get("difficult_dataset")) else {}),
            data=lambda w: paths.prepared(EASY_DIFFICULT["families"][w.family]["dataset"]),
            code=lambda w: script_code("george_thesis_ch6_run_easy_difficult.py",
                                       EASY_DIFFICULT_RUNS[(w.family, w.setting)]),
        output:
            rows=f"{CH6_RUNS}/easy_difficult/{{family}}/{{setting}}/seed{{seed}}.csv",
            layers=f"{CH6_RUNS}/easy_difficult/{{family}}/{{setting}}/seed{{seed}}_layers.csv",
        params:
            run=lambda w: canonical({**EASY_DIFFICULT_RUNS[(w.family, w.setting)], "keep_grams": False}),
            device=config["device"],
            state=lambda w: f"{CH6_STATE}/easy_difficult/{w.family}/{w.setting}/seed{w.seed}.pt",
        log:
            "results/logs/george_thesis/ch6/easy_difficult/{family}/{setting}/seed{seed}.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch6/easy_difficult/{family}/{setting}/seed{seed}.tsv"
        wildcard_constraints:
            family=alternatives({family for family, _ in EASY_DIFFICULT_RUNS}),
            setting=alternatives({setting for _, setting in EASY_DIFFICULT_RUNS}),
            seed=r"\d+",
        threads: threads_for("train")
        resources:
            **gpu_resources(),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch6_run_easy_difficult.py"


# --- Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task ---

if "disk" in GEORGE_CH6:

    rule george_thesis_ch6_run_disk:
        input:
            data=paths.prepared(GEORGE_CH6["disk"]["dataset"]),
            code=script_code("george_thesis_ch6_run_disk.py", GEORGE_CH6.get("disk")),
        output:
            "results/george_thesis/runs/ch6/disk/seed{seed}.npz",
        params:
            spec=canonical(GEORGE_CH6["disk"]),
            device=config["device"],
        log:
            "results/logs/george_thesis/ch6/disk/seed{seed}.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch6/disk/seed{seed}.tsv"
        wildcard_constraints:
            seed=alternatives(GEORGE_CH6["disk"]["seeds"]),
        threads: threads_for("train")
        resources:
            **gpu_resources(),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch6_run_disk.py"


# --- Fig B.2: spectral bias of a random MLP's tangent kernel ---

if "spectral_bias" in GEORGE_CH6:

    rule george_thesis_ch6_run_spectral_bias:
        input:
            code=script_code("george_thesis_ch6_run_spectral_bias.py", GEORGE_CH6.get("spectral_bias")),
        output:
            "results/george_thesis/runs/ch6/spectral_bias/spectrum.npz",
        params:
            spec=canonical(GEORGE_CH6["spectral_bias"]),
        log:
            "results/logs/george_thesis/ch6/spectral_bias/spectrum.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch6/spectral_bias/spectrum.tsv"
        threads: threads_for("train")
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch6_run_spectral_bias.py"


# --- Fig 6.5: SuperNat vs gradient descent on noisy linear regression ---

if "supernat" in GEORGE_CH6:

    rule george_thesis_ch6_run_supernat:
        input:
            code=script_code("george_thesis_ch6_run_supernat.py", GEORGE_CH6.get("supernat")),
        output:
            "results/george_thesis/runs/ch6/supernat/curves.npz",
        params:
            spec=canonical(GEORGE_CH6["supernat"]),
        log:
            "results/logs/george_thesis/ch6/supernat/run.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch6/supernat/run.tsv"
        threads: 1
        conda:
            "../../envs/data.yaml"
        script:
            "../../src/scripts/george_thesis_ch6_run_supernat.py"


# --- Fig B.3: which norm measures capacity (random RBF features) ---

if "rbf_capacity" in GEORGE_CH6:

    rule george_thesis_ch6_run_rbf_capacity:
        input:
            code=script_code("george_thesis_ch6_run_rbf_capacity.py", GEORGE_CH6.get("rbf_capacity")),
        output:
            "results/george_thesis/runs/ch6/rbf_capacity/bounds.npz",
        params:
            spec=canonical(GEORGE_CH6["rbf_capacity"]),
        log:
            "results/logs/george_thesis/ch6/rbf_capacity/run.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch6/rbf_capacity/run.tsv"
        threads: 1
        conda:
            "../../envs/data.yaml"
        script:
            "../../src/scripts/george_thesis_ch6_run_rbf_capacity.py"


# --- Fig B.1: output change along the Jacobian's top singular directions ---

if "perturbation" in GEORGE_CH6:
    GEORGE_CH6_PERTURBATION = GEORGE_CH6["perturbation"]

    rule george_thesis_ch6_run_perturbation:
        input:
            data=paths.prepared(GEORGE_CH6_PERTURBATION["dataset"]),
            code=script_code("george_thesis_ch6_run_perturbation.py", GEORGE_CH6_PERTURBATION),
        output:
            "results/george_thesis/runs/ch6/perturbation/seed{seed}.npz",
        params:
            # one run per seed: the list of seeds is not part of a run's settings
            spec=canonical({k: v for k, v in GEORGE_CH6_PERTURBATION.items() if k != "seeds"}),
            device=config["device"],
            # the training's resumable state (not an output: it survives a killed job)
            state=lambda w: f"results/george_thesis/state/ch6/perturbation/seed{w.seed}.pt",
        log:
            "results/logs/george_thesis/ch6/perturbation/seed{seed}.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch6/perturbation/seed{seed}.tsv"
        wildcard_constraints:
            seed=alternatives(GEORGE_CH6_PERTURBATION["seeds"]),
        threads: threads_for("train")
        resources:
            **gpu_resources(),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch6_run_perturbation.py"


# --- Fig 6.6: complexity measures against the generalisation gap ---

if "complexity" in GEORGE_CH6:
    from linearlens.analysis.george_thesis.ch6 import complexity_run_specs

    COMPLEXITY_RUNS = complexity_run_specs(GEORGE_CH6["complexity"])  # {run: spec}; shared runs once

    rule george_thesis_ch6_run_complexity:
        input:
            data=lambda w: paths.prepared(COMPLEXITY_RUNS[w.run]["dataset"]),
            code=lambda w: script_code("george_thesis_ch6_run_complexity.py", COMPLEXITY_RUNS[w.run]),
        output:
            records="results/george_thesis/runs/ch6/complexity/{run}/seed{seed}.csv",
            measures="results/george_thesis/runs/ch6/complexity/{run}/seed{seed}.json",
        params:
            spec=lambda w: canonical(COMPLEXITY_RUNS[w.run]),
            device=config["device"],
            # the run's resumable state while it trains (not an output: it survives a killed job)
            state=lambda w: f"results/george_thesis/state/ch6/complexity/{w.run}/seed{w.seed}.pt",
        log:
            "results/logs/george_thesis/ch6/complexity/{run}/seed{seed}.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch6/complexity/{run}/seed{seed}.tsv"
        wildcard_constraints:
            run=alternatives(COMPLEXITY_RUNS),
            seed=r"\d+",
        threads: threads_for("train")
        resources:
            **gpu_resources(),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch6_run_complexity.py"


rule george_thesis_ch6:
    # The chapter's target: every figure of chapter 6 and appendix B this config builds, and the
    # thesis's claims file (which checks them).
    input:
        [entry.path("george_thesis") for entry in built_entries("george_thesis")
         if entry.id.split("_")[1] in ("6", "B")],
        [CLAIMS["george_thesis"]] if CLAIMS["george_thesis"] else [],
