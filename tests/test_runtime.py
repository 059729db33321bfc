"""Runtime helpers: device choice, seeding, float64 switch, atomic checkpoints."""

import pytest
import torch

from linearlens.train import runtime


def test_auto_device_is_cpu_without_cuda_and_cuda_is_refused():
    if torch.cuda.is_available():
        pytest.skip("this check is for machines without CUDA")
    assert runtime.choose_device("auto").type == "cpu"
    with pytest.raises(RuntimeError, match="no CUDA device"):
        runtime.choose_device("cuda")


def test_seeding_reproduces_draws():
    runtime.seed_everything(3)
    first = torch.randn(4)
    runtime.seed_everything(3)
    assert torch.equal(first, torch.randn(4))


def test_default_dtype_switch_is_scoped():
    before = torch.get_default_dtype()
    with runtime.default_dtype("float64"):
        assert torch.ones(1).dtype == torch.float64
    assert torch.get_default_dtype() == before
    with pytest.raises(ValueError, match="float16"):
        runtime.dtype_from_name("float16")


def test_threads_follow_the_rule():
    previous = torch.get_num_threads()
    runtime.set_threads(1)
    assert torch.get_num_threads() == 1
    torch.set_num_threads(previous)


def test_checkpoint_round_trip_leaves_no_partial(tmp_path):
    model = torch.nn.Linear(3, 2)
    path = tmp_path / "ckpt" / "step10.pt"
    runtime.save_checkpoint(path, model=model.state_dict(), step=10)
    state = runtime.load_checkpoint(path)
    assert state["step"] == 10
    assert torch.equal(state["model"]["weight"], model.weight.detach())
    assert [p.name for p in path.parent.iterdir()] == ["step10.pt"]
