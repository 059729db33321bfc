# George thesis, chapter 3: the run, plot and claim rules of its figures
# (src/linearlens/manifests/george_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: george_thesis_ch3_<verb>.

GEORGE_CH3 = config.get("george_thesis", {}).get("ch3") or {}


# --- Figs 3.3-3.7: the experimental showcase (§3.4), one training run and its checkpoints ---

SHOWCASE = GEORGE_CH3.get("showcase")

if SHOWCASE:
    from linearlens.analysis.george_thesis.ch3 import (
        checkpoint_path,
        fisher_quality_path,
        fisher_quality_spec,
        ntk_pair_path,
        ntk_pair_spec,
        training_record_path,
        training_spec,
    )

    rule george_thesis_ch3_train:
        # one run; the network's state at each chosen epoch (0: the initialisation)
        input:
            data=paths.prepared(SHOWCASE["dataset"]),
            code=script_code("george_thesis_ch3_train.py", SHOWCASE),
        output:
            checkpoints=[checkpoint_path(epoch) for epoch in SHOWCASE["checkpoints"]],
            record=training_record_path(),
        params:
            spec=canonical(training_spec(SHOWCASE)),
            device=config["device"],
            # the run's resumable state while it trains (not an output: it survives a killed job)
            state="results/george_thesis/state/ch3/showcase.pt",
        log:
            "results/logs/george_thesis/ch3/showcase/train.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch3/showcase/train.tsv"
        threads: threads_for("train")
        resources:
            **job_resources("long_training", device=True),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch3_train.py"

    rule george_thesis_ch3_fisher_quality:
        # Figs 3.3-3.6 at one checkpoint: every approximation against the Monte-Carlo FIM
        input:
            checkpoint=checkpoint_path("{epoch}"),
            data=paths.prepared(SHOWCASE["dataset"]),
            code=script_code("george_thesis_ch3_fisher_quality.py", SHOWCASE),
        output:
            fisher_quality_path("{epoch}"),
        params:
            spec=canonical(fisher_quality_spec(SHOWCASE)),
            device=config["device"],
        log:
            "results/logs/george_thesis/ch3/showcase/fisher_quality_epoch{epoch}.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch3/showcase/fisher_quality_epoch{epoch}.tsv"
        wildcard_constraints:
            epoch=alternatives(SHOWCASE["checkpoints"]),
        threads: threads_for("train")
        resources:
            **job_resources("long_training", device=True),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch3_fisher_quality.py"

    rule george_thesis_ch3_ntk_pair:
        # Fig 3.7 at one checkpoint: the NTK Gram of f[c2] − f[c1] on test examples of c1 and c2
        input:
            checkpoint=checkpoint_path("{epoch}"),
            data=paths.prepared(SHOWCASE["dataset"]),
            code=script_code("george_thesis_ch3_ntk_pair.py", SHOWCASE),
        output:
            ntk_pair_path("{epoch}"),
        params:
            spec=canonical(ntk_pair_spec(SHOWCASE)),
            device=config["device"],
        log:
            "results/logs/george_thesis/ch3/showcase/ntk_pair_epoch{epoch}.log",
        benchmark:
            "results/benchmarks/rules/george_thesis/ch3/showcase/ntk_pair_epoch{epoch}.tsv"
        wildcard_constraints:
            epoch=alternatives(SHOWCASE["checkpoints"]),
        threads: threads_for("train")
        resources:
            **job_resources("long_training", device=True),
        conda:
            "../../envs/torch.yaml"
        script:
            "../../src/scripts/george_thesis_ch3_ntk_pair.py"
