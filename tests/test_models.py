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


def test_vgg_has_the_standard_sizes_and_takes_small_images():
    from linearlens.models.vgg import vgg
    from linearlens.models.zoo import build_model

    def size(model):
        return sum(p.numel() for p in model.parameters())

    # Configurations E and A at base 64, CIFAR form (one Linear(512, 10) read-out): 20.0M and 9.2M.
    assert size(vgg(19)) == 20_029_514 and size(vgg(11)) == 9_225_610
    assert size(vgg(19, base_channels=28)) == 3_836_822  # Fig 6.6's "about 3.8M"
    assert size(vgg(13)) > size(vgg(11)) and size(vgg(16)) < size(vgg(19))
    model = build_model({"name": "vgg", "depth": 11, "base_channels": 8, "in_channels": 1})
    assert model(torch.randn(2, 1, 8, 8)).shape == (2, 10)  # pooling stops at 1x1
    assert vgg(16, num_classes=2, base_channels=4)(torch.randn(3, 3, 32, 32)).shape == (3, 2)
    assert vgg(11, base_channels=4, in_channels=1)(torch.randn(2, 1, 28, 28)).shape == (2, 10)
    with pytest.raises(ValueError, match="depth"):
        vgg(12)


def test_vgg_pools_on_a_1x1_map_are_the_identity():
    from linearlens.models.vgg import vgg

    model = vgg(11, base_channels=4, in_channels=1)
    pools = [m for m in model if isinstance(m, torch.nn.MaxPool2d)]
    assert len(pools) == 5
    x = torch.randn(2, 1, 8, 8)
    for module in model:  # 8x8 is 1x1 after three pools; the last two leave it as it is
        if isinstance(module, torch.nn.MaxPool2d) and x.shape[-1] == 1:
            assert torch.equal(module(x), x)
        x = module(x)


def test_vgg_init_kaiming_with_zero_biases_and_no_batch_norm_by_default():
    from linearlens.models.vgg import vgg

    torch.manual_seed(0)
    model = vgg(11, base_channels=32)
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in model.modules())
    layers = [m for m in model.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    assert len(layers) == 9  # 8 convolutions and the read-out
    for layer in layers:
        assert torch.count_nonzero(layer.bias) == 0
        fan_in = layer.weight[0].numel()
        assert abs(float(layer.weight.detach().std()) / (2 / fan_in) ** 0.5 - 1) < 0.1  # He normal, ReLU gain
    default = vgg(11, base_channels=32, init="default")
    assert all(torch.count_nonzero(m.bias) > 0 for m in default.modules() if isinstance(m, torch.nn.Conv2d))
    with_bn = vgg(11, base_channels=4, batch_norm=True)
    assert sum(isinstance(m, torch.nn.BatchNorm2d) for m in with_bn.modules()) == 8
