"""Iterative-linearisation figures: each image names its stand-in network beside its data, and a
diverged run is marked on the figure, not only in the records."""

import json
import logging

import yaml

from linearlens.analysis.iterative_linearisation import best_accuracies
from linearlens.figures.iterative_linearisation import named_source, plot_data_scaling
from linearlens.manifests.iterative_linearisation import stand_in_network
from linearlens.manifests.jobs import FigureJob
from test_iterative_linearisation_claims import scaling_runs


def test_quick_figures_name_their_stand_in_networks_and_paper_scale_names_none():
    quick = yaml.safe_load(open("config/config.yaml"))["iterative_linearisation"]
    paper = yaml.safe_load(open("config/paper.yaml"))["iterative_linearisation"]
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
