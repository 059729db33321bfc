"""VGG networks (Simonyan & Zisserman 2015) in their CIFAR form, as the NTK-alignment code of George's
thesis builds them: 3x3 convolutions with padding 1 and ReLU, 2x2 max-pooling between
stages, no BatchNorm by default, one linear read-out ``Linear(8·base, classes)`` (512 → 10 at the
standard width), kaiming-normal weights and zero biases.

The configurations A, B, D, E (VGG11, 13, 16, 19) of the original paper, with every width scaled by
``base_channels / 64``. Base 64 is the standard network: VGG19 has 20,029,514 parameters (the thesis's
"20M"), VGG11 9,225,610; VGG19 at base 28 has 3,836,822 (Fig 6.6's "about 3.8M").

Five pools take a 32x32 input to 1x1. Smaller inputs (8x8 digits, 28x28 MNIST) work too: the pools
round up (``ceil_mode``), so an odd map keeps its border and a pool on a 1x1 map is the identity,
i.e. pooling stops once the map is 1x1. On 32x32 inputs this is exactly the usual halving. Inputs
larger than 32x32 would leave a map wider than 1x1 and are refused by the read-out's shape.
"""

from __future__ import annotations

from torch import nn

from .names import zoo_model

POOL = "M"

# Widths at base 64, "M" a max-pool: configurations A, B, D and E of Simonyan & Zisserman (Table 1).
_CONFIGURATIONS = {
    11: [64, POOL, 128, POOL, 256, 256, POOL, 512, 512, POOL, 512, 512, POOL],
    13: [64, 64, POOL, 128, 128, POOL, 256, 256, POOL, 512, 512, POOL, 512, 512, POOL],
    16: [64, 64, POOL, 128, 128, POOL, 256, 256, 256, POOL, 512, 512, 512, POOL, 512, 512, 512, POOL],
    19: [64, 64, POOL, 128, 128, POOL, 256, 256, 256, 256, POOL, 512, 512, 512, 512, POOL,
         512, 512, 512, 512, POOL],
}
INITS = ("kaiming", "default")


@zoo_model
def vgg(depth: int = 11, num_classes: int = 10, in_channels: int = 3, base_channels: int = 64,
        batch_norm: bool = False, init: str = "kaiming") -> nn.Sequential:
    """VGG-``depth`` (11, 13, 16 or 19 weight layers) for images of up to 32x32 pixels.

    base_channels: the first stage's width (64 in the paper); later stages have 2, 4 and 8 times
    as many. batch_norm: BatchNorm after every convolution (the convolutions keep their biases,
    as in torchvision). init: "kaiming" draws every conv and linear weight from the He normal
    (fan-in, ReLU gain) and zeroes the biases (the thesis's code); "default" keeps PyTorch's.
    """
    if depth not in _CONFIGURATIONS:
        raise ValueError(f"VGG depth must be one of {sorted(_CONFIGURATIONS)}, got {depth!r}")
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")
    if base_channels < 1:
        raise ValueError(f"base_channels must be positive, got {base_channels}")
    layers: list[nn.Module] = []
    channels = in_channels
    for item in _CONFIGURATIONS[depth]:
        if item == POOL:
            layers.append(nn.MaxPool2d(2, ceil_mode=True))  # the identity on a 1x1 map
            continue
        width = item // 64 * base_channels
        layers.append(nn.Conv2d(channels, width, 3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2d(width))
        layers.append(nn.ReLU())
        channels = width
    model = nn.Sequential(*layers, nn.Flatten(), nn.Linear(channels, num_classes))
    if init == "kaiming":
        for module in model.modules():
            if isinstance(module, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(module.weight, nonlinearity="relu")
                nn.init.zeros_(module.bias)
    return model
