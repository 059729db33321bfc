# Karp thesis, chapter 2 and appendix A: the run, plot and claim rules of its figures and
# tables (src/linearlens/manifests/karp_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: karp_thesis_ch2_<verb>.

KARP_CH2 = config.get("karp_thesis", {}).get("ch2")

if KARP_CH2:
    from linearlens.analysis.karp_thesis.ch2 import (
        RUNS as KARP_CH2_RUNS,
        STATE as KARP_CH2_STATE,
        block_pairs,
        configurations,
        interpolated,
        kept_groups,
        kept_sizes,
        pair_states_paths,
        parse_run,
        run_name,
        size_groups,
        sweep_groups,
        sweep_settings,
        training_settings,
    )

    KARP_CH2_CONFIGURATIONS = configurations(KARP_CH2)
    # Every (configuration, trial, group of sizes) as "<configuration>/trial<t>/m<m>[-<m>…]", split by
    # whether the group keeps its members' states at the main snapshot (mode connectivity): a rule
    # each, so that a job's outputs follow from its path.
    KARP_CH2_PAIR_RUNS = {
        kept: [run_name(name, trial, group) for name, settings in KARP_CH2_CONFIGURATIONS.items()
               for trial in settings["trials"] for group in size_groups(settings)
               if (group in kept_groups(settings)) == kept]
        for kept in (False, True)
    }

    for kept in (False, True):

        rule:
            # one block of pairs (S, S′) of one trial at each size of a group, trained in lockstep to the
            # last snapshot
            name:
                "karp_thesis_ch2_train_kept_pairs" if kept else "karp_thesis_ch2_train_pairs"
            input:
                data=lambda w: paths.prepared(KARP_CH2_CONFIGURATIONS[parse_run(w.run)[0]]["dataset"]),
                code=lambda w: script_code("karp_thesis_ch2_train_pairs.py",
                                           KARP_CH2_CONFIGURATIONS[parse_run(w.run)[0]]["model"]),
            output:
                rows=f"{KARP_CH2_RUNS}/pairs/{{run}}/block{{block}}.csv",
                **({"states": f"{KARP_CH2_RUNS}/pairs/{{run}}/block{{block}}_states.pt"} if kept else {}),
            params:
                settings=lambda w: canonical(training_settings(KARP_CH2, parse_run(w.run)[0])),
                pairs=lambda w: block_pairs(KARP_CH2_CONFIGURATIONS[parse_run(w.run)[0]], int(w.block)),
                device=config["device"],
                # the run's resumable state while it trains (not an output: it survives a killed job)
                keep_sizes=lambda w: kept_sizes(KARP_CH2_CONFIGURATIONS[parse_run(w.run)[0]]),
                # the run's configuration, trial and sizes, parsed here so that the job's code stays the training code
                run=lambda w: list(parse_run(w.run)),
                state=lambda w: f"{KARP_CH2_STATE}/pairs/{w.run}/block{w.block}.pt",
            log:
                f"results/logs/karp_thesis/ch2/pairs/{{run}}/block{{block}}.log",
            benchmark:
                f"results/benchmarks/rules/karp_thesis/ch2/pairs/{{run}}/block{{block}}.tsv"
            wildcard_constraints:
                run=alternatives(KARP_CH2_PAIR_RUNS[kept]),
                block=r"\d+",
            threads: threads_for("train")
            resources:
                **gpu_resources(),
            conda:
                "../../envs/torch.yaml"
            script:
                "../../src/scripts/karp_thesis_ch2_train_pairs.py"

    if sweep_settings(KARP_CH2):
        KARP_CH2_SWEEP = sweep_settings(KARP_CH2)

        rule karp_thesis_ch2_train_sweep:
            # Fig A.1: A(S) alone for the sweep's samples at sizes the pair runs do not have
            input:
                data=paths.prepared(KARP_CH2_CONFIGURATIONS[KARP_CH2_SWEEP["configuration"]]["dataset"]),
                code=script_code("karp_thesis_ch2_train_sweep.py",
                                 KARP_CH2_CONFIGURATIONS[KARP_CH2_SWEEP["configuration"]]["model"]),
            output:
                f"{KARP_CH2_RUNS}/sweep/{{run}}.csv",
            params:
                settings=canonical(training_settings(KARP_CH2, KARP_CH2_SWEEP["configuration"])),
                samples=KARP_CH2_SWEEP["samples"],
                run=lambda w: list(parse_run(w.run)),
                device=config["device"],
                state=f"{KARP_CH2_STATE}/sweep/{{run}}.pt",
            log:
                "results/logs/karp_thesis/ch2/sweep/{run}.log",
            benchmark:
                "results/benchmarks/rules/karp_thesis/ch2/sweep/{run}.tsv"
            wildcard_constraints:
                run=alternatives([run_name(KARP_CH2_SWEEP["configuration"], KARP_CH2_SWEEP["trial"], group)
                                  for group in sweep_groups(KARP_CH2)]),
            threads: threads_for("train")
            resources:
                **gpu_resources(),
            conda:
                "../../envs/torch.yaml"
            script:
                "../../src/scripts/karp_thesis_ch2_train_sweep.py"

    if KARP_CH2.get("interpolation") and interpolated(KARP_CH2):

        rule karp_thesis_ch2_interpolate:
            # linear mode connectivity of the pairs kept at every kept size of one trial (Figs 2.4, A.14, A.15)
            input:
                states=lambda w: pair_states_paths(KARP_CH2, w.configuration, int(w.trial)),
                data=lambda w: paths.prepared(KARP_CH2_CONFIGURATIONS[w.configuration]["dataset"]),
                code=lambda w: script_code("karp_thesis_ch2_interpolate.py",
                                           KARP_CH2_CONFIGURATIONS[w.configuration]["model"]),
            output:
                f"{KARP_CH2_RUNS}/interpolation/{{configuration}}/trial{{trial}}.csv",
            params:
                settings=lambda w: canonical(training_settings(KARP_CH2, w.configuration)),
                interpolation=canonical(KARP_CH2["interpolation"]),
                device=config["device"],
            log:
                "results/logs/karp_thesis/ch2/interpolation/{configuration}/trial{trial}.log",
            benchmark:
                "results/benchmarks/rules/karp_thesis/ch2/interpolation/{configuration}/trial{trial}.tsv"
            wildcard_constraints:
                configuration=alternatives({name for name, _ in interpolated(KARP_CH2)}),
                trial=r"\d+",
            threads: threads_for("train")
            resources:
                **gpu_resources(),
            conda:
                "../../envs/torch.yaml"
            script:
                "../../src/scripts/karp_thesis_ch2_interpolate.py"


rule karp_thesis_ch2:
    # The chapter's target: every figure and table of chapter 2 and appendix A this config builds,
    # and the thesis's claims file (which checks them).
    input:
        [entry.path("karp_thesis") for entry in built_entries("karp_thesis")
         if entry.id.split("_")[1] in ("2", "A")],
        [CLAIMS["karp_thesis"]] if CLAIMS["karp_thesis"] else [],
