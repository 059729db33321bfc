# Iterative linearisation (Goldwaser & Ge, both versions): one rule per kind of run, one file per run.
# Its figures (numbered as in the longer version, the shorter version's numbers in each caption) and
# claims are generated from its manifest (src/linearlens/manifests/iterative_linearisation.py,
# rules/manifests.smk); its probe and damping runs are families (manifests/iterative_linearisation_runs.py)
# generated in rules/families.smk. Experiments present in the config are built; the others are skipped.


rule iterative_linearisation_run:
    input:
        data=lambda w: paths.prepared(IL_EXPERIMENTS[w.experiment]["dataset"]),
        code=lambda w: script_code("iterative_linearisation_run.py", IL_RUNS[(w.experiment, w.setting)]),
    output:
        records="results/iterative_linearisation/runs/{experiment}/{setting}/seed{seed}.csv",
        checkpoints="results/iterative_linearisation/runs/{experiment}/{setting}/seed{seed}.pt",
    params:
        # the run's resumable state while it trains (not an output: it survives a killed job)
        run=lambda w: canonical({**IL_RUNS[(w.experiment, w.setting)], "device": config["device"]}),
        state=lambda w: f"results/iterative_linearisation/state/{w.experiment}/{w.setting}/seed{w.seed}.pt",
    log:
        "results/logs/iterative_linearisation/{experiment}/{setting}/seed{seed}.log",
    benchmark:
        "results/benchmarks/rules/iterative_linearisation/{experiment}/{setting}/seed{seed}.tsv"
    wildcard_constraints:
        experiment=alternatives(IL_EXPERIMENTS),
        setting=alternatives({setting for _, setting in IL_RUNS}),
        seed=r"\d+",
    threads: threads_for("train")
    resources:
        **job_resources("training", device=True),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/iterative_linearisation_run.py"


rule iterative_linearisation_k1_identity:
    input:
        data=lambda w: paths.prepared(IL["identity_check"]["dataset"]),
        code=script_code("iterative_linearisation_k1_identity.py", IL.get("identity_check")),
    output:
        "results/iterative_linearisation/runs/identity/k1_vs_ordinary.json",
    params:
        check=canonical(IL.get("identity_check")),
    log:
        "results/logs/iterative_linearisation/identity.log",
    threads: 1
    resources:
        **job_resources("training"),
    conda:
        "../envs/torch.yaml"
    script:
        "../src/scripts/iterative_linearisation_k1_identity.py"
