"""ResNet-20 for 32x32 images (He et al. 2016, Sec. 4.2): a 3x3 stem of 16 channels, three stages
of three basic blocks with 16, 32 and 64 channels, global average pooling, a linear read-out."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class BasicBlock(nn.Module):
    def __init__(self, channels_in: int, channels_out: int, stride: int, shortcut: str):
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, channels_out, 3, stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels_out)
        self.conv2 = nn.Conv2d(channels_out, channels_out, 3, 1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels_out)
        self.projection = None
        self.pad = channels_out - channels_in
        if (stride != 1 or self.pad) and shortcut == "B":
            self.projection = nn.Sequential(
                nn.Conv2d(channels_in, channels_out, 1, stride, bias=False), nn.BatchNorm2d(channels_out))
        self.stride = stride

    def shortcut(self, x: torch.Tensor) -> torch.Tensor:
        if self.projection is not None:
            return self.projection(x)
        if self.stride == 1 and not self.pad:
            return x
        # Option A: subsample and zero-pad the new channels; no parameters.
        x = x[:, :, ::self.stride, ::self.stride]
        return F.pad(x, (0, 0, 0, 0, self.pad // 2, self.pad - self.pad // 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


def cifar_resnet(blocks_per_stage: int = 3, num_classes: int = 10, in_channels: int = 3, width: int = 16,
                 shortcut: str = "A") -> nn.Sequential:
    """He et al.'s CIFAR ResNet-(6b + 2): three stages of b basic blocks at width, 2·width and
    4·width channels. shortcut "A" (zero-padding, Idelbayev's CIFAR implementation) or "B" (1x1
    projections)."""
    if shortcut not in ("A", "B"):
        raise ValueError(f"shortcut must be 'A' or 'B', got {shortcut!r}")
    layers: list[nn.Module] = [nn.Conv2d(in_channels, width, 3, padding=1, bias=False),
                               nn.BatchNorm2d(width), nn.ReLU()]
    channels = width
    for stage, stage_width in enumerate((width, 2 * width, 4 * width)):
        for block in range(blocks_per_stage):
            stride = 2 if stage > 0 and block == 0 else 1
            layers.append(BasicBlock(channels, stage_width, stride, shortcut))
            channels = stage_width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, num_classes)]
    model = nn.Sequential(*layers)
    for module in model.modules():
        if isinstance(module, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_normal_(module.weight)
    return model


def resnet20(num_classes: int = 10, in_channels: int = 3, width: int = 16, shortcut: str = "A") -> nn.Sequential:
    """ResNet-20: three blocks per stage."""
    return cifar_resnet(3, num_classes, in_channels, width, shortcut)
