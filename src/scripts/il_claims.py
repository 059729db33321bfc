"""Rule il_claims: the paper's claims C1-C13 checked on this scale's runs."""

import json

import pandas as pd

from linearlens.claims import write_claims
from linearlens.claims import iterative_linearisation as claims
from linearlens.experiments.iterative_linearisation import first_layer_changes
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    config, inputs = snakemake.params.config, snakemake.input  # noqa: F821
    limits = claims.THRESHOLDS[config["claim_thresholds"]]
    runs = pd.concat([pd.read_csv(path, dtype={"K": str}) for path in inputs.runs]) if inputs.runs else pd.DataFrame()
    by_experiment = dict(tuple(runs.groupby("experiment"))) if len(runs) else {}
    checks = []
    if "full_batch" in by_experiment:
        checks += claims.finite_k_checks(by_experiment["full_batch"], "C1", "full batch", limits)
    if "mini_batch" in by_experiment:
        checks += claims.finite_k_checks(by_experiment["mini_batch"], "C2", "mini-batch", limits)
    if {"full_batch", "mini_batch"} <= set(by_experiment):
        checks += claims.batch_mode_checks(by_experiment["full_batch"], by_experiment["mini_batch"], limits)
    if "augmented" in by_experiment:
        checks += claims.augmented_checks(by_experiment["augmented"], limits)
    if {"resnet_no_bn", "resnet_bn"} <= set(by_experiment):
        checks += claims.resnet_checks({"without BatchNorm": by_experiment["resnet_no_bn"],
                                        "with BatchNorm": by_experiment["resnet_bn"]}, limits)
    if "data_scaling" in by_experiment:
        checks += claims.scaling_checks(by_experiment["data_scaling"], limits)
    if inputs.probes:
        probes = pd.concat([pd.read_csv(path, dtype={"K": str}) for path in inputs.probes])
        checks += claims.probe_checks(probes, limits)
    if inputs.checkpoints:
        changes, _ = first_layer_changes(inputs.checkpoints, config["filters"].get("seed", 0))
        checks += claims.filter_checks(changes, config["filters"]["n_filters"], limits)
    if "adam" in by_experiment:
        checks += claims.adam_checks(by_experiment["adam"], limits)
    if inputs.damping:
        summary = pd.concat([pd.read_csv(path) for path in inputs.damping])
        checks += claims.damping_checks(summary, config["damping"]["drawn"]["dampings"],
                                        config["damping"]["train_rmse_limit"])
    if inputs.identity:
        identity = json.loads(open(inputs.identity[0]).read())
        checks += claims.identity_checks(identity["max_abs_difference"], identity["steps"], limits)
    if len(runs):
        checks += claims.best_accuracy_check(runs, limits)
    write_claims(snakemake.output[0], "iterative_linearisation", snakemake.params.scale, checks)  # noqa: F821
    failed = [c for c in checks if c.passed is False]
    log.info("%d checks, %d failed: %s", len(checks), len(failed),
             "; ".join(f"{c.claim_id} {c.statement} (measured {c.measured})" for c in failed))
