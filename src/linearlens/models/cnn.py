"""A small convolutional network for 1- or 3-channel images."""

from __future__ import annotations

from torch import nn

from .names import zoo_model


@zoo_model
def small_cnn(in_channels: int = 3, num_classes: int = 10, width: int = 32,
              batch_norm: bool = False) -> nn.Sequential:
    """Two 3x3 conv blocks (each followed by 2x2 max-pooling), global average pooling and a
    linear read-out; works for any input size of at least 4x4."""

    def block(channels_in: int, channels_out: int) -> list[nn.Module]:
        layers: list[nn.Module] = [nn.Conv2d(channels_in, channels_out, 3, padding=1)]
        if batch_norm:
            layers.append(nn.BatchNorm2d(channels_out))
        return layers + [nn.ReLU(), nn.MaxPool2d(2)]

    return nn.Sequential(*block(in_channels, width), *block(width, 2 * width),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * width, num_classes))
