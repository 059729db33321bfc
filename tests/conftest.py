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


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models run fastest on one thread: on a busy machine, idle worker threads spinning for
    work made such modules up to ten times slower. Restored after the module. A module asks for it
    with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
