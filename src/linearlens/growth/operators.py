"""Growth operators as names and layer orders (Karp ch. 5, Sec 5.2), torch-free so the workflow and
the analysis can list them: an operator is (start, block size b, init); the k layers from ``start``
are cut into blocks of b and after each block come b new layers, copies of that block
("duplicate") or freshly initialised ("random"). ``start`` is 0-indexed, as the thesis's search
space {0, 2, 4, 6, 8} is (Sec 5.2.1's i is 1-indexed: i = start + 1). Applying one to a
model is ``growth.apply``."""

from __future__ import annotations

from dataclasses import dataclass

INITS = ("random", "duplicate")


@dataclass(frozen=True)
class GrowthOperator:
    start: int  # the first grown layer, 0-indexed
    block_size: int
    init: str  # "random" or "duplicate"
    grown: int  # k: the number of layers added

    def __post_init__(self):
        if self.init not in INITS:
            raise ValueError(f"growth init {self.init!r} is not one of {INITS}")
        if self.block_size < 1 or self.grown % self.block_size:
            raise ValueError(f"block size {self.block_size} does not divide the {self.grown} grown layers")
        if self.start < 0:
            raise ValueError(f"start {self.start} is negative (starts are 0-indexed)")

    @property
    def name(self) -> str:
        return f"start{self.start}-b{self.block_size}-{self.init}"

    def layer_order(self, num_layers: int) -> list[tuple[int, bool]]:
        """The grown network's layers from the input up, as (source layer, is new), 0-indexed: a
        new layer's source is the layer it copies, or whose copy a random layer stands in for."""
        if self.start + self.grown > num_layers:
            raise ValueError(f"{self.name} grows layers {self.start}..{self.start + self.grown - 1} "
                             f"of a {num_layers}-layer network")
        order = [(layer, False) for layer in range(self.start)]
        for first in range(self.start, self.start + self.grown, self.block_size):
            block = range(first, first + self.block_size)
            order += [(layer, False) for layer in block] + [(layer, True) for layer in block]
        return order + [(layer, False) for layer in range(self.start + self.grown, num_layers)]


def operator_space(grown: int, starts, block_sizes, inits=INITS) -> list[GrowthOperator]:
    """Every (start, block size, init) of a search space, in that nesting order."""
    return [GrowthOperator(start, block_size, init, grown)
            for start in starts for block_size in block_sizes for init in inits]


def stack_on_top(num_layers: int, grown: int, init: str = "duplicate") -> GrowthOperator:
    """"Stack the last block on top" (post-stacking, Reddi et al. 2023): the last k layers grown as
    one block, so the new k layers sit on top."""
    return GrowthOperator(num_layers - grown, grown, init, grown)


def parse_operator(name: str, grown: int) -> GrowthOperator:
    """The operator of a ``start{s}-b{b}-{init}`` name."""
    try:
        start, block, init = name.split("-")
        return GrowthOperator(int(start.removeprefix("start")), int(block.removeprefix("b")), init, grown)
    except ValueError as error:
        raise ValueError(f"{name!r} is not a growth operator name (start<s>-b<b>-<random|duplicate>)") from error
