"""Rule george_thesis_ch5_run_spurious: the runs of Fig 5.3 (and C.7, C.8) for one family (the
CelebA or the Waterbirds row) and one seed: every α from one θ₀, each with its log of accuracies
and losses on the balanced subsets (with and without the spurious feature) and its summary."""

import json

from linearlens.experiments.george_thesis.ch5 import forget_finished, spurious_seed_runs, spurious_task
from linearlens.train.devices import claim_device
from linearlens.train.runtime import choose_device, set_threads
from linearlens.workflow import inputs_version, logged_job

with logged_job(snakemake) as log:
    device = claim_device(snakemake.params.device, snakemake.rule)
    set_threads(snakemake.threads)
    settings, alphas, seed = snakemake.params.run, snakemake.params.alphas, int(snakemake.wildcards.seed)
    weights = snakemake.input.get("weights")  # a prepared weights dataset (checksummed by its preparation)
    device = choose_device(device)
    task = spurious_task(snakemake.input.data, settings, device, snakemake.input.get("archive"))
    log.info("task: %s", task.counts)
    results = spurious_seed_runs(task, settings, alphas, seed, device, weights, snakemake.params.state,
                                 inputs_version(snakemake.input))
    for (alpha, (rows, summary)), csv, summary_path in zip(results.items(), snakemake.output.rows,
                                                           snakemake.output.summaries):
        rows.to_csv(csv, index=False)
        with open(summary_path, "w") as handle:
            json.dump(summary, handle, indent=2)
        last = rows.iloc[-1]
        log.info("alpha %g: %s after %d steps (%.1f epochs, %s); balanced test accuracy %.3f (with %.3f, "
                 "without %.3f)", alpha, summary["ended"], summary["steps"], summary["epochs"],
                 summary["stop_reason"] or "no stop", last.balanced_test_accuracy,
                 last.balanced_test_with_accuracy, last.balanced_test_without_accuracy)
    forget_finished(snakemake.params.state, alphas)
