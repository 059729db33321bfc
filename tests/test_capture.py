"""The per-layer capture's own pieces: convolution patches against F.unfold."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from linearlens.capture import _patches

CONVOLUTIONS = {
    "3x3 pad 1": lambda: nn.Conv2d(3, 4, 3, padding=1),
    "3x3 stride 2": lambda: nn.Conv2d(3, 4, 3, padding=1, stride=2),
    "2x3 pad (0, 2) stride (2, 1)": lambda: nn.Conv2d(3, 4, (2, 3), padding=(0, 2), stride=(2, 1)),
    "1x1 stride 2": lambda: nn.Conv2d(3, 4, 1, stride=2),
    "dilated": lambda: nn.Conv2d(3, 4, 3, padding=2, dilation=2),
    "conv1d": lambda: nn.Conv1d(3, 4, 5, padding=2, stride=3),
}


@pytest.mark.parametrize("name", CONVOLUTIONS)
def test_patches_are_those_f_unfold_gives(name):
    conv = CONVOLUTIONS[name]()
    torch.manual_seed(0)
    if isinstance(conv, nn.Conv1d):
        h = torch.randn(2, 3, 11)
        expected = F.unfold(h.unsqueeze(2), (1, conv.kernel_size[0]), padding=(0, conv.padding[0]),
                            stride=(1, conv.stride[0]))
    else:
        h = torch.randn(2, 3, 7, 9)
        expected = F.unfold(h, conv.kernel_size, dilation=conv.dilation, padding=conv.padding, stride=conv.stride)
    assert torch.equal(_patches(conv, h), expected)
    # and the product with the weights is the convolution itself
    out = conv(h).flatten(2)
    weights = conv.weight.flatten(1)
    assert torch.allclose(weights @ _patches(conv, h) + conv.bias[:, None], out, atol=1e-5)
