"""Rule karp_thesis_ch5_evaluate_downstream: Table C.1's 1-shot evaluations of the UL2 picks. Not
reproducible offline: it names the evaluation sets and the harness it needs (it writes nothing)."""

from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    spec = snakemake.params.spec
    raise NotImplementedError(
        "Table C.1 scores the grown UL2 models picked by each strategy (oracle, LAG@2000, LAG@0, stack last, "
        f"stack random) on {'; '.join(spec['tasks'])}. It needs those evaluation sets, which are not shipped "
        f"or downloaded here, and {spec['harness']}; linearlens has neither, so the table is listed as not "
        "reproducible offline.")
