# The HTML report (paths.report("index.html")): a summary of the run, then every figure and table
# the four documents list, in their order: built ones with caption, data provenance and claim
# verdicts, the others with why they are not built. `snakemake --report` collects the same page.
from linearlens.report import config_digest, document_inventory

# Per document, in report order: its title and every manifest entry with the status this
# configuration gives it (built, not configured at this scale, not built yet, illustrative).
REPORT_DOCUMENTS = [
    document_inventory(document, MANIFESTS[document].TITLE, unreleased_noted(document),
                       released(document, FIGURES[document] + TABLES[document]))
    for document in PAPERS
]


rule report:
    input:
        datasets=[paths.provenance(name) for name in released_datasets()],
        figures=report_figures(),
        tables=[table for tables in TABLES.values() for table in tables],
        claims=report_claims(),
        code=script_code("build_report.py"),
        template=os.path.relpath(SRC / "linearlens" / "templates" / "report.html.j2"),
    output:
        html=report(
            paths.report("index.html"),
            caption="report/index.rst",
            category="Overview",
        ),
        # The fidelity table alone, as Markdown: the README quotes it.
        fidelity=paths.report("fidelity.md"),
    params:
        documents=canonical(REPORT_DOCUMENTS),
        claims=canonical(CLAIMS),
        scale=config["scale"],
        # The commit, wall time and job time are read by the job itself: a new commit alone
        # reruns nothing.
        config_digest=config_digest(config),
    log:
        paths.log("report", "report"),
    localrule: True
    threads: 1
    conda:
        "../envs/report.yaml"
    script:
        "../src/scripts/build_report.py"
