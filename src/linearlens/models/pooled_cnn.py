"""The small CNN that stands in for ResNet50 in George ch. 3 at quick scale (Figs 3.3-3.7):
two 3x3 convolutions (padding 1) with ReLUs, one 2x2 max-pooling, and a linear read-out of the
flattened map (for 8x8 digits: 80 + 584 + 1,290 = 1,954 parameters)."""

from __future__ import annotations

from torch import nn

from .names import zoo_model


@zoo_model
def conv_pool_cnn(in_channels: int = 1, num_classes: int = 10, width: int = 8, image_size: int = 8) -> nn.Sequential:
    """image_size: the side of the square inputs, which sets the read-out's width."""
    if image_size < 2:
        raise ValueError(f"the 2x2 max-pooling needs inputs of side at least 2, got {image_size}")
    pooled = image_size // 2
    return nn.Sequential(nn.Conv2d(in_channels, width, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(width, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(width * pooled * pooled, num_classes))
