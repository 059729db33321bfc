"""rehearse_gpu's timing on the CPU, on a tiny family: the CSV paper_plan reads, with no invented
GPU memory. (The paper-size families need CUDA: `snakemake rehearse_gpu --config device=cuda`.)"""

import math
from pathlib import Path

import torch

from linearlens.analysis.george_thesis.ch5 import difficulty_runs
from linearlens.benchmarks import plan
from linearlens.benchmarks.rehearse_gpu import (
    COLUMNS,
    iterative_linearisation,
    karp_ch2_pairs,
    karp_ch3_images,
    karp_ch5_grow,
    paper_rehearsals,
    rehearse,
    time_steps,
)
from linearlens.config import load_scale
from linearlens.experiments.settings import experiment_runs

ROOT = Path(__file__).resolve().parents[1]
CPU = torch.device("cpu")
# Karp ch. 5's setting shrunk to a 2-layer model (1 + 1 grown), its keys as config/paper.yaml has them
TINY_SETTING = {"objective": "masked", "model": {"width": 16, "heads": 2, "hidden": 32, "context": 16},
                "optimiser": {"name": "adamw", "lr": 1.0e-4, "betas": [0.9, 0.999], "weight_decay": 0.01},
                "warmup_steps": 10, "decay": None, "batch_size": 4, "micro_batch_size": 2, "layers": 1,
                "grown_layers": 1, "train_steps": 100}


def test_a_timed_family_gives_the_plans_columns_and_no_gpu_memory_on_the_cpu(tmp_path):
    frame = rehearse([lambda: karp_ch5_grow("tiny", TINY_SETTING, CPU)], CPU, warmup=1, timed=2)
    assert tuple(frame.columns) == COLUMNS and len(frame) == 1
    row = frame.iloc[0]
    assert (row["rule"], row["group"], row["batch_size"], row["steps_per_job"]) == ("karp_thesis_ch5_grow", "tiny", 4, 100)
    assert row["step_seconds"] > 0 and row["device"] == "cpu" and row["torch"] == torch.__version__
    assert math.isnan(row["peak_memory_gib"])
    path = tmp_path / "rehearse_gpu.csv"
    frame.to_csv(path, index=False)
    measured = plan.read_measured(path)  # what paper_plan reads
    assert math.isnan(measured["peak_memory_gib"].iloc[0]) and measured["step_seconds"].iloc[0] == row["step_seconds"]


def test_the_timed_steps_are_the_ones_after_the_warm_up():
    steps = []
    time_steps(steps.append, CPU, warmup=2, timed=5)
    assert steps == list(range(1, 8))


def test_the_tiny_family_trains_the_real_step():
    """The rehearsal steps the chapter's Trainer: its parameters move and its global step counts."""
    rehearsal = karp_ch5_grow("tiny", TINY_SETTING, CPU)
    learner = rehearsal.learner
    before = [p.detach().clone() for p in learner.model.parameters()]
    for t in (1, 2):
        rehearsal.step(t)
    assert learner.global_step == 2
    assert any(not torch.equal(a, b) for a, b in zip(before, learner.model.parameters()))


def test_the_paper_config_rehearses_the_heavy_families(tmp_path):
    """George ch. 3's ResNet50 training, ch. 4's VGG11 and ResNet34 EKFAC searches, ch. 5's longest
    difficulty run of each experiment and architecture, ch. 6's VGG19 and ResNet18 alignment runs, Karp ch. 2's three ResNet-20 configurations,
    ch. 3's two models at each image size, ch. 5's grown BERT and UL2 and each iterative-linearisation
    experiment at the ends of its K grid (built only when timed)."""
    paper = load_scale("paper")
    sizes = len(paper["karp_thesis"]["ch3"]["images"]["sizes"])
    experiments = len(paper["iterative_linearisation"]["experiments"])
    difficulty = {(run["experiment"], run["architecture"]) for run in difficulty_runs(paper["george_thesis"]["ch5"]["difficulty"])}
    assert len(paper_rehearsals(paper, CPU, tmp_path)) == 1 + 2 + len(difficulty) + 2 + 3 + 2 * sizes + 2 + 2 * experiments


def test_the_karp_families_step_their_runs_learners_at_a_tiny_size():
    """Karp ch. 2's lockstep block and ch. 3's linearised WRN, their paper settings cut to a few
    images and narrow layers, take steps on the CPU (the paper sizes need the GPU)."""
    paper = load_scale("paper")
    pairs = {**paper["karp_thesis"]["ch2"]["configurations"]["2b"], "sizes": [32], "pairs_per_job": 1, "batch_size": 4}
    ch3 = paper["karp_thesis"]["ch3"]
    ch3 = {**ch3, "model": {**ch3["model"], "widths": [2, 2, 2], "stem": 2},
           "linearisation": {**ch3["linearisation"], "batch_size": 2}}
    frame = rehearse([lambda: karp_ch2_pairs("2b", pairs, CPU, pool_test=8),
                      lambda: karp_ch3_images(ch3, "linearisation", "small", CPU, n_train=100)], CPU, warmup=1, timed=1)
    assert list(frame["family"]) == ["karp_ch2_pairs_2b", "karp_ch3_linearisation_32"]
    assert list(frame["steps_per_job"]) == [pairs["steps"], ch3["linearisation"]["epochs"] * 50]
    assert (frame["step_seconds"] > 0).all()


def test_an_iterative_linearisation_run_steps_through_its_session(tmp_path):
    """The ResNet experiment's float64 2-D path (its paper run, the ResNet cut to a tiny one of its
    family and a few images)."""
    paper = load_scale("paper")
    runs = experiment_runs(paper["iterative_linearisation"]["experiments"]["resnet_no_bn"])
    setting, run = next(reversed(runs.items()))
    tiny = {"name": "resnet", "widths": [2, 2, 2, 2], "blocks": [1, 1, 1, 1], "shortcut": "B", "batch_norm": False}
    run = {**run, "model": tiny, "batch_size": 4}
    frame = rehearse([lambda: iterative_linearisation("resnet_no_bn", setting, run, tmp_path, CPU, n_train=16)],
                     CPU, warmup=1, timed=1)
    assert frame["group"].tolist() == ["resnet_no_bn"] and "float64" in frame["model"].iloc[0]
    assert frame["steps_per_job"].tolist() == [run["steps"]] and frame["step_seconds"].iloc[0] > 0


def test_one_familys_deterministic_kernels_do_not_reach_the_next():
    """Karp ch. 2 turns on deterministic algorithms for its runs' process; the rehearsal times the
    families after it with torch's settings as they were."""
    assert not torch.are_deterministic_algorithms_enabled()

    def deterministic_family():
        torch.use_deterministic_algorithms(True)
        return karp_ch5_grow("tiny", TINY_SETTING, CPU)

    seen = []
    rehearse([deterministic_family, lambda: seen.append(torch.are_deterministic_algorithms_enabled())
              or karp_ch5_grow("tiny", TINY_SETTING, CPU)], CPU, warmup=1, timed=1)
    assert seen == [False] and not torch.are_deterministic_algorithms_enabled()


def test_the_karp_pairs_take_the_chapters_deterministic_settings(monkeypatch):
    """On CUDA the block trains under ch2.deterministic (checked here without a GPU: it is called
    with the rehearsal's device before the models are built)."""
    from linearlens.experiments.karp_thesis import ch2

    calls = []
    monkeypatch.setattr(ch2, "deterministic", lambda device: calls.append(device))
    paper = load_scale("paper")
    pairs = {**paper["karp_thesis"]["ch2"]["configurations"]["1a"], "sizes": [32], "pairs_per_job": 1}
    karp_ch2_pairs("1a", pairs, CPU, pool_test=8)
    assert calls == [CPU]
