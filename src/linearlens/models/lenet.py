"""The LeNet-style CNN of the iterative-linearisation paper (Goldwaser & Ge, App. C): two 5-wide
convolutions of equal channel count, each followed by ReLU and 2x max-pooling, then dense layers
(120 and 84 wide) and a linear read-out. ``dims=1`` gives the same network for signals (the
quick-scale LeNet1D on MNIST-1D)."""

from __future__ import annotations

from torch import nn

from .names import zoo_model

CONV = {1: nn.Conv1d, 2: nn.Conv2d}
POOL = {1: nn.MaxPool1d, 2: nn.MaxPool2d}


@zoo_model
def lenet(in_channels: int, input_size: int, num_classes: int = 10, dims: int = 2, channels: int = 50,
          kernel_size: int = 5, padding: int = 0, hidden: tuple[int, ...] = (120, 84),
          init: str = "default") -> nn.Sequential:
    """input_size: the side (or length) of the inputs, which sets the first dense layer's width.
    init: "default" keeps PyTorch's initialisation; "kaiming" draws every weight from the
    ReLU-gain normal and zeroes the biases."""
    if dims not in CONV:
        raise ValueError(f"dims must be 1 or 2, got {dims}")
    if init not in ("default", "kaiming"):
        raise ValueError(f"init must be 'default' or 'kaiming', got {init!r}")
    size = input_size
    layers: list[nn.Module] = []
    for channels_in in (in_channels, channels):
        layers += [CONV[dims](channels_in, channels, kernel_size, padding=padding), nn.ReLU(), POOL[dims](2)]
        size = (size + 2 * padding - kernel_size + 1) // 2
    if size < 1:
        raise ValueError(f"inputs of size {input_size} are too small for two {kernel_size}-wide convolutions")
    widths = [channels * size ** dims, *hidden]
    layers.append(nn.Flatten())
    for width_in, width_out in zip(widths, widths[1:]):
        layers += [nn.Linear(width_in, width_out), nn.ReLU()]
    layers.append(nn.Linear(widths[-1], num_classes))
    model = nn.Sequential(*layers)
    if init == "kaiming":
        for module in model.modules():
            if isinstance(module, (nn.Linear, nn.Conv1d, nn.Conv2d)):
                nn.init.kaiming_normal_(module.weight, nonlinearity="relu")
                nn.init.zeros_(module.bias)
    return model
