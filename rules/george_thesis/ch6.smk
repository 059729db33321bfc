# George thesis, chapter 6 and appendix B: the run, plot and claim rules of its figures
# (src/linearlens/manifests/george_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: george_thesis_ch6_<verb>.

GEORGE_CH6 = config.get("george_thesis", {}).get("ch6") or {}


# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and its alignment with the labels over training (alignment) ---

# --- end of alignment ---

# --- Figs 6.4, B.7: alignment on easy vs difficult examples (easy_difficult) ---

# --- end of easy_difficult ---

# --- Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task (disk) ---

# --- end of disk ---

# --- Fig B.2: spectral bias of a random MLP's tangent kernel (spectral_bias) ---

# --- end of spectral_bias ---

# --- Fig 6.5: SuperNat vs gradient descent on noisy linear regression (supernat) ---

# --- end of supernat ---

# --- Fig B.3: which norm measures capacity (random RBF features) (rbf_capacity) ---

# --- end of rbf_capacity ---

# --- Fig B.1: output change along the Jacobian's top singular directions (perturbation) ---

# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

if "complexity" in GEORGE_CH6:
    from linearlens.analysis.george_thesis.ch6 import complexity_run_specs

    COMPLEXITY_RUNS = complexity_run_specs(GEORGE_CH6["complexity"])  # {run: spec}; shared runs once

    rule george_thesis_ch6_run_complexity:
        input:
            data=lambda w: prepared(COMPLEXITY_RUNS[w.run]["dataset"]),
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

# --- end of complexity ---
