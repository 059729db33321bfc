"""The parameter layout: one flat vector over a model's trainable parameters, its spans per parameter
and per layer, and the way back to named, shaped tensors."""

import pytest
import torch
from torch import nn

from linearlens.parameters import ParameterLayout, trainable_parameters


class Scaled(nn.Module):
    """A root parameter, a nested layer, a frozen layer and a layer used twice (one parameter set)."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(3))
        self.body = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 3))
        self.frozen = nn.Linear(3, 3)
        self.frozen.requires_grad_(False)
        self.shared = nn.Linear(3, 2)
        self.again = self.shared

    def forward(self, x):
        return self.again(self.shared.weight.new_ones(1) * self.frozen(self.body(x) * self.scale))


def model():
    torch.manual_seed(0)
    return Scaled().double()


def test_the_vector_is_torchs_flattening_of_the_trainable_parameters():
    net = model()
    trainable = [p for p in net.parameters() if p.requires_grad]
    layout = ParameterLayout(net)
    assert torch.equal(layout.vector(), nn.utils.parameters_to_vector(trainable))
    assert layout.size == sum(p.numel() for p in trainable) == 3 + 15 + 12 + 8
    assert layout.names == list(trainable_parameters(net)) == [
        "scale", "body.0.weight", "body.0.bias", "body.2.weight", "body.2.bias", "shared.weight", "shared.bias"]


def test_layers_are_the_owning_modules_in_flat_order():
    layout = ParameterLayout(model())
    assert [(layer.name, layer.span.start, layer.span.stop) for layer in layout.layers] == [
        ("", 0, 3), ("body.0", 3, 18), ("body.2", 18, 30), ("shared", 30, 38)]
    assert layout.layer("body.2").module is layout.model.body[2]
    assert layout.spans["body.0.bias"] == slice(15, 18)


def test_split_gives_views_shaped_like_the_parameters():
    net = model()
    layout = ParameterLayout(net)
    v = torch.arange(layout.size, dtype=torch.float64)
    parts = layout.split(v)
    assert all(parts[name].shape == p.shape for name, p in trainable_parameters(net).items())
    assert torch.equal(parts["body.2.bias"], torch.tensor([27.0, 28.0, 29.0], dtype=torch.float64))
    assert parts["scale"].data_ptr() == v.data_ptr()  # a view, not a copy
    round_trip = layout.split(layout.vector())
    assert all(torch.equal(round_trip[name], p) for name, p in trainable_parameters(net).items())
    with pytest.raises(ValueError, match="38 entries"):
        layout.split(v[:-1])


def test_gradient_and_flatten_follow_the_same_order():
    net = model()
    layout = ParameterLayout(net)
    net(torch.randn(5, 4, dtype=torch.float64)).square().sum().backward()
    expected = torch.cat([p.grad.reshape(-1) for p in net.parameters() if p.requires_grad])
    assert torch.equal(layout.gradient(), expected)
    reversed_order = dict(reversed(list(trainable_parameters(net).items())))
    assert torch.equal(layout.flatten({name: p.grad for name, p in reversed_order.items()}), expected)
