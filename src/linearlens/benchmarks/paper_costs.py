"""What paper_plan knows of the paper DAG's GPU cost before anything is measured: how the device
rules split into run families, and each family's GPU-hour estimate with where it comes from.

A family is a rule, or a rule and the value of one wildcard where a rule holds runs of different
cost (George ch. 4's autoencoder, VGG and ResNet searches). Estimates are GPU-hours, a low and a
high, per job or for the whole family; ``rehearse_gpu``'s measured step times replace them
(``benchmarks.plan``). A device family missing here is shown without an estimate, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# rule: (the wildcard whose value names the family, the part of that value that does)
FAMILY_WILDCARDS: dict[str, tuple[str, str]] = {
    "download_file": ("source", r".*"),
    "fetch_openml": ("dataset_id", r".*"),
    "telescoping_smoother_run": ("family", r".*"),
    "telescoping_lmc_children": ("branch", r".*"),
    "iterative_linearisation_run": ("experiment", r".*"),
    "george_thesis_ch4_run_search": ("group", r".*"),
    "george_thesis_ch5_run_difficulty": ("experiment", r".*"),
    "george_thesis_ch6_run_alignment": ("family", r".*"),
    "george_thesis_ch6_run_complexity": ("run", r"[a-z0-9]+_[a-z]+"),  # cifar10_vgg, mnist_mlp
    "karp_thesis_ch2_train_pairs": ("run", r"[^/]+"),  # the configuration: lr, 1a, 2a, 2b
    "karp_thesis_ch3_run_images": ("model", r".*"),
    "karp_thesis_ch5_grow": ("setting", r".*"),
}


def family_group(rule: str, wildcards: dict[str, str]) -> str:
    """The group a job of ``rule`` belongs to ("" where the rule is one family)."""
    if rule not in FAMILY_WILDCARDS:
        return ""
    wildcard, pattern = FAMILY_WILDCARDS[rule]
    return re.match(pattern, wildcards[wildcard])[0]


@dataclass(frozen=True)
class Estimate:
    hours: tuple[float, float]  # GPU-hours, low and high
    per_job: bool               # per job of the family, else for the whole family
    source: str                 # where the number comes from


TELESCOPING = "spec telescoping §4.1 (A100-class)"
IL = "spec iterative linearisation §4.1 (one H100)"
GEORGE = "spec George §4.1 (one H100, not measured)"
KARP = "spec Karp §6.1 (H100)"
SLURM = "profiles/slurm/config.yaml"
LMC_RUNS = 399  # Fig 6's LMC runs at paper scale: 3 pretrains, 216 random and 180 fine-tuned children

# (rule, group): estimate
ESTIMATES: dict[tuple[str, str], Estimate] = {
    ("telescoping_approximation_run", ""): Estimate((0.25, 0.25), True, f"{TELESCOPING}: paper ≈15 min a run"),
    **{("telescoping_smoother_run", family): Estimate((36 / 22, 36 / 22), True,
                                                      f"{TELESCOPING}: ≈36 h per (setting, seed) of 22 widths")
       for family in ("dd_cifar_catdog", "dd_mnist1d", "dd_mnist_clean", "dd_mnist_noisy")},
    ("telescoping_smoother_run", "polynomial"): Estimate((0.0, 1.0), True, f"{TELESCOPING}: < 1 h a run"),
    ("telescoping_smoother_run", "large_init"): Estimate((5 / 60, 5.0), True,
                                                         f"{TELESCOPING}: paper ≈5 h a run, H100 fp64 ≈5-15 min"),
    ("telescoping_smoother_run", "standard_init"): Estimate((0.0, 2.0), False, f"{TELESCOPING}: ≤2 h in all"),
    ("telescoping_tabular_search", ""): Estimate((0.0, 1.0), True, f"{TELESCOPING}: < 1 h each"),
    ("telescoping_tabular_run", ""): Estimate((0.0, 1.0), True, f"{TELESCOPING}: < 1 h each"),
    **{(rule, group): Estimate((100 / LMC_RUNS, 200 / LMC_RUNS), True, f"{TELESCOPING}: ≈100-200 h for 399 runs")
       for rule, group in (("telescoping_lmc_pretrain", ""), ("telescoping_lmc_parent", ""),
                           ("telescoping_lmc_children", "random"), ("telescoping_lmc_children", "pretrained"))},
    ("iterative_linearisation_run", "full_batch"): Estimate((100, 100), False, f"{IL}: Fig 2 left ≈100 h"),
    ("iterative_linearisation_run", "mini_batch"): Estimate((10, 10), False, f"{IL}: Fig 2 centre ≈10 h"),
    ("iterative_linearisation_run", "augmented"): Estimate((85, 85), False, f"{IL}: Fig 3 ≈85 h"),
    ("iterative_linearisation_run", "resnet_bn"): Estimate((75, 135), False, f"{IL}: Fig 4 ≈150-270 h, half"),
    ("iterative_linearisation_run", "resnet_no_bn"): Estimate((75, 135), False, f"{IL}: Fig 4 ≈150-270 h, half"),
    ("iterative_linearisation_run", "data_scaling"): Estimate((70, 150), False, f"{IL}: Fig 5 ≈70-150 h"),
    ("iterative_linearisation_run", "adam"): Estimate((4, 4), False, f"{IL}: Fig 8 ≈4 h"),
    ("iterative_linearisation_probe", ""): Estimate((3, 3), False, f"{IL}: Fig 6 probes ≈3 h"),
    ("george_thesis_ch3_train", ""): Estimate((1, 1), True, f"{GEORGE}: ResNet50 training ~1 h"),
    ("george_thesis_ch3_fisher_quality", ""): Estimate((1 / 6, 1 / 6), True, f"{GEORGE}: ~10 min a checkpoint"),
    ("george_thesis_ch4_run_search", "autoencoder"): Estimate((30 / 3600, 30 / 3600), True,
                                                              f"{GEORGE}: ~30 s a 20-epoch run"),
    ("george_thesis_ch4_run_frequency", ""): Estimate((30 / 3600, 30 / 3600), True, f"{GEORGE}: ~30 s a run"),
    ("george_thesis_ch4_run_search", "vgg"): Estimate((1 / 6, 1 / 6), True, f"{GEORGE}: ~10 min a 100-epoch run"),
    ("george_thesis_ch4_run_search", "resnet"): Estimate((0.5, 0.5), True, f"{GEORGE}: ~30 min a 100-epoch run"),
    ("george_thesis_ch5_run_toy", ""): Estimate((0.0, 0.5), True, f"{GEORGE}: CPU ~30 min, GPU no faster"),
    ("george_thesis_ch5_run_difficulty", "cscore"): Estimate((0.5, 2), True, f"{GEORGE}: 0.5 (α=1) to 1-2 h a run"),
    ("george_thesis_ch5_run_difficulty", "noisy"): Estimate((0.5, 2), True, f"{GEORGE}: 0.5 (α=1) to 1-2 h a run"),
    ("george_thesis_ch5_run_spurious", ""): Estimate((25, 35), False, f"{GEORGE}: ~25-35 h"),
    ("george_thesis_ch6_run_alignment", "vgg19"): Estimate((3.7, 3.7), True,
                                                           f"{GEORGE}: ~3 h training + ~0.7 h Grams a run"),
    ("george_thesis_ch6_run_alignment", "resnet18"): Estimate((4, 4), True, f"{GEORGE}: ResNet18 CIFAR ~4 h"),
    ("george_thesis_ch6_run_alignment", "mlp"): Estimate((1, 1), True, f"{GEORGE}: MLPs ~1 h"),
    ("karp_thesis_ch2_train_pairs", "lr"): Estimate((0.0, 0.1), True, f"{KARP}: minutes on a GPU"),
    **{("karp_thesis_ch2_train_pairs", configuration): Estimate((1, 4), True, f"{SLURM}: a block of 8 pairs ~1-4 h")
       for configuration in ("1a", "2a", "2b")},
    ("karp_thesis_ch2_train_kept_pairs", ""): Estimate((1, 4), True, f"{SLURM}: a block of 8 pairs ~1-4 h"),
    ("karp_thesis_ch2_train_sweep", ""): Estimate((5, 20), False, f"{KARP}: Fig A.1 ~5-20 h"),
    ("karp_thesis_ch3_run_images", "network"): Estimate((0.2, 0.75), True,
                                                        "benchmark_local_signal on one H100 (README): 32x32-64x64"),
    ("karp_thesis_ch3_run_images", "linearisation"): Estimate((0.7, 1.4), True,
                                                              "benchmark_local_signal on one H100 (README): 32x32-64x64"),
    ("karp_thesis_ch3_run_sparsity", ""): Estimate((0.5, 0.5), True, f"{KARP}: Fig 3.2 ~0.5 h"),
    ("karp_thesis_ch5_grow", "bert"): Estimate((650, 650), False, f"{KARP}: 30 grown BERT-BASE ~650 h"),
    ("karp_thesis_ch5_grow", "ul2"): Estimate((15_000, 15_000), False, f"{KARP}: 30 grown UL2 ~15,000 h"),
    ("karp_thesis_ch5_stack", ""): Estimate((600, 600), False, f"{KARP}: BERT-LARGE stacking ~600 h"),
}


def family_hours(estimate: Estimate, jobs: int) -> tuple[float, float]:
    """The family's GPU-hours, low and high, from its estimate."""
    scale = jobs if estimate.per_job else 1
    return estimate.hours[0] * scale, estimate.hours[1] * scale
