# George thesis, chapter 2: the run, plot and claim rules of its figures
# (src/linearlens/manifests/george_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: george_thesis_ch2_<verb>.

from linearlens.manifests.george_thesis import GAUSSIANS_PATH

GEORGE_CH2 = config.get("george_thesis", {}).get("ch2") or {}


# --- Fig 2.1: four normal distributions, equally far apart in parameters (closed form) ---

if "gaussians" in GEORGE_CH2:

    rule george_thesis_ch2_run_gaussians:
        input:
            code=script_code("george_thesis_ch2_run_gaussians.py"),
        output:
            GAUSSIANS_PATH,
        params:
            spec=canonical(GEORGE_CH2["gaussians"]),
        log:
            paths.log_of(GAUSSIANS_PATH),
        # closed forms on 1,000 points: well under a second
        threads: 1
        conda:
            "../../envs/data.yaml"
        script:
            "../../src/scripts/george_thesis_ch2_run_gaussians.py"
