# George thesis, chapter 6 and appendix B: the run, plot and claim rules of its figures
# (src/linearlens/manifests/george_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: george_thesis_ch6_<verb>.

GEORGE_CH6 = config.get("george_thesis", {}).get("ch6") or {}


# --- Figs 6.2, 6.3, B.5, B.6, B.8: the tangent kernel's spectrum and its alignment with the labels over training (alignment) ---

# --- end of alignment ---

# --- Figs 6.4, B.7: alignment on easy vs difficult examples (easy_difficult) ---

# --- end of easy_difficult ---

# --- Figs 6.1, B.4: eigenfunctions of the tangent kernel on the disk task (disk) ---

if "disk" in GEORGE_CH6:

    rule george_thesis_ch6_run_disk:
        input:
            data=prepared(GEORGE_CH6["disk"]["dataset"]),
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

# --- end of disk ---

# --- Fig B.2: spectral bias of a random MLP's tangent kernel (spectral_bias) ---

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

# --- end of spectral_bias ---

# --- Fig 6.5: SuperNat vs gradient descent on noisy linear regression (supernat) ---

# --- end of supernat ---

# --- Fig B.3: which norm measures capacity (random RBF features) (rbf_capacity) ---

# --- end of rbf_capacity ---

# --- Fig B.1: output change along the Jacobian's top singular directions (perturbation) ---

# --- end of perturbation ---

# --- Fig 6.6: complexity measures against the generalisation gap (complexity) ---

# --- end of complexity ---
