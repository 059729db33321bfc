"""Iterative-linearisation figures: each image names its stand-in network beside its data, and a
diverged run is marked on the figure, not only in the records."""

import json
import logging

import matplotlib.pyplot as plt
import pandas as pd

from linearlens.analysis.iterative_linearisation import best_accuracies
from linearlens.config import load_scale
from linearlens.figures.iterative_linearisation import (
    _large_k_panel,
    how_it_ended,
    named_source,
    plot_augmented,
    plot_data_scaling,
)
from linearlens.manifests.iterative_linearisation import stand_in_network
from linearlens.manifests.jobs import FigureJob
from test_iterative_linearisation_claims import ramp, rise, run, scaling_runs


def test_quick_figures_name_their_stand_in_networks_and_paper_scale_names_none():
    quick = load_scale("quick")["iterative_linearisation"]
    paper = load_scale("paper")["iterative_linearisation"]
    assert "stand-in for the paper's LeNet" in stand_in_network(quick, ["full_batch", "mini_batch"])
    assert "stand-in for ResNet-18" in stand_in_network(quick, ["resnet_no_bn", "resnet_bn"])
    assert stand_in_network(paper, ["full_batch", "resnet_bn"]) == ""
    job = FigureJob("fig_2", {}, {"network": "LeNet1D, stand-in for LeNet"}, "x.png", "", "quick scale — MNIST-1D",
                    logging.getLogger("test"))
    assert named_source(job) == "quick scale — MNIST-1D; network: LeNet1D, stand-in for LeNet"


def test_fig_5_marks_diverged_runs_on_the_image_and_in_the_caption(tmp_path):
    runs = scaling_runs(k300_diverged=(1000, 2000))
    runs = runs.assign(batch_size=128, steps_per_epoch=2)
    png = tmp_path / "fig_5.png"
    plot_data_scaling(runs, png, "quick scale — MNIST-1D; network: LeNet1D", None)
    sidecar = json.loads(png.with_suffix(".json").read_text())
    assert "K = 300 lr 0.005 n=1000, K = 300 lr 0.005 n=2000" in sidecar["caption"]
    assert "network: LeNet1D" in sidecar["data_source"] and png.exists()
    clean = tmp_path / "clean.png"
    plot_data_scaling(scaling_runs().assign(batch_size=128, steps_per_epoch=2), clean, "quick", None)
    assert "before): none." in json.loads(clean.with_suffix(".json").read_text())["caption"]


def test_fig_5_reads_each_runs_diverged_flag():
    best = best_accuracies(scaling_runs(k300_diverged=(2000,)))
    assert best.loc[best["diverged"], "setting"].tolist() == ["k300_n2000"]


def test_the_image_names_the_training_set_the_runs_drew():
    """MNIST-1D's source names the generated set (4,000 train); Fig 2's runs train on 500 of it."""
    job = FigureJob("fig_2", {}, {"network": "LeNet1D"}, "x.png", "", "quick scale — MNIST-1D: 4,000 train",
                    logging.getLogger("test"))
    runs = pd.concat([run(1, rise(0.5)), run(30, rise(0.5), n_train=500)])
    assert named_source(job, runs) == ("quick scale — MNIST-1D: 4,000 train; the runs train on n = 500 of its "
                                       "training signals; network: LeNet1D")


def test_runs_cut_by_the_step_cap_while_rising_are_marked_in_the_legend(tmp_path):
    assert how_it_ended(run(1, rise(0.8))) == ""
    assert how_it_ended(run(800, ramp(0.1, 0.8))) == " (step cap, still rising)"
    assert how_it_ended(run(800, rise(0.8), diverged=True)) == " (diverged, stopped)"
    runs = pd.concat([run(1, rise(0.8)), run(800, ramp(0.1, 0.8), period=200)]).assign(
        epoch=lambda f: f["step"] / 10)
    fig, ax = plt.subplots()
    _large_k_panel(ax, runs, "SGD with augmentation")
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    plt.close(fig)
    assert labels[:2] == ["K = 1", "K = 800, network (step cap, still rising)"]
    png = tmp_path / "fig_3.png"
    plot_augmented(runs, png, "quick scale — MNIST-1D", None)
    assert "still rising" in json.loads(png.with_suffix(".json").read_text())["caption"]
