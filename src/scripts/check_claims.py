"""Rule <document>_claims, generated from the manifest: every configured claim set of the document
checked on this scale's runs, in the manifest's order, into one claims file."""

import importlib

from linearlens.claims import write_claims
from linearlens.manifests.jobs import ClaimsJob
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    checks = []
    for claim_set in snakemake.params.claim_sets:
        module, function = claim_set["function"].split(":")
        inputs = {name: list(snakemake.input[key]) for name, key in claim_set["inputs"].items()}
        job = ClaimsJob(inputs, claim_set["params"], log)
        checks += getattr(importlib.import_module(module), function)(job)
    write_claims(snakemake.output[0], snakemake.params.document, snakemake.params.scale, checks)
    failed = [c for c in checks if c.passed is False]
    log.info("%d checks, %d failed: %s", len(checks), len(failed),
             "; ".join(f"{c.claim_id} {c.statement} (measured {c.measured})" for c in failed))
