"""The workflow as a user runs it: dry runs of the quick and paper DAGs, a full smoke run in a
scratch copy, resumption, schema failures, and an offline paper-scale download.

Snakemake runs in a subprocess. Those subprocesses stay offline because the smoke and quick
configs download nothing, and the one download test points every proxy at a closed port."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from linearlens.config import load_scale
from linearlens.data.registry import SOURCES, raw_paths
from linearlens.experiments.tabular import telescoped_sum_error
from linearlens.train.trees import load_tree_ensemble
from rule_blocks import rule_blocks
from workflow_rules import device_rules

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
PAPER_TARGETS = ["paper_telescoping", "paper_iterative_linearisation", "paper_george_thesis",
                 "paper_karp_thesis", "report"]
OFFLINE = {key: "http://127.0.0.1:9" for key in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}

pytestmark = pytest.mark.workflow


def snakemake(cwd, *args, env=None, timeout=600):
    environment = {**os.environ, **(env or {})}
    environment.pop("NO_PROXY", None), environment.pop("no_proxy", None)
    return subprocess.run([SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True,
                          env=environment, timeout=timeout)


def workflow_copy(tmp_path):
    """The workflow's files only, so a run writes results/ and resources/ in a scratch place."""
    target = tmp_path / "linearlens"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("rules", "config", "src", "envs", "profiles"):
        shutil.copytree(ROOT / name, target / name, ignore=ignore)
    shutil.copy(ROOT / "Snakefile", target / "Snakefile")
    return target


def job_counts(output):
    """{rule: count} from Snakemake's 'Job stats' table."""
    table = output.split("Job stats:", 1)[1].split("total", 1)[0]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", table, re.MULTILINE)}


def planned_outputs(output, rule):
    blocks = re.split(r"\n(?=(?:localrule|rule) \w+:)", output)
    return {
        path.strip()
        for block in blocks if re.match(rf"(?:localrule|rule) {rule}:", block)
        for line in block.splitlines() if line.strip().startswith("output:")
        for path in line.split("output:", 1)[1].split(",")
    }


def test_quick_dry_run_downloads_nothing(tmp_path):
    result = snakemake(workflow_copy(tmp_path), "-n")
    assert result.returncode == 0, result.stderr
    counts = job_counts(result.stdout)
    datasets = load_scale("quick")["datasets"]
    assert counts["prepare_dataset"] == len(datasets)
    assert "download_file" not in counts and "fetch_openml" not in counts


def test_the_dag_builds_without_torch(tmp_path):
    """Building the DAG (configs, manifests, code inputs) never imports torch: a dry run succeeds
    with a torch that refuses to import, so a submit host or a laptop plans the run in seconds."""
    fake = tmp_path / "no_torch" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('the DAG must not import torch')\n")
    result = snakemake(workflow_copy(tmp_path), "-n", env={"PYTHONPATH": str(fake.parent)})
    assert result.returncode == 0, result.stderr[-3000:]


def test_paper_dry_run_resolves_every_target_and_download(tmp_path):
    result = snakemake(workflow_copy(tmp_path), *PAPER_TARGETS, "-n", "--configfile", "config/paper.yaml")
    assert result.returncode == 0, result.stderr
    datasets = load_scale("paper")["datasets"]
    needed = {str(p) for spec in datasets.values()
              for p in raw_paths(spec["source"], spec.get("source_options"))}
    planned = planned_outputs(result.stdout, "download_file") | planned_outputs(result.stdout, "fetch_openml")
    assert planned == needed
    downloadable = {name for name, source in SOURCES.items() if source.needs_download}
    assert {spec["source"] for spec in datasets.values()} >= downloadable  # every source the papers need


def test_smoke_run_builds_everything_and_resumes(tmp_path):
    workdir = workflow_copy(tmp_path)
    # every figure of the four documents: 522 s on a quiet 2-core machine (2026-11-27), 1,453 s beside
    # another 2-core run (2026-11-29); the limit only stops a run that hangs
    first = snakemake(workdir, "--cores", "2", "--configfile", "config/smoke.yaml", timeout=2400)
    assert first.returncode == 0, first.stderr[-3000:]
    datasets = load_scale("smoke")["datasets"]
    for name in datasets:
        with np.load(workdir / "results" / "data" / f"{name}.npz") as arrays:
            if "train_tokens" in arrays:  # a text corpus: two byte streams, no labels
                assert len(arrays["train_tokens"]) > len(arrays["validation_tokens"]) > 0
            else:
                assert len(arrays["y_train"]) == datasets[name].get("n_train", len(arrays["y_train"]))
        assert (workdir / "results" / "logs" / "prepare_dataset" / f"{name}.log").exists()
    html = (workdir / "results" / "report" / "index.html").read_text()
    assert all(name in html for name in datasets)
    summary = json.loads((workdir / "results" / "kernels" / "mlp_tiny_init" / "summary.json").read_text())
    assert summary["shape"] == [12, 2, 12, 2] and 1 <= summary["effective_rank"] <= 24
    for figure in ("fig_1", "fig_2", "fig_4", "fig_5", "fig_6", "fig_7", "fig_8", "fig_9", "fig_11", "fig_12", "fig_13"):
        for suffix in ("png", "pdf", "json"):
            assert (workdir / "results" / "telescoping" / "figures" / f"{figure}.{suffix}").exists()
    claims = json.loads((workdir / "results" / "telescoping" / "claims.json").read_text())
    assert claims["scale"] == "smoke" and {c["claim_id"] for c in claims["checks"]} >= {"A1", "A3", "G1", "G2", "S1", "D1", "D2", "D5", "D6",
                                                                                           "T1", "T2", "T3", "T4", "L1", "L2", "L3"}
    assert (workdir / "results" / "telescoping" / "runs" / "approximation" / "sgd" / "lr0.1" / "seed0.csv").exists()
    il = workdir / "results" / "iterative_linearisation"
    for figure in range(1, 10):  # every figure of the longer version (the shorter one's are among them)
        for suffix in ("png", "pdf", "json"):
            assert (il / "figures" / f"fig_{figure}.{suffix}").exists()
    il_claims = json.loads((il / "claims.json").read_text())
    assert il_claims["scale"] == "smoke"
    assert {c["claim_id"] for c in il_claims["checks"]} == {f"C{i}" for i in range(1, 14)}
    identity = {c["check"].split()[-1]: c for c in il_claims["checks"] if c["claim_id"] == "C12"}
    assert identity["float64"]["passed"] and identity["float32"]["passed"]
    run = pd.read_csv(il / "runs" / "augmented" / "k5" / "seed0.csv")
    assert run["relinearisations"].max() == 4  # K = 5 over 20 steps
    assert not list(il.glob("state/**/*.pt"))  # finished runs leave no resumable state behind
    assert "stand-in for CIFAR-10" in json.loads((il / "figures" / "fig_2.json").read_text())["data_source"]
    # Every figure and table says the scale it was made at, before the data it names.
    sidecars = [path for path in (workdir / "results").glob("*/*/*.json") if path.parent.name in ("figures", "tables")]
    assert len(sidecars) > 50
    sources = [json.loads(path.read_text())["data_source"] for path in sidecars]
    assert all(source.startswith("smoke scale — ") for source in sources if "no data" not in source)
    for name, tolerance in (("gbt_tiny_test", 1e-10), ("xgb_tiny_test", 1e-5)):
        trees = json.loads((workdir / "results" / "kernels" / name / "summary.json").read_text())
        assert trees["n_trees"] == 5 and trees["telescoped_vs_predict_max_relative_error"] < tolerance
    # The tabular study's runs keep their preprocessing and the ensembles they fitted, which are
    # exactly the tree-kernel smoothers their ratios were read from.
    tabular = workdir / "results" / "telescoping" / "runs" / "tabular" / "houses"
    provenance = json.loads((tabular / "seed0.json").read_text())
    assert {"log_features", "target_mean", "target_scale"} <= set(provenance["preprocessing"])
    for library, tolerance in (("sklearn", 1e-10), ("xgboost", 1e-5)):
        model, saved = load_tree_ensemble(tabular / f"seed0_{library}.joblib")
        assert telescoped_sum_error(model, saved["x_train"], saved["y_train"], saved["x_train"]) < tolerance

    karp = workdir / "results" / "karp_thesis"
    for figure in ("fig_3_2", "fig_3_3", "fig_3_4", "fig_3_5", "fig_4_1", "fig_5_1", "fig_5_2", "fig_5_3", "fig_5_4"):
        assert (karp / "figures" / f"{figure}.png").exists()
    for table in ("table_3_1", "table_B_1", "table_5_1", "table_5_2", "table_C_2"):
        assert len(pd.read_csv(karp / "tables" / f"{table}.csv")) > 0
    karp_claims = {c["claim_id"] for c in json.loads((karp / "claims.json").read_text())["checks"]}
    assert {"T1", "L1", "L4", "L8", "DL1", "G1", "G2", "G3", "G4", "G5", "U1", "U2", "S1"} <= karp_claims
    # the smoke bert setting runs one job per operator, joined into one run of its four operators
    growth = np.load(karp / "runs" / "ch5" / "growth" / "bert" / "seed0.npz")
    assert growth["loss"].shape == (4, len(growth["steps"])) and np.isfinite(growth["loss"]).all()

    check_training_logs_show_progress(workdir / "results" / "logs")

    again = snakemake(workdir, "--cores", "2", "--configfile", "config/smoke.yaml")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr

    check_reruns_follow_the_science(workdir)

    # An interrupted run (one output missing) redoes that job and what depends on it, nothing else.
    kept = workdir / "results" / "data" / "mnist1d_tiny.npz"
    kept_mtime = kept.stat().st_mtime_ns
    (workdir / "results" / "data" / "digits_3v5_tiny.npz").unlink()
    resumed = snakemake(workdir, "--cores", "2", "--configfile", "config/smoke.yaml")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    counts = job_counts(resumed.stdout + resumed.stderr)
    assert counts.get("prepare_dataset") == 1
    # The kernel of the checkpoint on that probe set is rebuilt; the checkpoint is not.
    assert counts.get("extract_ntk") == 1 and "init_model" not in counts
    assert kept.stat().st_mtime_ns == kept_mtime


PROGRESS_LINE = re.compile(r"step \d+/\d+ \(\d+%\): loss \S+, \S+ steps/s, \d+:\d\d(:\d\d)? left")


def check_training_logs_show_progress(logs):
    """Every training job's log says how many steps it takes and how it ended; with the smoke
    config's progress_every_s the longer ones log their step, loss, rate and time left."""
    training_logs = [path for kind in ("telescoping/approximation", "telescoping/lmc", "iterative_linearisation")
                     for path in (logs / kind).rglob("*.log")
                     if re.match(r"(seed|inner)\d+|parent|pretrain", path.stem) and "probes" not in path.parts]
    assert len(training_logs) > 10
    for path in training_logs:
        text = path.read_text()
        assert re.search(r": \d+ steps", text) and re.search(r"(finished|stopped|diverged) at step \d+/\d+", text), path
    assert any(PROGRESS_LINE.search(path.read_text()) for path in training_logs)


def planned_rules(workdir, *targets, configfile="config/smoke.yaml"):
    """{rule: jobs} a dry run plans in ``workdir`` (empty: nothing to do)."""
    result = snakemake(workdir, *targets, "-n", "--configfile", configfile)
    assert result.returncode == 0, result.stderr[-3000:]
    output = result.stdout + result.stderr
    return {} if "Nothing to be done" in output else job_counts(output)


def check_reruns_follow_the_science(workdir):
    """On a finished smoke run: what reruns after each kind of change (dry runs)."""
    # The config written back with sorted keys (what a YAML tool does): same content, nothing to do.
    smoke = load_scale("smoke", workdir / "config")
    (workdir / "sorted.yaml").write_text(yaml.safe_dump(smoke, sort_keys=True))
    assert planned_rules(workdir, configfile="sorted.yaml") == {}

    # A new module in the model zoo, the experiments or the data layer: nothing imports it yet.
    new_modules = [workdir / "src" / "linearlens" / package / "added_by_a_user.py"
                   for package in ("models", "experiments", "data")]
    for module in new_modules:
        module.write_text('"""A new module."""\n\n\ndef brand_new_model(width: int):\n    return width\n')
    assert planned_rules(workdir) == {}
    for module in new_modules:
        module.unlink()

    # A new data source registered (its reader module and its registry entry): nothing else reruns.
    registry = workdir / "src" / "linearlens" / "data" / "registry.py"
    original_registry = registry.read_text()
    registry.write_text(original_registry + '\nSOURCES["users_data"] = Source("users_data", "a user\'s data", "tabular",'
                        ' "linearlens.data.users_reader:load")\n')
    assert planned_rules(workdir) == {}
    registry.write_text(original_registry)

    # One more width in one double-descent family: its new run, its figure, the claims, the report.
    widened = load_scale("smoke", workdir / "config")
    widened["telescoping"]["double_descent"]["mnist_noisy"]["widths"].append(5)
    (workdir / "widened.yaml").write_text(yaml.safe_dump(widened, sort_keys=False))
    assert planned_rules(workdir, configfile="widened.yaml") == {
        "telescoping_smoother_run": 1, "telescoping_plot_fig_9": 1, "telescoping_claims": 1,
        "report": 1, "all": 1}

    # Comments and docstrings reworded, in a module every training job runs: nothing a job computes
    # changed, nothing reruns.
    session = workdir / "src" / "linearlens" / "train" / "session.py"
    original_session = session.read_text()
    session.write_text(original_session.replace('"""', '"""Reworded. ', 1) + "\n# a comment\n")
    assert planned_rules(workdir) == {}
    session.write_text(original_session)

    # An edit to the tree kernels' code reruns the jobs whose scripts import them, and what reads their
    # outputs; no network is trained again.
    trees = workdir / "src" / "linearlens" / "kernels" / "trees.py"
    trees.write_text(trees.read_text() + "\nAN_EDIT = 1\n")
    # NTK and tree-kernel extraction share kernels.extraction; the tabular search and runs fit GBTs
    importers = {"extract_ntk", "extract_tree_kernel", "telescoping_tabular_search", "telescoping_tabular_run"}
    downstream = {"telescoping_plot_fig_5", "telescoping_claims", "report", "all"}
    rerun = set(planned_rules(workdir))
    assert importers <= rerun <= importers | downstream, rerun
    assert not {"telescoping_smoother_run", "iterative_linearisation_run", "prepare_dataset"} & rerun


def test_a_users_configfile_overlays_the_quick_configuration(tmp_path):
    """A --configfile of one setting changes that setting of the quick configuration, and the rest
    stays: Fig 9 (the noisy and the clean sweep) plans the quick runs but the noisy sweep's widths
    the file drops."""
    workdir = workflow_copy(tmp_path)
    (workdir / "mine.yaml").write_text("telescoping: {double_descent: {mnist_noisy: {widths: [1, 2]}}}\n")
    figure = "results/telescoping/figures/fig_9.png"
    noisy = load_scale("quick")["telescoping"]["double_descent"]["mnist_noisy"]
    runs = {}
    for name, args in {"quick": (), "mine": ("--configfile", "mine.yaml")}.items():
        result = snakemake(workdir, figure, "-n", *args)
        assert result.returncode == 0, result.stderr[-3000:]
        runs[name] = job_counts(result.stdout + result.stderr)["telescoping_smoother_run"]
    assert runs["quick"] - runs["mine"] == (len(noisy["widths"]) - 2) * len(noisy["seeds"]) > 0


def test_invalid_config_fails_before_any_job_naming_the_key(tmp_path):
    workdir = workflow_copy(tmp_path)
    config = load_scale("smoke")
    config["datasets"]["digits_3v5_tiny"]["label_noise"] = 1.5
    config["datasets"]["digits_3v5_tiny"]["lable_noise"] = 0.1
    (workdir / "config" / "bad.yaml").write_text(yaml.safe_dump(config))
    result = snakemake(workdir, "--cores", "1", "--configfile", "config/bad.yaml")
    assert result.returncode != 0
    assert "config key 'datasets.digits_3v5_tiny.label_noise'" in result.stderr
    assert "'lable_noise' was unexpected" in result.stderr
    assert not (workdir / "results").exists()


@pytest.mark.parametrize("target, must_mention", [
    ("resources/raw/mnist/train-labels-idx1-ubyte.gz",
     ["train-labels-idx1-ubyte.gz", "https://ossci-datasets.s3.amazonaws.com/mnist/train-labels-idx1-ubyte.gz",
      "md5:d53e105ee54ea40749a09fcbcd1e9432"]),
    ("resources/raw/openml_44138/fetched.json", ["OpenML 44138", "https://www.openml.org/d/44138"]),
])
def test_offline_paper_download_fails_fast_and_leaves_nothing(tmp_path, target, must_mention):
    workdir = workflow_copy(tmp_path)
    started = time.monotonic()
    result = snakemake(workdir, target, "--cores", "1", "--configfile", "config/paper.yaml", env=OFFLINE)
    elapsed = time.monotonic() - started
    assert result.returncode != 0
    assert elapsed < 60, f"offline failure took {elapsed:.0f} s"
    for part in must_mention:
        assert part in result.stderr, part
    assert "place it by hand" in result.stderr
    raw_dir = (workdir / target).parent
    assert not raw_dir.exists() or list(raw_dir.iterdir()) == []


def test_paper_growing_names_its_missing_checkpoint_and_corpus(tmp_path):
    """Karp ch. 5 at paper scale grows checkpoints and reads corpora that linearlens cannot fetch:
    without them the jobs fail naming each file and how to supply it, and create nothing there."""
    workdir = workflow_copy(tmp_path)
    result = snakemake(workdir, "resources/karp_thesis/bert_base_500k.pt", "results/data/books_wikipedia.npz",
                       "--cores", "1", "--keep-going", "--configfile", "config/paper.yaml", env=OFFLINE)
    assert result.returncode != 0
    for part in ["resources/karp_thesis/bert_base_500k.pt does not exist", "unreleased", "checkpoint to null",
                 "the corpus file 'resources/karp_thesis/books_wikipedia.txt'", "source_options.path"]:
        assert part in result.stderr, part
    assert not (workdir / "resources" / "karp_thesis").exists()


def test_lint_is_clean():
    result = snakemake(ROOT, "--lint")
    assert "Congratulations, your workflow is in a good condition" in result.stdout + result.stderr, result.stdout


def test_slurm_profile_plans_the_paper_dag(tmp_path):
    """The paper config runs on GPUs (device: cuda): every job of a rule that uses the device asks
    for one in $SLURM_GPU_PARTITION, every other job for none in $SLURM_PARTITION."""
    env = {"SLURM_ACCOUNT": "test-account", "SLURM_PARTITION": "cpus", "SLURM_GPU_PARTITION": "gpus"}
    result = snakemake(workflow_copy(tmp_path), "-n", "--profile", "profiles/slurm",
                       "--configfile", "config/paper.yaml", env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert job_counts(result.stdout)["download_file"] > 0
    requests = [(rule, "gpu=1" in resources, re.search(r"slurm_partition=(\w+)", resources)[1])
                for rule, resources in planned_resources(result.stdout)]
    gpu_rules = device_rules()  # test_devices checks that each one's script claims the device
    assert all(gpu == (rule in gpu_rules) for rule, gpu, _ in requests)
    assert all(partition == ("gpus" if gpu else "cpus") for _, gpu, partition in requests)
    assert sum(gpu for _, gpu, _ in requests) > len(requests) / 2  # most of the paper DAG trains
    # every job that uses the device asks for more than the profile's default hour and 4 GB
    budgets = {rule: resources for rule, resources in planned_resources(result.stdout) if rule in gpu_rules}
    assert all(int(re.search(r"\bruntime=(\d+)", r)[1]) >= 240 and int(re.search(r"\bmem_mb=(\d+)", r)[1]) >= 8000
               for r in budgets.values()), budgets


def test_slurm_profile_keeps_no_list_of_rules():
    """What a job asks a cluster for is declared with its rule or family (a budget), never in a list
    of rule names kept in the profile."""
    profile = yaml.safe_load((ROOT / "profiles" / "slurm" / "config.yaml").read_text())
    assert "set-resources" not in profile


def test_slurm_profile_sends_cuda_jobs_to_the_gpu_partition(tmp_path):
    """With device: cuda, the rules that use the device ask for a GPU in $SLURM_GPU_PARTITION, every
    other job stays in $SLURM_PARTITION with no GPU (the full SLURM run is in test_slurm.py)."""
    env = {"SLURM_ACCOUNT": "test-account", "SLURM_PARTITION": "cpus", "SLURM_GPU_PARTITION": "gpus"}
    result = snakemake(workflow_copy(tmp_path), "-n", "--profile", "profiles/slurm", "all", "benchmarks",
                       "rehearse_gpu", "--configfile", "config/smoke.yaml", "--config", "device=cuda", env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    requests = {(rule, "gpu=1" in resources, re.search(r"slurm_partition=(\w+)", resources)[1])
                for rule, resources in planned_resources(result.stdout)}
    gpu_jobs = {rule for rule, gpu, _ in requests if gpu}
    assert gpu_jobs == device_rules()
    assert all(partition == ("gpus" if gpu else "cpus") for _, gpu, partition in requests)


def dry_run_jobs(output):
    """(rule, the job's block of lines) of every job in a dry run's output."""
    return [(re.match(r"rule (\w+):", block)[1], block)
            for block in re.split(r"\n(?=rule \w+:)", output) if re.match(r"rule \w+:", block)]


def planned_resources(output):
    """(rule, resources line) of every job in a dry run's output."""
    return [(rule, re.search(r"^\s+resources: (.*)$", block, re.MULTILINE)[1]) for rule, block in dry_run_jobs(output)]


def test_plot_rules_run_on_the_submit_host():
    """Plots, claims, downloads and the report are local rules: a cluster run does them on the submit
    host instead of queueing a job for each; so is every rule generated from the manifests (the
    SLURM test sees the generated figure rules run outside SLURM)."""
    blocks = rule_blocks()
    local = {"download_file", "fetch_openml", "report"} | {r for r in blocks if r.startswith("plot_")}
    assert {rule for rule in local if "localrule: True" not in blocks[rule]} == set()
    generated = (ROOT / "rules" / "manifests.smk").read_text().split("        rule:\n")[1:]
    assert len(generated) == 3 and all("            localrule: True\n" in block for block in generated)


def test_kernel_benchmark_runs_and_its_routes_agree(tmp_path):
    """The benchmark target end to end on the smoke grid (speed itself is not tested here): each
    case measured in its own process, and every route computing the same numbers."""
    workdir = workflow_copy(tmp_path)
    result = snakemake(workdir, "benchmarks", "--cores", "1", "--configfile", "config/smoke.yaml")
    assert result.returncode == 0, result.stderr
    frame = pd.read_csv(workdir / "results" / "benchmarks" / "kernels.csv")
    assert (frame["status"] == "ok").all(), frame[["method", "status"]]
    assert (frame["seconds"] > 0).all() and (frame.loc[frame.method == "linearlens", "time_vs_ours"] == 1).all()
    ntk = frame[frame["benchmark"] == "ntk"]
    assert np.allclose(ntk["check"], ntk["check"].iloc[0], rtol=1e-10)  # same Gram norm
    trees = frame[frame["benchmark"] == "tree_kernel"]
    assert set(trees["method"]) == {"leaf_replay", "sparse_kernels", "dense_kernels"}
    assert (trees["check"] < 1e-5).all()  # each route reproduces XGBoost's predictions
    assert (ntk["matmul_gflops"] > 0).all() and (ntk["time_vs_floor"] > 0).all()
    for suffix in ("png", "pdf", "json"):
        assert (workdir / "results" / "benchmarks" / f"kernels.{suffix}").exists()
    curvature = pd.read_csv(workdir / "results" / "benchmarks" / "curvature.csv")
    supported = curvature[~curvature["status"].str.startswith("not supported")]
    assert (supported["status"] == "ok").all(), supported[["method", "operation", "status"]]
    assert set(curvature.loc[curvature["status"] != "ok", "method"]) == {"curvlinops"}  # no exact diagonal
    for _, same in supported.groupby("operation"):  # the same matrix: the same product with v
        assert np.allclose(same["check"], same["check"].iloc[0], rtol=1e-8)
    tracking = pd.read_csv(workdir / "results" / "benchmarks" / "telescoping.csv")
    assert set(tracking["method"]) == {"plain", "telescoping", "smoother", "smoother_float32", "smoother_float32_default_heap"}
    assert ((tracking["heap"] == "glibc defaults") == (tracking["method"] == "smoother_float32_default_heap")).all()
    assert (tracking["status"] == "ok").all() and (tracking["seconds_per_step"] > 0).all()
    assert (tracking.loc[tracking.method == "plain", "time_vs_plain"] == 1).all()
    steps = pd.read_csv(workdir / "results" / "benchmarks" / "iterative_linearisation.csv")
    assert set(steps["method"]) == {"ordinary", "linearised"} and (steps["status"] == "ok").all()
    assert (steps["seconds_per_step"] > 0).all() and (steps.loc[steps.method == "ordinary", "time_vs_ordinary"] == 1).all()


def test_a_benchmark_the_config_removes_plans_no_job(tmp_path):
    """A scale may remove a benchmark (paper.yaml removes curvature's): the `benchmarks` target
    then plans no job for it, not one that asks a GPU for hours to time an empty grid."""
    workdir = workflow_copy(tmp_path)
    (workdir / "mine.yaml").write_text("benchmarks: {curvature: __remove__, local_signal: __remove__}\n")
    result = snakemake(workdir, "benchmarks", "-n", "--config", "scale=smoke", "--configfile", "mine.yaml")
    assert result.returncode == 0, result.stderr[-3000:]
    counts = job_counts(result.stdout + result.stderr)
    assert "benchmark_curvature" not in counts and "benchmark_local_signal" not in counts
    assert {f"benchmark_{name}" for name in ("kernels", "telescoping", "iterative_linearisation", "optimisers")} <= set(counts)
