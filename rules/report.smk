# The HTML report (results/report/index.html): every figure that the configured papers produce,
# with captions, data provenance and claim verdicts. `snakemake --report` collects the same.


rule report:
    input:
        datasets=[f"results/data/{name}.json" for name in DATASETS],
        figures=report_figures(),
        claims=report_claims(),
        code=lib_code("report", "claims"),
        template="src/linearlens/templates/report.html.j2",
    output:
        html=report(
            "results/report/index.html",
            caption="report/index.rst",
            category="Overview",
        ),
    params:
        papers=PAPERS,
        figures=FIGURES,
        claims=CLAIMS,
        scale=config["scale"],
    log:
        "results/logs/report/report.log",
    localrule: True
    threads: 1
    conda:
        "../envs/report.yaml"
    script:
        "../src/scripts/build_report.py"
