# George thesis, chapter 5 and appendix C: the run, plot and claim rules of its figures
# (src/linearlens/manifests/george_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: george_thesis_ch5_<verb>.

GEORGE_CH5 = config.get("george_thesis", {}).get("ch5") or {}
CH5_STATE = "results/george_thesis/state/ch5"


# --- Fig 5.1: the yin-yang toy, α = 1 vs α = 100, Δloss maps at loss thresholds ---

if GEORGE_CH5.get("toy"):
    from linearlens.analysis.george_thesis.ch5 import TOY_RUNS, toy_run_spec

    GEORGE_CH5_TOY = GEORGE_CH5["toy"]

    rule george_thesis_ch5_run_toy:
        # one job per block of seeds (``shards``), every seed at every α in one batch; the
        # training sets are drawn inside the run from each seed (the yin_yang generator)
        input:
            code=script_code("george_thesis_ch5_run_toy.py"),
        output:
            f"{TOY_RUNS}/shard{{shard}}.npz",
        params:
            spec=canonical(toy_run_spec(GEORGE_CH5_TOY)),
            device=config["device"],
        log:
            "results/logs/george_thesis/ch5/toy/shard{shard}.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch5/toy/shard{shard}.tsv"
        wildcard_constraints:
            shard=alternatives(range(GEORGE_CH5_TOY["shards"])),
        threads: threads_for("train")
        resources:
            **job_resources("kernels", device=True),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch5_run_toy.py"


# --- Figs 5.4, C.9: the quadratic model in closed form, and a 2-layer linear MLP on its datasets ---

ANALYTIC = GEORGE_CH5.get("analytic")

if ANALYTIC:
    from linearlens.analysis.george_thesis.ch5 import (
        closed_form_spec,
        closed_forms_path,
        twolayer_path,
        twolayer_spec,
    )

    rule george_thesis_ch5_run_analytic:
        input:
            code=script_code("george_thesis_ch5_run_analytic.py"),
        output:
            closed_forms_path(),
        params:
            spec=canonical(closed_form_spec(ANALYTIC)),
        log:
            "results/logs/george_thesis/ch5/analytic/closed_forms.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch5/analytic/closed_forms.tsv"
        threads: 1
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch5_run_analytic.py"

    rule george_thesis_ch5_run_twolayer:
        input:
            code=script_code("george_thesis_ch5_run_twolayer.py"),
        output:
            twolayer_path("{example}"),
        params:
            spec=lambda w: canonical(twolayer_spec(ANALYTIC, w.example)),
        log:
            "results/logs/george_thesis/ch5/analytic/twolayer_{example}.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch5/analytic/twolayer_{example}.tsv"
        wildcard_constraints:
            example=alternatives(ANALYTIC["examples"]),
        # tiny matrices (at most 200 × 200): one thread; a second only waits on the first
        threads: 1
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch5_run_twolayer.py"


# --- Figs 5.2, C.1-C.6: α-scaled runs on C-score groups and noisy labels, linearity metrics ---

DIFFICULTY = GEORGE_CH5.get("difficulty")

if DIFFICULTY:
    from linearlens.analysis.george_thesis.ch5 import (
        DIFFICULTY_RUNS,
        cap_run,
        cscores_path,
        difficulty_runs,
        init_path,
        run_path,
        run_settings,
        runs_by_key,
    )

    DIFFICULTY_BY_KEY = runs_by_key(DIFFICULTY)
    DIFFICULTY_CSCORES = DIFFICULTY["cscores"]

    rule george_thesis_ch5_bin_cscores:
        # the C-scores of the train and test examples (published, or the pipeline's proxy) in deciles
        input:
            unpack(lambda w: {"scores": paths.prepared(DIFFICULTY_CSCORES["dataset"])}
                   if DIFFICULTY_CSCORES["source"] == "published" else {}),
            data=paths.prepared(DIFFICULTY["dataset"]),
            code=script_code("george_thesis_ch5_bin_cscores.py"),
        output:
            scores=cscores_path(".npz"),
            table=cscores_path(".csv"),
        params:
            settings=canonical({key: DIFFICULTY[key] for key in ("cscores", "bins", "tracked", "tracking_seed")}),
        log:
            "results/logs/george_thesis/ch5/difficulty/cscores.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch5/difficulty/cscores.tsv"
        threads: 1
        conda:
            "../../envs/data.yaml"
        script:
            "../../src/scripts/george_thesis_ch5_bin_cscores.py"

    rule george_thesis_ch5_init_difficulty:
        # θ₀ of an architecture and seed, read by every α of that seed (the generic init script)
        input:
            code=lambda w: script_code("init_model.py", DIFFICULTY["architectures"][w.architecture]),
        output:
            f"{DIFFICULTY_RUNS}/init/{{architecture}}_seed{{seed}}.pt",
        params:
            spec=lambda w: canonical({"model": DIFFICULTY["architectures"][w.architecture]["model"],
                                      "seed": int(w.seed)}),
        log:
            "results/logs/george_thesis/ch5/difficulty/init/{architecture}_seed{seed}.log",
        wildcard_constraints:
            architecture=alternatives(DIFFICULTY["architectures"]),
            seed=r"\d+",
        threads: 1
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/init_model.py"

    rule george_thesis_ch5_run_difficulty:
        input:
            # the C-score deciles (C-score runs); the run whose iterations cap this one (the lr sweep)
            unpack(lambda w: {"cscores": cscores_path(".npz")} if w.experiment == "cscore" else {}),
            unpack(lambda w: {"cap": run_path(cap, ".json")} if (
                cap := cap_run(DIFFICULTY, DIFFICULTY_BY_KEY[(w.experiment, w.architecture, w.setting, int(w.seed))]))
                else {}),
            data=paths.prepared(DIFFICULTY["dataset"]),
            init=lambda w: init_path(w.architecture, int(w.seed)),
            code=lambda w: script_code("george_thesis_ch5_run_difficulty.py",
                                       DIFFICULTY["architectures"][w.architecture]),
        output:
            log_points=f"{DIFFICULTY_RUNS}/{{experiment}}/{{architecture}}/{{setting}}/seed{{seed}}.csv",
            summary=f"{DIFFICULTY_RUNS}/{{experiment}}/{{architecture}}/{{setting}}/seed{{seed}}.json",
        params:
            run=lambda w: canonical(run_settings(
                DIFFICULTY, DIFFICULTY_BY_KEY[(w.experiment, w.architecture, w.setting, int(w.seed))])),
            device=config["device"],
            # the run's resumable state while it trains (not an output: it survives a killed job)
            state=lambda w: f"{CH5_STATE}/difficulty/{w.experiment}/{w.architecture}/{w.setting}/seed{w.seed}.pt",
        log:
            "results/logs/george_thesis/ch5/difficulty/{experiment}/{architecture}/{setting}/seed{seed}.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch5/difficulty/{experiment}/{architecture}/{setting}/seed{seed}.tsv"
        wildcard_constraints:
            experiment="cscore|noisy",
            architecture=alternatives({key[1] for key in DIFFICULTY_BY_KEY}),
            setting=alternatives({key[2] for key in DIFFICULTY_BY_KEY}),
            seed=r"\d+",
        threads: threads_for("train")
        resources:
            **job_resources("long_training", device=True),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch5_run_difficulty.py"

    rule george_thesis_ch5_difficulty_runs:
        # every run of Figs 5.2 and C.1-C.6 (the figures and claims come from the manifest)
        input:
            [run_path(run, suffix) for run in difficulty_runs(DIFFICULTY) for suffix in (".csv", ".json")],
            cscores_path(".csv"),



# --- Figs 5.3, C.7, C.8: spurious correlations ---

SPURIOUS = GEORGE_CH5.get("spurious")

if SPURIOUS:
    from linearlens.analysis.george_thesis.ch5 import SPURIOUS_RUNS, alpha_name, check_spurious_spec, spurious_run_settings
    from linearlens.data.spurious import IMAGE_ARCHIVES

    check_spurious_spec(SPURIOUS)
    SPURIOUS_SETTINGS = {family: spurious_run_settings(SPURIOUS, family) for family in SPURIOUS["families"]}
    SPURIOUS_ALPHAS = sorted(SPURIOUS["alphas"], key=float)
    # Per family: the archive of an image-index dataset's photos and the prepared pretrained weights, if any.
    SPURIOUS_SOURCES = {family: DATASETS[s["dataset"]]["source"] for family, s in SPURIOUS_SETTINGS.items()}
    SPURIOUS_SIDE_INPUTS = {
        family: {
            **({"archive": str(RAW_DIR / source / IMAGE_ARCHIVES[source])} if source in IMAGE_ARCHIVES else {}),
            **({"weights": paths.prepared(SPURIOUS_SETTINGS[family]["pretrained"])}
               if SPURIOUS_SETTINGS[family].get("pretrained") else {}),
        }
        for family, source in SPURIOUS_SOURCES.items()
    }

    rule george_thesis_ch5_run_spurious:
        input:
            unpack(lambda w: SPURIOUS_SIDE_INPUTS[w.family]),
            data=lambda w: paths.prepared(SPURIOUS_SETTINGS[w.family]["dataset"]),
            code=lambda w: script_code("george_thesis_ch5_run_spurious.py", SPURIOUS_SETTINGS[w.family]),
        output:
            rows=expand(f"{SPURIOUS_RUNS}/{{{{family}}}}/seed{{{{seed}}}}/alpha{{alpha}}.csv",
                        alpha=[alpha_name(a) for a in SPURIOUS_ALPHAS]),
            summaries=expand(f"{SPURIOUS_RUNS}/{{{{family}}}}/seed{{{{seed}}}}/alpha{{alpha}}.json",
                             alpha=[alpha_name(a) for a in SPURIOUS_ALPHAS]),
        params:
            run=lambda w: canonical(SPURIOUS_SETTINGS[w.family]),
            alphas=[float(a) for a in SPURIOUS_ALPHAS],
            device=config["device"],
            # the runs' resumable states while they train (not outputs: they survive a killed job)
            state=lambda w: f"{CH5_STATE}/spurious/{w.family}/seed{w.seed}",
        log:
            "results/logs/george_thesis/ch5/spurious/{family}/seed{seed}.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch5/spurious/{family}/seed{seed}.tsv"
        wildcard_constraints:
            family=alternatives(SPURIOUS["families"]),
            seed=alternatives(SPURIOUS["seeds"]),
        threads: threads_for("train")
        resources:
            **job_resources("long_training", device=True),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch5_run_spurious.py"
