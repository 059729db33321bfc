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

# --- end of supernat ---

# --- Fig B.3: which norm measures capacity (random RBF features) (rbf_capacity) ---

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

# --- end of rbf_capacity ---

# --- Fig B.1: output change along the Jacobian's top singular directions (perturbation) ---

# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

# --- end of complexity ---
