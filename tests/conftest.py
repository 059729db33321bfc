"""Fixtures shared by the test modules."""

import pytest
import torch

# The CPU always; the GPU too where one is present, so that a GPU box checks its own code paths.
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(params=DEVICES)
def device(request):
    """A test that takes ``device`` runs once per device in DEVICES, with the same assertions."""
    return torch.device(request.param)


@pytest.fixture
def float64():
    """torch's default dtype float64 inside the test, restored after."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)
