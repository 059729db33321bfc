"""ResNet-50 (He et al. 2016): torchvision's network of bottleneck blocks under its parameter names
(conv1, bn1, layer1.0.conv1, ..., downsample.0/1, fc), with a stem for small inputs as our
choice for George ch. 3 on 64x64 Tiny ImageNet: a 3x3 stride-1 first convolution and no
max-pooling (23.9 M parameters with 200 classes; torchvision's ImageNet stem is ``small_inputs=False``)."""

from __future__ import annotations

import torch
from torch import nn

from .names import zoo_model
from .resnet import IMAGENET_WIDTHS, TorchvisionResNet

EXPANSION = 4


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (carrying the stride, as torchvision's v1.5), 1x1 expand by 4, each with
    BatchNorm; a strided 1x1 projection with BatchNorm where the shape changes."""

    def __init__(self, channels_in: int, width: int, stride: int):
        super().__init__()
        channels_out = width * EXPANSION
        self.conv1 = nn.Conv2d(channels_in, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, channels_out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(channels_out)
        self.relu = nn.ReLU()
        self.downsample = None
        if stride != 1 or channels_in != channels_out:
            self.downsample = nn.Sequential(nn.Conv2d(channels_in, channels_out, 1, stride, bias=False),
                                            nn.BatchNorm2d(channels_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + (x if self.downsample is None else self.downsample(x)))


class BottleneckResNet(TorchvisionResNet):
    def __init__(self, blocks: tuple[int, ...], num_classes: int, in_channels: int, small_inputs: bool):
        super().__init__()
        if small_inputs:
            self.conv1 = nn.Conv2d(in_channels, IMAGENET_WIDTHS[0], 3, 1, padding=1, bias=False)
            self.maxpool = nn.Identity()
        else:
            self.conv1 = nn.Conv2d(in_channels, IMAGENET_WIDTHS[0], 7, 2, padding=3, bias=False)
            self.maxpool = nn.MaxPool2d(3, 2, padding=1)
        self.bn1 = nn.BatchNorm2d(IMAGENET_WIDTHS[0])
        self.relu = nn.ReLU()
        self.add_stages(Bottleneck, blocks, EXPANSION, num_classes)


@zoo_model
def resnet50(num_classes: int = 1000, in_channels: int = 3, small_inputs: bool = True) -> BottleneckResNet:
    """Stages of 3, 4, 6 and 3 bottleneck blocks. small_inputs: the 3x3 stride-1 stem without
    max-pooling (for 64x64 images); False: torchvision's 7x7 stride-2 stem and max-pooling
    (25,557,032 parameters with 1,000 classes)."""
    return BottleneckResNet((3, 4, 6, 3), num_classes, in_channels, small_inputs)
