"""Wide residual networks with pre-activation blocks (Zagoruyko & Komodakis 2016) in the layout of
Karp's chapter 3 (App. B.3, the authors' code): a 3x3 stem, three groups of ``blocks`` blocks at
``widths`` channels (16k, 32k, 64k for widening factor k; strides 1, 2, 2), BN-ReLU, an average
pool of ``pool`` x ``pool`` and a linear read-out. WRN-10-10 is ``wide_resnet()``: one block per
group, widths 160/320/640, 7 convolutions besides the 1x1 shortcuts, about 7.4M parameters.

A block is BN-ReLU-Conv3x3(stride)-BN-ReLU-Conv3x3 on the main path and a 1x1 convolution of the
block's raw input as the shortcut (a projection wherever the shape changes). Every ReLU is its
own module, so that probes can hook each one (Fig 3.2's activation sparsity).

BatchNorm: ``batch_statistics="always"`` normalises by the batch's statistics in training and in
evaluation alike, as the authors' JAX BatchNorm does; ``"running"`` keeps running
averages for evaluation (PyTorch's default), which a linearisation needs for its frozen
statistics. The two build identical parameters from the same seed."""

from __future__ import annotations

from torch import Tensor, nn

from .names import zoo_model

BATCH_STATISTICS = ("always", "running")


def _norm(channels: int, batch_statistics: str) -> nn.BatchNorm2d:
    if batch_statistics not in BATCH_STATISTICS:
        raise ValueError(f"batch_statistics must be one of {BATCH_STATISTICS}, got {batch_statistics!r}")
    return nn.BatchNorm2d(channels, track_running_stats=batch_statistics == "running")


class PreActivationBlock(nn.Module):
    def __init__(self, channels_in: int, channels_out: int, stride: int, batch_statistics: str):
        super().__init__()
        self.bn1 = _norm(channels_in, batch_statistics)
        self.relu1 = nn.ReLU()
        self.conv1 = nn.Conv2d(channels_in, channels_out, 3, stride, padding=1, bias=False)
        self.bn2 = _norm(channels_out, batch_statistics)
        self.relu2 = nn.ReLU()
        self.conv2 = nn.Conv2d(channels_out, channels_out, 3, 1, padding=1, bias=False)
        self.shortcut = (nn.Conv2d(channels_in, channels_out, 1, stride, bias=False)
                         if stride != 1 or channels_in != channels_out else nn.Identity())

    def forward(self, x: Tensor) -> Tensor:
        out = self.conv1(self.relu1(self.bn1(x)))
        out = self.conv2(self.relu2(self.bn2(out)))
        return out + self.shortcut(x)


@zoo_model
def wide_resnet(widths: tuple[int, ...] = (160, 320, 640), blocks: int = 1, num_classes: int = 10,
                in_channels: int = 3, stem: int = 16, image_size: int = 32, pool: int = 8,
                batch_statistics: str = "always") -> nn.Sequential:
    """The WRN of the thesis's chapter 3 on ``image_size`` x ``image_size`` inputs; the read-out
    sees the (image_size / 4 / pool)² pooled positions of the last group (a 2 x 2 map for 64 x 64
    inputs and an 8 x 8 pool, App. B.4)."""
    downsampling = 2 ** (len(widths) - 1)
    if image_size % (downsampling * pool):
        raise ValueError(f"image_size {image_size} is not a multiple of {downsampling} (strides) x {pool} (pool)")
    layers: list[nn.Module] = [nn.Conv2d(in_channels, stem, 3, 1, padding=1, bias=False)]
    channels = stem
    for group, width in enumerate(widths):
        for block in range(blocks):
            stride = 2 if group > 0 and block == 0 else 1
            layers.append(PreActivationBlock(channels, width, stride, batch_statistics))
            channels = width
    positions = (image_size // downsampling // pool) ** 2
    layers += [_norm(channels, batch_statistics), nn.ReLU(), nn.AvgPool2d(pool), nn.Flatten(),
               nn.Linear(channels * positions, num_classes)]
    return nn.Sequential(*layers)
