"""Devices that jobs really get: GPU ids, one GPU per running job (claimed across processes with fake
ids on this CPU machine), a job that fails at once where torch sees no CUDA, and the rules that ask
Snakemake for a GPU."""

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from linearlens.train import devices
from linearlens.train.devices import DeviceUnavailableError, claim_device, gpu_ids, id_list
from test_workflow import ROOT, snakemake, workflow_copy
from workflow_rules import device_rules, workflow_rules

NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the failure where torch sees no CUDA")
TOY_SHARD = "results/george_thesis/runs/ch5/toy/shard0.npz"  # a device job with no inputs but its code
TOY_LOG = "results/logs/george_thesis/ch5/toy/shard0.log"


@pytest.fixture
def machine(monkeypatch, tmp_path):
    """No GPU variables of the caller's; lock files in a scratch folder."""
    for variable in (devices.GPU_IDS, "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "SLURM_JOB_ID"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv(devices.LOCK_FOLDER, str(tmp_path / "locks"))
    return tmp_path


@pytest.mark.parametrize("text, ids", [("0,1", ["0", "1"]), (" 2 , 3", ["2", "3"]), ("", []), ("-1", []),
                                       ("0,-1,2", ["0"]), ("GPU-8f2c,MIG-1a", ["GPU-8f2c", "MIG-1a"])])
def test_id_lists_read_as_cuda_reads_them(text, ids):
    assert id_list(text) == ids


def fake_nvidia_smi(folder: Path, listing: str) -> Path:
    tool = folder / "bin" / "nvidia-smi"
    tool.parent.mkdir()
    tool.write_text(f"#!/bin/sh\nprintf '{listing}'\n")
    tool.chmod(0o755)
    return tool.parent


def test_gpu_ids_come_from_the_override_then_cuda_visible_devices_then_nvidia_smi(machine, monkeypatch):
    monkeypatch.setenv("PATH", str(fake_nvidia_smi(machine, "0\\n1\\n")))
    assert gpu_ids() == ["0", "1"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert gpu_ids() == ["1"]
    monkeypatch.setenv(devices.GPU_IDS, "5,6,7")
    assert gpu_ids() == ["5", "6", "7"]
    monkeypatch.setenv("PATH", str(machine / "empty"))
    monkeypatch.delenv(devices.GPU_IDS), monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert gpu_ids() == []  # no nvidia-smi: no GPU


CLAIMER = """
import os, sys, time
from linearlens.train.devices import claim_gpu
gpu = claim_gpu("test_rule")
assert claim_gpu("test_rule") == gpu  # a second claim in the same job: the same GPU, at once
print(gpu, os.environ["CUDA_VISIBLE_DEVICES"], os.environ.get("CUDA_DEVICE_ORDER", "-"), flush=True)
time.sleep(600)
"""


class Claimer:
    """A process that claims a GPU and holds it until killed; ``line`` is what it printed."""

    def __init__(self, env):
        self.process = subprocess.Popen([sys.executable, "-c", CLAIMER], env=env, text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.claimed = threading.Event()
        self.line = None
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        self.line = self.process.stdout.readline().split()
        self.claimed.set()

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()


def claimer_env(machine, ids):
    return {**os.environ, devices.GPU_IDS: ids, "PYTHONPATH": str(ROOT / "src")}


def test_each_running_job_gets_its_own_gpu_and_a_killed_job_frees_it(machine):
    env = claimer_env(machine, "0,1")
    first, second = Claimer(env), Claimer(env)
    third = None
    try:
        assert first.claimed.wait(60) and second.claimed.wait(60)
        assert {first.line[0], second.line[0]} == {"0", "1"}
        assert all(c.line[1] == c.line[0] for c in (first, second))  # CUDA_VISIBLE_DEVICES: its GPU only
        assert first.line[2] == "-"  # ids given, not nvidia-smi's: CUDA's device order is left alone
        third = Claimer(env)
        assert not third.claimed.wait(8)  # both GPUs held: it waits
        second.kill()  # SIGKILL: no clean-up runs, the OS frees the lock
        assert third.claimed.wait(30)
        assert third.line[0] == second.line[0]
    finally:
        for claimer in (first, second, third):
            if claimer is not None and claimer.process.poll() is None:
                claimer.kill()
    assert "waits for a GPU: all of 0,1 are held" in third.process.stderr.read()


def test_nvidia_smi_ids_fix_cudas_device_order(machine):
    """nvidia-smi numbers GPUs in PCI bus order; CUDA must number them the same way."""
    tools = fake_nvidia_smi(machine, "0\\n")
    env = {**claimer_env(machine, ""), "PATH": f"{tools}:{os.environ['PATH']}"}
    del env[devices.GPU_IDS]
    claimer = Claimer(env)
    try:
        assert claimer.claimed.wait(60)
        assert claimer.line == ["0", "0", "PCI_BUS_ID"]
    finally:
        claimer.kill()


@NO_CUDA
def test_cuda_without_a_gpu_fails_naming_rule_key_and_the_cpu_choice(machine):
    with pytest.raises(DeviceUnavailableError) as error:
        claim_device("cuda", "telescoping_smoother_run")
    message = str(error.value)
    for part in ("rule telescoping_smoother_run", "`device` is 'cuda'", "torch sees no CUDA device",
                 "`device: cpu`", "--config device=cpu"):
        assert part in message, part
    assert "\n" not in message


@NO_CUDA
def test_under_slurm_the_allocation_is_trusted_and_nothing_is_claimed(machine, monkeypatch):
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    monkeypatch.setenv(devices.GPU_IDS, "0,1")
    with pytest.raises(DeviceUnavailableError, match="torch sees no CUDA device"):
        claim_device("cuda", "extract_ntk")
    assert not (machine / "locks").exists()
    assert "CUDA_VISIBLE_DEVICES" not in os.environ


def test_cpu_and_auto_claim_nothing(machine, monkeypatch):
    monkeypatch.setenv(devices.GPU_IDS, "0")
    assert claim_device("cpu", "extract_ntk") == "cpu"
    assert claim_device("auto", "extract_ntk") == "auto"
    assert not (machine / "locks").exists()


# --- the rules ----------------------------------------------------------------------------------------

def test_every_rule_that_uses_the_device_asks_for_a_gpu_and_claims_it():
    """A rule handed the configured device asks for a GPU under `device: cuda` (and only such a rule),
    and its script claims the device first thing: every rule, those generated in loops included."""
    rules = workflow_rules()
    assert {"extract_ntk", "benchmark_kernels"} <= device_rules()  # one written out, one generated
    assert device_rules() == {name for name, rule in rules.items() if rule["gpu"] == 1}
    for name in device_rules():
        script = rules[name]["script"]
        assert "claim_device(" in (ROOT / "src" / "scripts" / script).read_text(), (name, script)


@NO_CUDA
@pytest.mark.workflow
def test_a_cuda_job_on_a_machine_without_one_fails_in_its_first_seconds(tmp_path):
    workdir = workflow_copy(tmp_path)
    started = time.monotonic()
    result = snakemake(workdir, TOY_SHARD, "--cores", "1", "--configfile", "config/smoke.yaml",
                       "--config", "device=cuda", env={devices.GPU_IDS: ""})
    elapsed = time.monotonic() - started
    assert result.returncode != 0
    log = (workdir / TOY_LOG).read_text()
    assert len(log.splitlines()) == 1  # the error, before any data or model
    for part in ("george_thesis_ch5_run_toy", "`device` is 'cuda'", "torch sees no CUDA device",
                 "--config device=cpu"):
        assert part in log and part in result.stderr, part
    assert not (workdir / TOY_SHARD).exists()
    assert elapsed < 90, f"{elapsed:.0f} s, Snakemake's start included"


@NO_CUDA
@pytest.mark.workflow
def test_snakemake_runs_as_many_gpu_jobs_as_the_machine_has_gpus(tmp_path):
    """Three (fake) GPUs: Snakemake provides gpu=3, and the job claims one before finding no CUDA."""
    workdir = workflow_copy(tmp_path)
    env = {devices.GPU_IDS: "0,1,2", devices.LOCK_FOLDER: str(tmp_path / "locks")}
    result = snakemake(workdir, TOY_SHARD, "--cores", "1", "--configfile", "config/smoke.yaml",
                       "--config", "device=cuda", env=env)
    assert result.returncode != 0
    assert provided_gpus(result) == 3
    log = (workdir / TOY_LOG).read_text()
    assert "holds GPU 0 (CUDA_VISIBLE_DEVICES=0)" in log and "CUDA_VISIBLE_DEVICES=0)" in log.splitlines()[-1]
    override = snakemake(workdir, TOY_SHARD, "--cores", "1", "--configfile", "config/smoke.yaml",
                         "--config", "device=cuda", "--resources", "gpu=1", env=env)
    assert provided_gpus(override) == 1


def provided_gpus(result) -> int:
    """The gpu limit in Snakemake's "Provided resources" line (it prints `gpu=Resource("gpu", 3)`)."""
    return int(re.search(r"^Provided resources: .*\bgpu\b\D*(\d+)", result.stderr, re.MULTILINE)[1])
