"""Rule telescoping_claims: the paper's claims checked on this scale's runs."""

import pandas as pd

from linearlens.claims import write_claims
from linearlens.claims.telescoping import (approximation_checks, double_descent_checks, grokking_checks,
                                          lmc_checks, tabular_checks)
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    experiments = snakemake.params.experiments  # noqa: F821
    checks = []
    if "approximation" in experiments:
        runs = pd.concat([pd.read_csv(path) for path in snakemake.input.approximation])  # noqa: F821
        checks += approximation_checks(runs, experiments["approximation"]["settings"])
    if "grokking" in experiments:
        runs = pd.concat([pd.read_csv(path) for path in snakemake.input.grokking])  # noqa: F821
        families = {family: {setting: frame for setting, frame in by_family.groupby("setting")}
                    for family, by_family in runs.groupby("family")}
        checks += grokking_checks(families, experiments["grokking"])
    if "double_descent" in experiments:
        runs = pd.concat([pd.read_csv(path) for path in snakemake.input.double_descent])  # noqa: F821
        checks += double_descent_checks(dict(tuple(runs.groupby("family", sort=False))))
    if "tabular" in experiments:
        runs = pd.concat([pd.read_csv(path) for path in snakemake.input.tabular])  # noqa: F821
        checks += tabular_checks(runs, experiments["tabular"]["panels"])
    if "lmc" in experiments:
        children = pd.concat([pd.read_csv(path) for path in snakemake.input.lmc])  # noqa: F821
        changes = pd.concat([pd.read_csv(path) for path in snakemake.input.gradient_changes])  # noqa: F821
        checks += lmc_checks(children, changes)
    write_claims(snakemake.output[0], "telescoping", snakemake.params.scale, checks)  # noqa: F821
    failed = [c for c in checks if c.passed is False]
    log.info("%d checks, %d failed: %s", len(checks), len(failed),
             "; ".join(f"{c.claim_id} {c.statement} (measured {c.measured})" for c in failed))
