"""Directions in parameter space and how far moving along them moves the function (George thesis
§B.1.4, Fig B.1).

The Jacobian Φ (n·c × P) of the outputs on n examples has the SVD Φ = Σ_J sqrt(λ_J) u_J v_Jᵀ (B.1.23),
so a small step δw moves the outputs by δf = Φ δw = Σ_J sqrt(λ_J) (v_Jᵀ δw) u_J (B.1.24): a step
along the top right singular vector v_1 changes f by sqrt(λ_1)·|δw|, a step in a random direction
by about sqrt(Tr K / P)·|δw|. The right singular vectors come without forming Φ: the eigenvectors
u_J of the Gram K = Φ Φᵀ (``kernels.ntk.empirical_ntk``, layer-wise) give v_J = Φᵀ u_J / sqrt(λ_J),
one vector-Jacobian product each.

Parameter vectors are flat (``linearlens.parameters``: the trainable parameters in
``named_parameters`` order, the Jacobian's column order in ``kernels.ntk``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.func import functional_call

from ..parameters import ParameterLayout
from ..train.runtime import full_float32
from .alignment import eigendecomposition
from .ntk import empirical_ntk

# Eigenvalues below this share of the largest are numerically zero: no singular direction there.
RELATIVE_EIGENVALUE_FLOOR = 1e-10


@dataclass
class SingularDirections:
    """The top k singular triplets of the Jacobian on some examples."""

    spectrum: Tensor  # (n·c,) every eigenvalue of K = Φ Φᵀ, non-increasing (float64)
    left: Tensor  # (k, n, c) u_j, the Gram's eigenvectors in its (example, output) layout
    right: Tensor  # (k, P) v_j = Φᵀ u_j / sqrt(λ_j), orthonormal

    @property
    def eigenvalues(self) -> Tensor:
        """λ_1 ≥ … ≥ λ_k: the squared singular values of the k directions."""
        return self.spectrum[:len(self.right)]


def _flat_outputs(model: nn.Module, x: Tensor) -> Tensor:
    out = model(x)
    return out.reshape(out.shape[0], -1)


@full_float32()
def jacobian_transpose_products(model: nn.Module, x: Tensor, vectors: Tensor) -> Tensor:
    """Φᵀ u for each u in ``vectors`` (k, n, c): the gradient of Σ_{i,a} u_ia f_a(x_i), from one
    forward pass and one backward pass per vector; (k, P)."""
    layout = ParameterLayout(model)
    params = layout.parameters()
    with torch.enable_grad():
        out = _flat_outputs(model, x)
        if vectors.shape[1:] != out.shape:
            raise ValueError(f"vectors must be (k, {out.shape[0]}, {out.shape[1]}), got {tuple(vectors.shape)}")
        products = []
        for index, u in enumerate(vectors):
            grads = torch.autograd.grad(out, list(params.values()), grad_outputs=u.to(out),
                                        retain_graph=index < len(vectors) - 1, allow_unused=True)
            products.append(layout.flatten({name: torch.zeros_like(p) if g is None else g
                                            for (name, p), g in zip(params.items(), grads)}))
    return torch.stack(products)


@full_float32()
def top_singular_directions(model: nn.Module, x: Tensor, k: int) -> SingularDirections:
    """The k right singular vectors of the Jacobian of all outputs on ``x`` with the largest singular
    values (B.1.23), from the eigendecomposition of the (n·c × n·c) tangent Gram (in float64)."""
    gram = empirical_ntk(model, x, output="full").detach().double()
    values, vectors = eigendecomposition(gram)
    n, c = len(x), len(values) // len(x)
    if not 1 <= k <= len(values):
        raise ValueError(f"the Jacobian on {n} examples × {c} outputs has {len(values)} singular directions, "
                         f"asked for {k}")
    if values[k - 1] <= RELATIVE_EIGENVALUE_FLOOR * values[0]:
        raise ValueError(f"the Gram has rank below {k} (λ_{k} / λ_1 = {float(values[k - 1] / values[0]):.2e}): "
                         "ask for fewer directions")
    left = vectors[:, :k].T.reshape(k, n, c)
    dtype = next(iter(ParameterLayout(model).parameters().values())).dtype
    products = jacobian_transpose_products(model, x, left.to(dtype))
    right = products / values[:k].sqrt().to(products)[:, None]
    return SingularDirections(values, left, right.detach())


def random_unit_directions(count: int, dimension: int, generator: torch.Generator,
                           dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu") -> Tensor:
    """``count`` directions drawn uniformly on the unit sphere of R^dimension (normalised Gaussians,
    drawn on the CPU from ``generator`` so that a seed gives the same directions on every device; one
    float64 draw at a time, so a 9M-parameter VGG11 needs no float64 copy of all of them)."""
    directions = torch.empty(count, dimension, dtype=dtype, device=device)
    for row in directions:
        draw = torch.randn(dimension, generator=generator, dtype=torch.float64)
        row.copy_(draw / torch.linalg.vector_norm(draw))
    return directions


@full_float32()
@torch.no_grad()
def output_changes(model: nn.Module, directions: Iterable[Tensor], epsilon: float, x: Tensor,
                   batch_size: int = 1000) -> Tensor:
    """‖f_{w + ε v}(X) − f_w(X)‖₂ over every example and output of ``x``, for each direction v
    (the model's own parameters are left as they are); (number of directions,) in float64."""
    layout = ParameterLayout(model)
    w = layout.vector()

    def outputs(params: dict[str, Tensor] | None) -> Tensor:
        parts = [(_flat_outputs(model, part) if params is None else
                  functional_call(model, params, (part,)).reshape(len(part), -1))
                 for part in x.split(batch_size)]
        return torch.cat(parts)

    reference = outputs(None)
    changes = []
    for v in directions:
        moved = outputs(layout.split(w + epsilon * v.to(w)))
        changes.append(torch.linalg.vector_norm((moved - reference).double()))
    return torch.stack(changes)
