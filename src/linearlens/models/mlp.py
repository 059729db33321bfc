"""Fully connected networks."""

from __future__ import annotations

import torch
from torch import nn

from .names import zoo_model

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU, "elu": nn.ELU, "sigmoid": nn.Sigmoid,
               "identity": nn.Identity}


@zoo_model
def mlp(in_features: int, hidden: list[int], out_features: int, activation: str = "relu",
        init_scale: float = 1.0, sigmoid_output: bool = False) -> nn.Sequential:
    """Linear layers of the given hidden widths with ``activation`` between them.

    init_scale multiplies every parameter, biases included, after PyTorch's default init (the
    α of large-initialisation experiments); sigmoid_output squashes the output into (0, 1).
    """
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
    widths = [in_features, *hidden]
    layers: list[nn.Module] = [nn.Flatten()]
    for width_in, width_out in zip(widths, widths[1:]):
        layers += [nn.Linear(width_in, width_out), ACTIVATIONS[activation]()]
    layers.append(nn.Linear(widths[-1], out_features))
    if sigmoid_output:
        layers.append(nn.Sigmoid())
    model = nn.Sequential(*layers)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.mul_(init_scale)
    return model


@zoo_model
def autoencoder(in_features: int, encoder: list[int], activation: str = "sigmoid",
                batch_norm: bool = False) -> nn.Sequential:
    """A deep auto-encoder (Hinton & Salakhutdinov's, thesis ch. 4): Linear layers of the widths
    ``encoder`` (the last one the code), each followed by ``activation``, then the mirrored decoder
    with its own (untied) weights back to ``in_features``. The output is the reconstruction's
    logits, for binary cross-entropy with logits. batch_norm puts a BatchNorm1d before every
    hidden activation (the first-order baselines' variant)."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
    widths = [in_features, *encoder, *reversed(encoder[:-1])]
    layers: list[nn.Module] = [nn.Flatten()]
    for width_in, width_out in zip(widths, widths[1:]):
        layers.append(nn.Linear(width_in, width_out))
        if batch_norm:
            layers.append(nn.BatchNorm1d(width_out))
        layers.append(ACTIVATIONS[activation]())
    layers.append(nn.Linear(widths[-1], in_features))
    return nn.Sequential(*layers)
