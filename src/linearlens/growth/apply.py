"""Growing a layered network in depth (Karp ch. 5, Sec 5.2): an L-layer model becomes an
(L + k)-layer one by growing k consecutive layers into 2k.

The operators themselves (names, layer orders, search spaces) are ``growth.operators``.
Stacking is iterated growing; post-stacking grows the last b layers with block size b
(``stack_on_top``).

Growing carries the optimiser's state (our choice: the thesis does not say): every kept layer keeps its parameters
and Adam moments exactly, a duplicated layer starts from its source's parameters and moments, a
random layer from zero moments. Every parameter keeps the global step count, as one optimiser
step counter for the whole model would (optax, the authors' stack).
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from .operators import GrowthOperator


def parameter_sources(model: nn.Module, operator: GrowthOperator) -> dict[str, str | None]:
    """For each parameter name of the grown model, the name of the original parameter it starts
    from (None: freshly initialised). Layers are ``model.blocks``; everything else is kept."""
    sources = {name: name for name, _ in model.named_parameters() if not name.startswith("blocks.")}
    block_names = [name for name, _ in model.blocks[0].named_parameters()]
    for position, (source, is_new) in enumerate(operator.layer_order(len(model.blocks))):
        for name in block_names:
            fresh = is_new and operator.init == "random"
            sources[f"blocks.{position}.{name}"] = None if fresh else f"blocks.{source}.{name}"
    return sources


def grow(model: nn.Module, operator: GrowthOperator, generator: torch.Generator | None = None) -> nn.Module:
    """The grown model (the original is left as it was). Random layers come from
    ``model.new_block(generator)``, the model's own initialisation."""
    blocks = [model.new_block(generator) if is_new and operator.init == "random" else copy.deepcopy(model.blocks[source])
              for source, is_new in operator.layer_order(len(model.blocks))]
    original_blocks, model.blocks = model.blocks, nn.ModuleList()
    try:
        grown = copy.deepcopy(model)
    finally:
        model.blocks = original_blocks
    grown.blocks = nn.ModuleList(blocks)
    return grown


def carry_optimiser_state(optimiser: torch.optim.Optimizer, model: nn.Module, grown_optimiser: torch.optim.Optimizer,
                          grown_model: nn.Module, sources: dict[str, str | None]) -> None:
    """Fill ``grown_optimiser``'s per-parameter state from ``optimiser``'s by ``sources``: copied
    for kept and duplicated parameters; zero moments with the global step for random ones."""
    state = {name: optimiser.state[p] for name, p in model.named_parameters() if p in optimiser.state}
    if not state:
        return
    template = next(iter(state.values()))  # a fresh layer gets the same entries: the step, zero moments
    for name, parameter in grown_model.named_parameters():
        source = sources[name]
        grown_optimiser.state[parameter] = (
            {key: value.clone() for key, value in state[source].items()} if source is not None
            else {key: value.clone() if key == "step" else torch.zeros_like(parameter) for key, value in template.items()})
