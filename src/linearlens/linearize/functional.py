"""A network as a function of one flat parameter vector (``linearlens.parameters``): the view the
telescoping model and the smoother share."""

from __future__ import annotations

from torch import Tensor, nn
from torch.func import functional_call, jvp

from ..parameters import ParameterLayout


def scalar_outputs(out: Tensor) -> Tensor:
    """(n, 1) or (n,) network outputs as (n,); anything wider is refused: the telescoping
    smoother and effective parameters are defined for one output."""
    if out.dim() > 2 or (out.dim() == 2 and out.shape[1] != 1):
        raise ValueError(f"expected one output per example, got outputs of shape {tuple(out.shape)}")
    return out.reshape(-1)


def outputs_at(model: nn.Module, params: dict[str, Tensor], x: Tensor) -> Tensor:
    """f_θ(x) with the parameters ``params`` (by name), leaving the model's own untouched."""
    return scalar_outputs(functional_call(model, params, (x,)))


def directional_derivative(layout: ParameterLayout, flat: Tensor, direction: Tensor, x: Tensor
                           ) -> tuple[Tensor, Tensor]:
    """(f_θ(x), ∇f_θ(x)ᵀ v) in one forward-mode pass, for θ = ``flat`` and v = ``direction`` (flat
    vectors of ``layout``)."""
    return jvp(lambda params: outputs_at(layout.model, params, x), (layout.split(flat),), (layout.split(direction),))
