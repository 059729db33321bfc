# George thesis, chapter 5 and appendix C: the run, plot and claim rules of its figures
# (src/linearlens/manifests/george_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: george_thesis_ch5_<verb>.

GEORGE_CH5 = config.get("george_thesis", {}).get("ch5") or {}
CH5_STATE = "results/george_thesis/state/ch5"


# --- Fig 5.1: the yin-yang toy, α = 1 vs α = 100, Δloss maps at loss thresholds ---


# --- Figs 5.4, C.9: the quadratic model in closed form, and a 2-layer linear MLP on its datasets ---


# --- Figs 5.2, C.1-C.6: α-scaled runs on C-score groups and noisy labels, linearity metrics ---


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
            **({"weights": prepared(SPURIOUS_SETTINGS[family]["pretrained"])}
               if SPURIOUS_SETTINGS[family].get("pretrained") else {}),
        }
        for family, source in SPURIOUS_SOURCES.items()
    }

    rule george_thesis_ch5_run_spurious:
        input:
            unpack(lambda w: SPURIOUS_SIDE_INPUTS[w.family]),
            data=lambda w: prepared(SPURIOUS_SETTINGS[w.family]["dataset"]),
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
            **gpu_resources(),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch5_run_spurious.py"
