"""The model zoo: shapes, parameter counts and the initialisation scale."""

import pytest
import torch

from linearlens.models.cnn import small_cnn
from linearlens.models.mlp import mlp
from linearlens.models.resnet import resnet20


def test_resnet20_has_the_published_size_and_shapes():
    # He et al. (2016), Table 6: 0.27M parameters with the parameter-free option-A shortcuts.
    assert sum(p.numel() for p in resnet20().parameters()) == 269_722
    assert sum(p.numel() for p in resnet20(shortcut="B").parameters()) > 269_722
    assert resnet20(num_classes=2)(torch.randn(3, 3, 32, 32)).shape == (3, 2)


def test_mlp_init_scale_multiplies_every_parameter():
    torch.manual_seed(0)
    base = mlp(4, [8, 8], 2)
    torch.manual_seed(0)
    scaled = mlp(4, [8, 8], 2, init_scale=6.0)
    for p, q in zip(base.parameters(), scaled.parameters()):
        assert torch.allclose(q, 6.0 * p)
    out = mlp(4, [8], 1, sigmoid_output=True)(torch.randn(5, 4))
    assert ((out > 0) & (out < 1)).all()
    with pytest.raises(ValueError, match="activation"):
        mlp(4, [8], 1, activation="swish")


def test_small_cnn_takes_grey_and_colour_images():
    assert small_cnn(1, 10)(torch.randn(2, 1, 8, 8)).shape == (2, 10)
    assert small_cnn(3, 2, batch_norm=True)(torch.randn(2, 3, 32, 32)).shape == (2, 2)


def test_checkpoint_rebuilds_the_model(tmp_path):
    from linearlens.models.zoo import build_model, load_model, save_model

    spec = {"name": "resnet20", "num_classes": 3, "width": 4}
    model = build_model(spec)
    save_model(tmp_path / "model.pt", model, spec, step=7)
    loaded, metadata = load_model(tmp_path / "model.pt")
    x = torch.randn(2, 3, 16, 16)
    assert torch.equal(loaded(x), model.eval()(x)) and metadata == {"step": 7}
    assert not loaded.training  # BatchNorm on running statistics, ready for the NTK
    with pytest.raises(ValueError, match="the zoo has"):
        build_model({"name": "vgg11"})
