"""Karp ch. 2's deterministic CUDA settings (A(S) and A(S′) may differ only through z),
checked without a GPU: a CUDA device is
passed in and CUDA's state is faked; nothing here calls CUDA. Every setting is restored after."""

import os

import pytest
import torch

from linearlens.experiments.karp_thesis import ch2

CUDA = torch.device("cuda")


@pytest.fixture(autouse=True)
def restored_torch_settings(monkeypatch):
    """deterministic() sets process-wide state (a job is one process); no test may leak it."""
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    saved = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
             torch.backends.cudnn.benchmark)
    torch.use_deterministic_algorithms(False)
    torch.backends.cudnn.benchmark = True  # what a CUDA job may have had before: deterministic() must turn it off
    yield
    torch.use_deterministic_algorithms(saved[0], warn_only=saved[1])
    torch.backends.cudnn.benchmark = saved[2]


def settings_now() -> dict:
    return {"deterministic algorithms": torch.are_deterministic_algorithms_enabled(),
            "warn only": torch.is_deterministic_algorithms_warn_only_enabled(),
            "cudnn benchmark": torch.backends.cudnn.benchmark,
            "cublas workspace": os.environ.get("CUBLAS_WORKSPACE_CONFIG")}


# PyTorch's reproducibility notes: deterministic algorithms that raise (not warn) where an op has
# none, cuDNN's benchmark off, and a cuBLAS workspace of :4096:8 or :16:8 (CUDA ≥ 10.2).
DETERMINISTIC = {"deterministic algorithms": True, "warn only": False, "cudnn benchmark": False,
                 "cublas workspace": ":4096:8"}


def test_cuda_device_gets_every_deterministic_setting(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    ch2.deterministic(CUDA)
    assert settings_now() == DETERMINISTIC


def test_cpu_device_changes_nothing():
    before = settings_now()
    ch2.deterministic(torch.device("cpu"))
    assert settings_now() == before


def test_a_workspace_setting_from_the_environment_is_kept(monkeypatch):
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)  # set before CUDA started: fine
    ch2.deterministic(CUDA)
    assert settings_now() == {**DETERMINISTIC, "cublas workspace": ":16:8"}


def test_workspace_set_after_cuda_started_is_refused(monkeypatch):
    """cuBLAS would keep its nondeterministic workspace while torch's own check passes."""
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    with pytest.raises(RuntimeError, match="CUBLAS_WORKSPACE_CONFIG was set; call deterministic"):
        ch2.deterministic(CUDA)
    assert "CUBLAS_WORKSPACE_CONFIG" not in os.environ


class FirstCudaWork(Exception):
    """Raised where a training entry point first puts data on its device."""


@pytest.mark.parametrize("entry", ["pair_run", "sweep_run"])
def test_training_entry_points_are_deterministic_before_any_cuda_work(monkeypatch, entry):
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    monkeypatch.setattr(ch2, "choose_device", lambda name: CUDA)
    seen = {}

    def pool_task(data_npz, settings, device):
        seen.update(device=device, **settings_now())
        raise FirstCudaWork

    monkeypatch.setattr(ch2, "pool_task", pool_task)
    arguments = {"pair_run": ("data.npz", {}, "1a", 0, [2], [0]), "sweep_run": ("data.npz", {}, "1a", 0, [2], 1)}
    with pytest.raises(FirstCudaWork):
        getattr(ch2, entry)(*arguments[entry], device="cuda")
    assert seen == {"device": CUDA, **DETERMINISTIC}
