"""George thesis ch. 6, Figs 6.2-6.4, B.5-B.8: the kernel probes of a training run against
independent routes, the centring conventions against the author's formula, the spectra derived
from saved Grams, the easy/difficult mixtures, and a tiny run through its figures and claims."""

import json

import numpy as np
import pandas as pd
import pytest
import torch

from configured import claim_thresholds
from linearlens.claims.george_thesis.ch6 import alignment_claims, easy_difficult_claims
from linearlens.data.transforms import balanced_order
from linearlens.experiments.george_thesis.ch6 import (
    CENTRINGS,
    KernelProbe,
    ProbeSet,
    easy_difficult_task,
    kernel_alignment_run,
    label_alignment,
    label_noise_task,
    record_frames,
    saved_grams,
    spectrum_summary,
)
from linearlens.figures.george_thesis import ch6 as figures
from linearlens.kernels.alignment import effective_rank, eigenvalues
from linearlens.kernels.ntk import ntk_by_jacobian
from linearlens.manifests.george_thesis import kernel_runs, run_models
from linearlens.manifests.jobs import ClaimsJob, FigureJob
from linearlens.models.mlp import mlp
from linearlens.train.runtime import default_dtype


def one_hot_features(n=9, c=3, p=7, seed=0):
    generator = torch.Generator().manual_seed(seed)
    features = torch.randn(n, c, p, generator=generator, dtype=torch.float64) + 2.0  # an offset to centre away
    return features, torch.einsum("iap,jbp->iajb", features, features)


def test_per_output_cka_is_the_author_formula_with_labels_centred_per_class():
    features, gram = one_hot_features()
    labels = torch.tensor([0, 1, 2, 0, 1, 2, 0, 0, 1])
    centred = features - features.mean(0, keepdim=True)  # Φ(x) − E_x Φ(x), for each output
    k_c = torch.einsum("iap,jbp->iajb", centred, centred).reshape(27, 27)
    y = torch.nn.functional.one_hot(labels, 3).double()
    y = (y - y.mean(0)).reshape(-1)  # one-hot labels centred over the examples, per class
    expected = y @ k_c @ y / (torch.linalg.matrix_norm(k_c) * (y @ y))
    assert label_alignment(gram, labels, "per_output") == pytest.approx(float(expected), rel=1e-12)


def test_uncentred_alignment_is_the_plain_cosine_with_the_label_gram():
    _, gram = one_hot_features()
    labels = torch.tensor([2, 1, 0, 0, 1, 2, 0, 0, 1])
    target = torch.einsum("ia,jb->iajb", *(torch.nn.functional.one_hot(labels, 3).double(),) * 2).reshape(27, 27)
    matrix = gram.reshape(27, 27)
    expected = (matrix * target).sum() / (matrix.norm() * target.norm())
    assert label_alignment(gram, labels, "uncentred") == pytest.approx(float(expected), rel=1e-12)
    values = [label_alignment(gram, labels, centring) for centring in CENTRINGS]
    assert all(0 <= v <= 1 for v in values) and len(set(np.round(values, 10))) == 3


def test_a_diverged_step_is_marked_with_nan_values_instead_of_failing_the_eigensolver():
    _, gram = one_hot_features(n=6, c=2, p=3)
    diverged = np.full_like(gram.numpy(), np.nan)
    saved = {"steps": np.array([0, 1]), "gram_train": np.stack([gram.numpy(), diverged]),
             "labels_train": np.array([0, 1, 1, 0, 1, 0])}
    summary, curves = spectrum_summary(saved, "per_output")
    assert summary["diverged"].tolist() == [False, True]
    assert np.isfinite(summary.iloc[0]["effective_rank"]) and np.isnan(summary.iloc[1]["effective_rank"])
    assert np.isfinite(curves["trace_ratios_train"][0]).all() and np.isnan(curves["trace_ratios_train"][1]).all()


def test_spectrum_summary_matches_direct_computation_and_survives_zero_eigenvalues():
    _, gram = one_hot_features(n=6, c=2, p=3)  # rank 3 of 12: centring leaves zero eigenvalues
    labels = np.array([0, 1, 1, 0, 1, 0])
    saved = {"steps": np.array([0, 5]), "gram_train": np.stack([gram.numpy(), 2 * gram.numpy()]),
             "labels_train": labels}
    summary, curves = spectrum_summary(saved, "per_output")
    centred = gram - gram.mean(0, keepdim=True)
    centred = centred - centred.mean(2, keepdim=True)
    values = eigenvalues(centred).clamp(min=0)
    first = summary.iloc[0]
    assert np.isfinite(summary.drop(columns="probe").to_numpy(dtype=float)).all()
    assert first.effective_rank == pytest.approx(float(effective_rank(values)))
    assert 1 <= first.effective_rank <= 3 + 1e-9
    assert first.eigenvalue_max == pytest.approx(float(values[0]))
    assert np.allclose(curves["trace_ratios_train"][0], (values.cumsum(0) / values.sum()).numpy())
    assert np.all(np.diff(curves["trace_ratios_train"][0]) >= -1e-12) and curves["trace_ratios_train"][0][-1] == 1
    # a Gram scaled by 2 has the same alignments and effective rank, and twice the eigenvalues
    second = summary.iloc[1]
    assert second.eigenvalue_max == pytest.approx(2 * first.eigenvalue_max)
    for column in ("effective_rank", "cka_per_output", "cka_global", "cka_uncentred"):
        assert second[column] == pytest.approx(first[column])
    assert first.cka_per_output == pytest.approx(label_alignment(gram, torch.as_tensor(labels), "per_output"))


def test_the_kernel_probe_sums_its_layers_to_the_jacobian_gram():
    with default_dtype("float64"):
        torch.manual_seed(0)
        model = mlp(4, [5, 6], 3)
        x, labels = torch.randn(7, 4), torch.tensor([0, 1, 2, 0, 1, 2, 0])
        probe = KernelProbe(model, [ProbeSet("train", x, labels)], per_output_centring=True, keep_grams=True)

        class At:  # what a probe reads of its session
            step = 4
        row = probe(At())
        exact = ntk_by_jacobian(model, x)
    assert torch.allclose(probe.grams["train"][0].double(), exact.float().double(), rtol=1e-5, atol=1e-6)
    assert row["train_cka"] == pytest.approx(label_alignment(exact, labels, "per_output"), rel=1e-9)
    layers = pd.DataFrame(probe.layer_rows)
    assert len(layers) == 3 and list(layers.layer_index) == [0, 1, 2]
    assert layers.trace.sum() == pytest.approx(row["train_trace"], rel=1e-9)
    assert row["train_trace"] == pytest.approx(float(torch.einsum("iaia->", exact)), rel=1e-9)


def write_task(path, n_train=120, n_test=40, seed=0):
    rng = np.random.default_rng(seed)
    y_train, y_test = rng.integers(0, 10, n_train), rng.integers(0, 10, n_test)
    means = rng.normal(size=(10, 1, 4, 4))
    np.savez(path, x_train=(means[y_train] + 0.3 * rng.normal(size=(n_train, 1, 4, 4))).astype(np.float32),
             y_train=y_train, x_test=(means[y_test] + 0.3 * rng.normal(size=(n_test, 1, 4, 4))).astype(np.float32),
             y_test=y_test)
    return path


def easy_run(kind, **extra):
    return {"n_easy": 80, "n_difficult": 20, "difficult": kind, "standardise": True, "probe_size": 10,
            "permutation_seed": 3, **extra}


def test_difficult_examples_are_random_labels_transposed_images_or_another_dataset(tmp_path):
    data = write_task(tmp_path / "task.npz")
    arrays = dict(np.load(data))
    order = balanced_order(arrays["y_train"], 0)  # the examples in their class-balanced order
    arrays["x_train"], arrays["y_train"] = arrays["x_train"][order], arrays["y_train"][order]
    task, probes = easy_difficult_task(data, easy_run("transposed"), 0, "cpu")
    assert len(task["x_train"]) == 100 and [p.name for p in probes] == ["easy", "difficult"]
    permutation = np.random.default_rng(3).permutation(10)
    assert (task["y_train"][80:].numpy() == permutation[arrays["y_train"][80:100]]).all()
    assert (task["y_train"][:80].numpy() == arrays["y_train"][:80]).all()
    raw = torch.as_tensor(arrays["x_train"][:100])
    mean, std = raw.mean(), torch.cat([raw[:80], raw[80:].transpose(-1, -2)]).std()
    assert torch.allclose(task["x_train"][80] * std + mean, raw[80].transpose(-1, -2), atol=1e-5)
    assert torch.allclose(probes[1].x, task["x_train"][80:90])
    random, _ = easy_difficult_task(data, easy_run("random_labels"), 0, "cpu")
    assert (random["y_train"][:80] == task["y_train"][:80]).all()
    assert (random["y_train"][80:].numpy() != arrays["y_train"][80:100]).mean() > 0.5  # redrawn, 1 in 10 unchanged
    other = write_task(tmp_path / "other.npz", seed=1)
    mixed, _ = easy_difficult_task(data, easy_run("dataset"), 0, "cpu", difficult_npz=other)
    other_labels = np.load(other)["y_train"]
    assert (mixed["y_train"][80:].numpy() == other_labels[balanced_order(other_labels, 0)[:20]]).all()
    assert np.bincount(probes[0].labels.numpy(), minlength=10).max() == 1  # a balanced probe of 10
    with pytest.raises(ValueError, match="too few"):
        easy_difficult_task(data, easy_run("random_labels", n_easy=110), 0, "cpu")


RUN = {"model": {"name": "mlp", "in_features": 16, "hidden": [12, 12], "out_features": 10}, "epochs": 6,
       "batch_size": 20, "momentum": 0.9, "weight_decay": 0.0, "probe_size": 10, "gram_points": 5,
       "centring": "per_output"}


def test_a_tiny_alignment_group_runs_through_its_figures_and_claims(tmp_path):
    data = write_task(tmp_path / "task.npz")
    group = {"seeds": [0], "probe_size": 10, "gram_points": 5, "centring": "per_output", "families": {
        "vgg19": {"label": "VGG19", "standin": "MLP", "dataset": "task", **{k: RUN[k] for k in (
            "model", "epochs", "batch_size", "momentum", "weight_decay")},
            "settings": {"noise0_lr0.05": {"label_noise": 0.0, "lr": 0.05},
                         "noise0.5_lr0.05": {"label_noise": 0.5, "lr": 0.05},
                         "noise0_lr0.01": {"label_noise": 0.0, "lr": 0.01}}}}}
    runs = []
    files = {"rows": [], "layers": [], "spectra": [], "trace_ratios": [], "grams": []}
    for (family, setting), run in kernel_runs(group).items():
        run = {**run, "keep_grams": True}
        task, probes, _ = label_noise_task(data, run, 0, "cpu")
        record, kernels = kernel_alignment_run(run, task, probes, 0)
        rows, layers = record_frames(record, kernels)
        stem = tmp_path / setting
        rows.to_csv(f"{stem}.csv", index=False)
        layers.to_csv(f"{stem}_layers.csv", index=False)
        summary, curves = spectrum_summary(saved_grams(kernels), "per_output")
        summary.to_csv(f"{stem}_spectra.csv", index=False)
        np.savez(f"{stem}_trace_ratios.npz", **curves)
        np.savez(f"{stem}_grams.npz", **saved_grams(kernels))
        for name, suffix in (("rows", ".csv"), ("layers", "_layers.csv"), ("spectra", "_spectra.csv"),
                             ("trace_ratios", "_trace_ratios.npz"), ("grams", "_grams.npz")):
            files[name].append(f"{stem}{suffix}")
        runs.append({"family": family, "setting": setting, "seed": 0, "label_noise": run["label_noise"],
                     "lr": run["lr"]})
    assert list(rows.columns[:3]) == ["step", "train_accuracy", "train_loss"] and rows.step.iloc[0] == 0
    params = {"runs": runs, "families": {"vgg19": {"label": "VGG19", "standin": "MLP"}}, "centring": "per_output"}
    for figure in ("fig_6_2", "fig_6_3", "fig_B_5", "fig_B_6", "fig_B_8"):
        png = tmp_path / f"{figure}.png"
        getattr(figures, f"plot_{figure}")(FigureJob(figure, files, params, str(png), "lead.", "tiny task"))
        sidecar = json.loads(png.with_suffix(".json").read_text())
        assert png.exists() and "tiny task" in sidecar["data_source"] and "network: MLP" in sidecar["data_source"]
        assert figure != "fig_B_6" or "example-mean part" in sidecar["caption"]
    checks = alignment_claims(ClaimsJob(files, {"thresholds": claim_thresholds("george_thesis", "quick", "alignment"), **params}))
    assert {c.claim_id for c in checks} == {"H17", "H18", "H21"}
    assert all(c.passed in (True, False, None) and c.measured not in (None, "") for c in checks)


def test_a_tiny_easy_difficult_group_runs_through_its_figures_and_claims(tmp_path):
    data = write_task(tmp_path / "task.npz")
    family = {"dataset": "task", "difficult": "random_labels", "n_easy": 80, "n_difficult": 20, "standardise": True,
              **{k: RUN[k] for k in ("model", "epochs", "batch_size", "momentum", "weight_decay")}, "lr": 0.05}
    group = {"seeds": [0], "probe_size": 10, "gram_points": 5, "centring": "per_output", "families": {
        "random_labels": {**family, "label": "random labels", "settings": {"depth3": {}}},
        "depth": {**family, "label": "depth", "seeds": [0, 1], "settings": {
            "depth2": {"model": {"hidden": [12]}}, "depth3": {}}}}}
    runs, paths = [], []
    for (name, setting), run in kernel_runs(group).items():
        for seed in group["families"][name].get("seeds", [0]):
            task, probes = easy_difficult_task(data, {**run, "keep_grams": False}, seed, "cpu")
            record, kernels = kernel_alignment_run({**run, "keep_grams": False}, task, probes, seed)
            path = tmp_path / f"{name}_{setting}_{seed}.csv"
            record_frames(record, kernels)[0].to_csv(path, index=False)
            runs.append({"family": name, "setting": setting, "seed": seed, "label_noise": 0.0, "lr": run["lr"]})
            paths.append(str(path))
    families = {name: {"label": spec["label"], "standin": None} for name, spec in group["families"].items()}
    models = run_models(group, lambda _: runs)
    params = {"runs": runs, "families": families, "centring": "per_output", "models": models}
    for figure, chosen, network in (
            ("fig_6_4", [i for i, r in enumerate(runs) if r["family"] == "random_labels"],
             "network: MLP 16-12-12-10 (stand-in for the thesis's MLP of hidden width 80 on 28×28 MNIST)"),
            ("fig_B_7", [i for i, r in enumerate(runs) if r["family"] == "depth"],
             "network: MLP 16-12-10, MLP 16-12-12-10 (stand-in for the thesis's MLPs of hidden width 60")):
        png = tmp_path / f"{figure}.png"
        job_params = {**params, "runs": [runs[i] for i in chosen]}
        getattr(figures, f"plot_{figure}")(FigureJob(figure, {"rows": [paths[i] for i in chosen]}, job_params,
                                                     str(png), "lead.", "tiny task"))
        # the network is named on the image, apart from the difficult examples (a family's label)
        assert network in json.loads(png.with_suffix(".json").read_text())["data_source"]
    checks = easy_difficult_claims(ClaimsJob({"rows": paths}, params))
    assert [c.claim_id for c in checks] == ["H19", "H19"] + ["H20"] * 4
    assert all(c.passed in (True, False, None) and c.measured for c in checks)
