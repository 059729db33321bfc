"""Which matrix a curvature representation approximates: F = (1/n) Σ_i Σ_k g_ik g_ikᵀ, with
g_ik = J(x_i)ᵀ s_ik the gradient of the seed s_ik · f(x_i) (``linearlens.capture``).

The seeds make the outer products those of log-likelihood gradients, ∇_w log p(y | x_i, w) =
J(x_i)ᵀ ∇_f log p(y | f):

* categorical likelihood (p = softmax f), ∇_f log p(y | f) = e_y − p:
  - "exact": the expectation over y ~ p(y | x) in closed form (Pascanu & Bengio), seeds
    √p_y (e_y − p) for every class y, since Σ_y p_y (e_y − p)(e_y − p)ᵀ = diag(p) − ppᵀ;
  - "mc": ``samples`` labels ŷ ~ p(y | x) per example, seeds (e_ŷ − p)/√samples;
  - "empirical": the observed label, seed e_y − p (the "empirical Fisher", thesis ch. 4's G̃);
* gaussian likelihood N(y | f, I), ∇_f log p(y | f) = y − f:
  - "exact": seeds e_a for every output a, so F = (1/n) Σ_i J_iᵀ J_i (the L² metric, 2.4.9);
  - "mc": ε ~ N(0, I) per sample, seeds ε/√samples; "empirical": seed y − f.
* bernoulli likelihood, one independent Bernoulli per output with logit f_a (a sigmoid output
  under binary cross-entropy, thesis ch. 4's auto-encoder), ∇_f log p(y | f) = y − σ(f):
  - "exact": seeds √(σ_a(1 − σ_a)) e_a for every output a, since E[(y − σ)(y − σ)ᵀ] = diag(σ(1 − σ));
  - "mc": ŷ_a ~ Bernoulli(σ_a) per sample, seeds (ŷ − σ)/√samples; "empirical": seed y − σ(f).

Monte-Carlo draws are fixed per example when the source is made (uniform numbers turned into
labels through the current probabilities), so every pass over the data sees the same matrix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

LIKELIHOODS = ("categorical", "gaussian", "bernoulli")
VARIANTS = ("exact", "mc", "empirical")


@dataclass
class FisherSource:
    """The data and the likelihood that define F; ``chunks`` hands out examples with their seeds."""

    model: nn.Module
    x: Tensor
    labels: Tensor | None = None  # class indices (categorical), targets (gaussian) or {0, 1} targets (bernoulli)
    likelihood: str = "categorical"
    variant: str = "exact"
    samples: int = 1
    seed: int = 0
    draws: Tensor = field(init=False, repr=False)

    def __post_init__(self):
        if self.likelihood not in LIKELIHOODS:
            raise ValueError(f"likelihood must be one of {LIKELIHOODS}, got {self.likelihood!r}")
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {self.variant!r}")
        if self.variant == "empirical" and self.labels is None:
            raise ValueError("the empirical variant needs the observed labels")
        if self.samples < 1:
            raise ValueError(f"samples must be at least 1, got {self.samples}")
        generator = torch.Generator().manual_seed(self.seed)
        n, dtype = len(self.x), torch.get_default_dtype()
        if self.variant != "mc":
            self.draws = torch.empty(n, 0)
        elif self.likelihood == "categorical":
            self.draws = torch.rand(n, self.samples, generator=generator, dtype=dtype)
        else:
            with torch.no_grad():
                outputs = self.model(self.x[:1]).reshape(1, -1).shape[1]
            draw = torch.randn if self.likelihood == "gaussian" else torch.rand
            self.draws = draw(n, self.samples, outputs, generator=generator, dtype=dtype)

    @property
    def n(self) -> int:
        return len(self.x)

    def seeds_per_example(self) -> int:
        """k: the gradients per example whose outer products F sums."""
        if self.variant == "mc":
            return self.samples
        if self.variant == "empirical":
            return 1
        with torch.no_grad():  # exact: one per output
            return self.model(self.x[:1]).reshape(1, -1).shape[1]

    def chunks(self, size: int) -> Iterator[tuple[Tensor, Callable[[Tensor], Tensor]]]:
        """(examples, seeds as a function of their detached (m, c) outputs), ``size`` at a time."""
        for start in range(0, self.n, size):
            span = slice(start, min(start + size, self.n))
            yield self.x[span], self._seeds_for(span)

    def _seeds_for(self, span: slice) -> Callable[[Tensor], Tensor]:
        draws = self.draws[span]
        labels = None if self.labels is None else self.labels[span]
        return lambda out: output_seeds(out, self.likelihood, self.variant, labels, draws)


def output_seeds(out: Tensor, likelihood: str, variant: str, labels: Tensor | None,
                 draws: Tensor) -> Tensor:
    """(m, k, c) seeds for outputs ``out`` (m, c); see the module's docstring."""
    out = out.detach()
    draws = draws.to(out)
    if likelihood == "gaussian":
        if variant == "exact":
            return torch.eye(out.shape[1], dtype=out.dtype, device=out.device).expand(len(out), -1, -1)
        if variant == "mc":
            return draws / draws.shape[1] ** 0.5
        return (labels.to(out).reshape(out.shape) - out)[:, None, :]
    if likelihood == "bernoulli":
        return _bernoulli_seeds(out, variant, labels, draws)
    p = torch.softmax(out, dim=1)
    eye = torch.eye(out.shape[1], dtype=out.dtype, device=out.device)
    if variant == "exact":
        return p.sqrt()[:, :, None] * (eye[None] - p[:, None, :])
    if variant == "mc":
        cumulative = p.cumsum(1)
        sampled = torch.searchsorted(cumulative, draws.contiguous()).clamp_(max=out.shape[1] - 1)
        return (eye[sampled] - p[:, None, :]) / draws.shape[1] ** 0.5
    return (eye[labels.to(out.device).long()] - p)[:, None, :]


def _bernoulli_seeds(logits: Tensor, variant: str, labels: Tensor | None, draws: Tensor) -> Tensor:
    p = torch.sigmoid(logits)
    if variant == "exact":
        return torch.diag_embed((p * (1 - p)).sqrt())
    if variant == "mc":
        return ((draws < p[:, None, :]).to(p) - p[:, None, :]) / draws.shape[1] ** 0.5
    return (labels.to(logits).reshape(logits.shape) - p)[:, None, :]
