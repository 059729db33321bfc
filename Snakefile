# linearlens: every figure and table of four papers on linearised views of deep networks.
# Quick offline scale by default; --configfile config/paper.yaml for the papers' own setups.
from snakemake.utils import min_version

min_version("9.0")


# The configuration is composed in rules/common.smk: config/base.yaml, the scale's overlay (quick
# unless a --configfile or --config names another `scale:`), the user's own files, --config values.


report: "rules/report/workflow.rst"


include: "rules/common.smk"
include: "rules/datasets.smk"
include: "rules/rehearsal.smk"
include: "rules/kernels.smk"
include: "rules/manifests.smk"
include: "rules/families.smk"
include: "rules/george_thesis/ch2.smk"
include: "rules/george_thesis/ch5.smk"
include: "rules/karp_thesis/ch3.smk"
include: "rules/karp_thesis/ch5.smk"
include: "rules/report.smk"
include: "rules/plan.smk"


rule all:
    default_target: True
    input:
        [paper_outputs(paper) for paper in PAPERS],
        kernel_outputs(),
        rules.report.output,


rule paper_telescoping:
    input:
        paper_outputs("telescoping"),


rule paper_iterative_linearisation:
    input:
        paper_outputs("iterative_linearisation"),


rule paper_george_thesis:
    input:
        paper_outputs("george_thesis"),


rule paper_karp_thesis:
    input:
        paper_outputs("karp_thesis"),


# Opt-in: what needs inputs the workflow cannot make (at paper scale the thesis's unreleased BERT
# and UL2 checkpoints, and Table C.1's evaluation sets); without them its jobs say what is missing.
rule paper_karp_thesis_unreleased:
    input:
        UNRELEASED["karp_thesis"],


# The rehearsal of the paper path (`make rehearse`: config/paper.yaml with config/rehearsal.yaml over
# it, in its own working directory): everything the paper configuration builds, and the opt-in
# target too (generated checkpoints stand in for the unreleased ones) but for Table C.1's scores,
# which no harness here makes.
rule rehearse:
    input:
        rules.all.input,
        [output for output in UNRELEASED["karp_thesis"] if output != KARP_CH5_DOWNSTREAM_SCORES],
