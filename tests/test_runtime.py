"""Runtime helpers: device choice, seeding, float64 switch, atomic checkpoints."""

from pathlib import Path

import pytest
import torch

from linearlens.data.damaged import DamagedFileError
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


CHECKPOINT = Path("results/checkpoints/init/mlp.pt")


@pytest.fixture
def saved_checkpoint(tmp_path, monkeypatch):
    """A checkpoint where the workflow writes one, the cwd being the workflow's directory."""
    monkeypatch.chdir(tmp_path)
    runtime.save_checkpoint(CHECKPOINT, model=torch.nn.Linear(30, 20).state_dict(), step=10)
    return CHECKPOINT


@pytest.mark.parametrize("damage", [
    lambda data: data[: len(data) // 2],  # cut off
    lambda data: data[:-10],  # cut off inside the zip's central directory
    lambda data: b"this is not a checkpoint\n" * 20,
    lambda data: b"",
], ids=["half", "end", "garbage", "empty"])
def test_damaged_checkpoint_names_file_and_rebuild_command(saved_checkpoint, damage):
    saved_checkpoint.write_bytes(damage(saved_checkpoint.read_bytes()))
    with pytest.raises(DamagedFileError) as error:
        runtime.load_checkpoint(saved_checkpoint)
    message = str(error.value)
    assert message.startswith(f"{saved_checkpoint} is damaged (") and "\n" not in message
    assert message.endswith(f"delete it and rebuild it with `snakemake --cores 1 {saved_checkpoint}`")


def test_intact_checkpoint_that_fails_to_load_is_not_called_damaged(saved_checkpoint, monkeypatch):
    """A load that fails on a sound file (a CUDA tensor on a CPU machine) keeps its own error."""
    def cuda_only(*args, **kwargs):
        raise RuntimeError("Attempting to deserialize object on a CUDA device")

    monkeypatch.setattr(torch, "load", cuda_only)
    with pytest.raises(RuntimeError, match="CUDA device") as error:
        runtime.load_checkpoint(saved_checkpoint)
    assert not isinstance(error.value, DamagedFileError)


def test_missing_checkpoint_is_not_called_damaged(tmp_path):
    with pytest.raises(FileNotFoundError):
        runtime.load_checkpoint(tmp_path / "absent.pt")
