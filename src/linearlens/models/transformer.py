"""A small pre-LN transformer language model (Karp ch. 5's growing experiments): token and learned
position embeddings, a stack of pre-LayerNorm blocks (attention, then a GELU MLP, each added to the
residual stream), a final LayerNorm and an untied output layer.

``causal=True`` is a decoder (next-token prediction, the UL2 proxy); ``causal=False`` an encoder
with bidirectional attention for masked-LM training (BERT). The blocks sit in ``model.blocks``, so
a growth operator (``growth.apply``) can reorder, copy or add them.

Weights start as BERT's do (our choice: the thesis does not say): every Linear and Embedding weight N(0, 0.02²),
biases zero, LayerNorm γ = 1 and β = 0; a randomly initialised new layer in growing uses the same.
Attention runs torch's fused kernel (``scaled_dot_product_attention``: no (length × length) score
matrix is kept for the backward pass, which at BERT's 256 × 512 tokens would not fit a GPU), except
under a torch.func transform (vmap, jvp, grad), where it is written out with plain matmuls: the
fused CPU kernel has no forward-mode rule and no vmap batching rule.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .names import zoo_model

INIT_STD = 0.02


class TransformerBlock(nn.Module):
    """x + attention(LN(x)), then + MLP(LN(·))."""

    def __init__(self, width: int, heads: int, hidden: int, causal: bool):
        super().__init__()
        if width % heads:
            raise ValueError(f"width {width} is not divisible by {heads} heads")
        self.heads, self.causal = heads, causal
        self.attention_norm = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.attention_out = nn.Linear(width, width)
        self.mlp_norm = nn.LayerNorm(width)
        self.mlp_in = nn.Linear(width, hidden)
        self.mlp_out = nn.Linear(hidden, width)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, width = x.shape
        q, k, v = self.qkv(x).view(batch, length, 3, self.heads, width // self.heads).permute(2, 0, 3, 1, 4)
        mix = plain_attention if under_functorch(q) else F.scaled_dot_product_attention
        mixed = mix(q, k, v, is_causal=self.causal).transpose(1, 2).reshape(batch, length, width)
        return self.attention_out(mixed)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.attention_norm(x))
        return x + self.mlp_out(F.gelu(self.mlp_in(self.mlp_norm(x))))


def plain_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, is_causal: bool) -> torch.Tensor:
    """softmax(q kᵀ / √d) v over (batch, heads, length, d), later positions masked when causal."""
    scores = q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5
    if is_causal:
        future = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    return scores.softmax(-1) @ v


def under_functorch(x: torch.Tensor) -> bool:
    """Whether ``x`` is traced by a torch.func transform (vmap, grad, jvp)."""
    return torch._C._functorch.is_functorch_wrapped_tensor(x)


class TransformerLM(nn.Module):
    def __init__(self, vocab_size: int, context: int, width: int, heads: int, hidden: int, layers: int,
                 causal: bool):
        super().__init__()
        self.block_shape = {"width": width, "heads": heads, "hidden": hidden, "causal": causal}
        self.token_embedding = nn.Embedding(vocab_size, width)
        self.position_embedding = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(self.new_block() for _ in range(layers))
        self.final_norm = nn.LayerNorm(width)
        self.output = nn.Linear(width, vocab_size)
        initialise_(self)

    def new_block(self, generator: torch.Generator | None = None) -> TransformerBlock:
        """A freshly initialised block of this model's shape (a growth operator's random layer)."""
        block = TransformerBlock(**self.block_shape)
        initialise_(block, generator)
        return block

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits (batch, length, vocab) of token ids (batch, length)."""
        positions = self.position_embedding.weight[: tokens.shape[1]]
        x = self.token_embedding(tokens) + positions
        for block in self.blocks:
            x = block(x)
        return self.output(self.final_norm(x))


@torch.no_grad()
def initialise_(module: nn.Module, generator: torch.Generator | None = None) -> None:
    """BERT's initialisation of every Linear, Embedding and LayerNorm inside ``module``."""
    for layer in module.modules():
        if isinstance(layer, (nn.Linear, nn.Embedding)):
            layer.weight.normal_(0.0, INIT_STD, generator=generator)
        if isinstance(layer, nn.Linear) and layer.bias is not None:
            layer.bias.zero_()
        if isinstance(layer, nn.LayerNorm):
            layer.weight.fill_(1.0)
            layer.bias.zero_()


@zoo_model
def transformer_lm(vocab_size: int = 257, context: int = 32, width: int = 32, heads: int = 4, hidden: int = 128,
                   layers: int = 6, causal: bool = True) -> TransformerLM:
    """The zoo's language model: ``layers`` pre-LN blocks of ``width`` with ``heads`` heads and an
    MLP of ``hidden`` units, over byte tokens (256) plus a [MASK] token by default."""
    return TransformerLM(vocab_size, context, width, heads, hidden, layers, causal)
