"""Residual networks of basic blocks (He et al. 2016): the CIFAR ResNet-20 (Sec. 4.2: a 3x3 stem
of 16 channels, three stages of three blocks with 16, 32 and 64 channels, global average pooling,
a linear read-out), the CIFAR ResNet-18 (a 3x3 stem of 64 channels without max-pooling, four
stages of two blocks with 64-512 channels, projection shortcuts), with or without BatchNorm, and
their 1-D versions for signals."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from .names import zoo_model

CONV = {1: nn.Conv1d, 2: nn.Conv2d}
NORM = {1: nn.BatchNorm1d, 2: nn.BatchNorm2d}


def _norm(channels: int, batch_norm: bool, dims: int) -> nn.Module:
    return NORM[dims](channels) if batch_norm else nn.Identity()


class BasicBlock(nn.Module):
    """Two 3-wide convolutions and a shortcut. Without BatchNorm the convolutions get biases."""

    def __init__(self, channels_in: int, channels_out: int, stride: int, shortcut: str,
                 batch_norm: bool = True, dims: int = 2):
        super().__init__()
        conv = CONV[dims]
        self.conv1 = conv(channels_in, channels_out, 3, stride, padding=1, bias=not batch_norm)
        self.bn1 = _norm(channels_out, batch_norm, dims)
        self.conv2 = conv(channels_out, channels_out, 3, 1, padding=1, bias=not batch_norm)
        self.bn2 = _norm(channels_out, batch_norm, dims)
        self.projection = None
        self.pad = channels_out - channels_in
        if (stride != 1 or self.pad) and shortcut == "B":
            self.projection = nn.Sequential(conv(channels_in, channels_out, 1, stride, bias=not batch_norm),
                                            *([NORM[dims](channels_out)] if batch_norm else []))
        self.stride, self.dims = stride, dims

    def shortcut(self, x: torch.Tensor) -> torch.Tensor:
        if self.projection is not None:
            return self.projection(x)
        if self.stride == 1 and not self.pad:
            return x
        # Option A: subsample and zero-pad the new channels; no parameters.
        x = x[(slice(None), slice(None)) + (slice(None, None, self.stride),) * self.dims]
        return F.pad(x, (0, 0) * self.dims + (self.pad // 2, self.pad - self.pad // 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


@zoo_model
def resnet(widths: tuple[int, ...] = (16, 32, 64), blocks: tuple[int, ...] = (3, 3, 3), num_classes: int = 10,
           in_channels: int = 3, shortcut: str = "A", batch_norm: bool = True, dims: int = 2,
           init: str = "kaiming") -> nn.Sequential:
    """A 3-wide stem at widths[0] channels, then one stage per width with that stage's number of
    blocks (stride 2 at the start of every stage but the first), global average pooling and a
    linear read-out. shortcut "A" (zero-padding, Idelbayev's CIFAR implementation) or "B" (1x1
    projections). init "kaiming" redraws every conv and linear weight from the He normal;
    "residual_a3" is George's App. A.3 for training without BatchNorm; "default" keeps PyTorch's
    initialisation."""
    if shortcut not in ("A", "B"):
        raise ValueError(f"shortcut must be 'A' or 'B', got {shortcut!r}")
    if init not in ("default", "kaiming", "residual_a3"):
        raise ValueError(f"init must be 'default', 'kaiming' or 'residual_a3', got {init!r}")
    if len(widths) != len(blocks):
        raise ValueError(f"one block count per stage: widths {widths}, blocks {blocks}")
    layers: list[nn.Module] = [CONV[dims](in_channels, widths[0], 3, padding=1, bias=not batch_norm),
                               *([NORM[dims](widths[0])] if batch_norm else []), nn.ReLU()]
    channels = widths[0]
    for stage, (stage_width, count) in enumerate(zip(widths, blocks)):
        for block in range(count):
            stride = 2 if stage > 0 and block == 0 else 1
            layers.append(BasicBlock(channels, stage_width, stride, shortcut, batch_norm, dims))
            channels = stage_width
    pool = nn.AdaptiveAvgPool1d(1) if dims == 1 else nn.AdaptiveAvgPool2d(1)
    layers += [pool, nn.Flatten(), nn.Linear(channels, num_classes)]
    model = nn.Sequential(*layers)
    if init == "kaiming":
        for module in model.modules():
            if isinstance(module, (nn.Conv1d, nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(module.weight)
    elif init == "residual_a3":
        _residual_a3_init(model)
    return model


def _residual_a3_init(model: nn.Sequential) -> None:
    """George's thesis, App. A.3, for residual networks trained without BatchNorm (n the fan-in, biases
    0): W ~ N(0, 2/n) for a layer right after a ReLU (He); N(0, 1/n) for a layer after no activation
    (the stem on the image, the shortcut projections); N(0, 0.2/n) for the last convolution of each
    residual block (a tenth of He's, after Goyal et al. 2017). The read-out follows a ReLU and a
    pooling: 2/n."""
    def draw(module: nn.Module, variance: float) -> None:
        fan_in = module.weight[0].numel()
        nn.init.normal_(module.weight, 0.0, (variance / fan_in) ** 0.5)
        if module.bias is not None:
            nn.init.zeros_(module.bias)

    draw(model[0], 1.0)
    for module in model.modules():
        if isinstance(module, BasicBlock):
            draw(module.conv1, 2.0)
            draw(module.conv2, 0.2)
            if module.projection is not None:
                draw(module.projection[0], 1.0)
        elif isinstance(module, nn.Linear):
            draw(module, 2.0)


@zoo_model
def cifar_resnet(blocks_per_stage: int = 3, num_classes: int = 10, in_channels: int = 3, width: int = 16,
                 shortcut: str = "A") -> nn.Sequential:
    """He et al.'s CIFAR ResNet-(6b + 2): three stages of b basic blocks at width, 2·width and
    4·width channels."""
    return resnet((width, 2 * width, 4 * width), (blocks_per_stage,) * 3, num_classes, in_channels, shortcut)


@zoo_model
def resnet20(num_classes: int = 10, in_channels: int = 3, width: int = 16, shortcut: str = "A") -> nn.Sequential:
    """ResNet-20: three blocks per stage."""
    return cifar_resnet(3, num_classes, in_channels, width, shortcut)


@zoo_model
def resnet18(num_classes: int = 10, in_channels: int = 3, batch_norm: bool = True, init: str = "default") -> nn.Sequential:
    """The CIFAR ResNet-18 (11.17 M parameters with BatchNorm); without BatchNorm every norm
    layer is left out and the convolutions get biases."""
    return resnet((64, 128, 256, 512), (2, 2, 2, 2), num_classes, in_channels, "B", batch_norm, 2, init)


# --- torchvision's ImageNet ResNet-18 (He et al. 2016), with its parameter names ---------------

IMAGENET_WIDTHS = (64, 128, 256, 512)


class ImageNetBasicBlock(nn.Module):
    """torchvision's BasicBlock: conv1, bn1, conv2, bn2 and, where the shape changes, a
    ``downsample`` of a strided 1x1 convolution (and its BatchNorm). One ReLU module serves both
    activations, as in torchvision, so a hook on it fires twice per block."""

    def __init__(self, channels_in: int, channels_out: int, stride: int, batch_norm: bool, conv_bias: bool):
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, channels_out, 3, stride, padding=1, bias=conv_bias)
        self.bn1 = _norm(channels_out, batch_norm, 2)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(channels_out, channels_out, 3, 1, padding=1, bias=conv_bias)
        self.bn2 = _norm(channels_out, batch_norm, 2)
        self.downsample = None
        if stride != 1 or channels_in != channels_out:
            self.downsample = nn.Sequential(nn.Conv2d(channels_in, channels_out, 1, stride, bias=conv_bias),
                                            *([nn.BatchNorm2d(channels_out)] if batch_norm else []))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + (x if self.downsample is None else self.downsample(x)))


class TorchvisionResNet(nn.Module):
    """torchvision's ResNet after its stem: four stages of ``IMAGENET_WIDTHS`` (stride 2 at the
    start of every stage but the first), adaptive average pooling, ``fc``, and torchvision's
    initialisation. A subclass makes its stem (conv1, bn1, relu, maxpool), then calls
    ``add_stages`` with its kind of block."""

    def add_stages(self, make_block: Callable[[int, int, int], nn.Module], blocks: tuple[int, ...],
                   expansion: int, num_classes: int) -> None:
        """``make_block(channels_in, width, stride)``; a block puts out ``width · expansion`` channels."""
        channels = IMAGENET_WIDTHS[0]
        for stage, (width, count) in enumerate(zip(IMAGENET_WIDTHS, blocks), start=1):
            stage_blocks = []
            for block in range(count):
                stride = 2 if stage > 1 and block == 0 else 1
                stage_blocks.append(make_block(channels, width, stride))
                channels = width * expansion
            setattr(self, f"layer{stage}", nn.Sequential(*stage_blocks))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(channels, num_classes)
        for module in self.modules():  # torchvision's initialisation; fc keeps PyTorch's default
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(module, nn.BatchNorm2d):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class ImageNetResNet(TorchvisionResNet):
    """torchvision's ResNet of basic blocks: a 7x7 stride-2 stem and a 3x3 stride-2 max-pool."""

    def __init__(self, blocks: tuple[int, ...], num_classes: int, in_channels: int, batch_norm: bool,
                 conv_bias: bool):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, IMAGENET_WIDTHS[0], 7, 2, padding=3, bias=conv_bias)
        self.bn1 = _norm(IMAGENET_WIDTHS[0], batch_norm, 2)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, 2, padding=1)
        self.add_stages(lambda channels, width, stride: ImageNetBasicBlock(channels, width, stride, batch_norm,
                                                                           conv_bias),
                        blocks, 1, num_classes)


@zoo_model
def imagenet_resnet18(num_classes: int = 10, in_channels: int = 3, batch_norm: bool = True,
                      conv_bias: bool | None = None) -> ImageNetResNet:
    """torchvision's ResNet-18 (11,689,512 parameters with BatchNorm and 1000 classes), under
    torchvision's parameter names, so its ImageNet state dict loads strictly. Without BatchNorm every
    norm layer is left out. ``conv_bias`` (default: only without BatchNorm) gives the convolutions
    biases; the George thesis code's ``resnet18(norm_layer=Identity)`` keeps torchvision's bias-free
    convolutions (conv_bias=False). Conv weights are He-normal (fan_out), conv biases keep PyTorch's
    default draw."""
    conv_bias = not batch_norm if conv_bias is None else conv_bias
    return ImageNetResNet((2, 2, 2, 2), num_classes, in_channels, batch_norm, conv_bias)
