"""KFAC, EKFAC and EKFAC-ra as ``torch.optim.Optimizer``s (George's thesis, ch. 4, Algorithm 1).

Each step is θ ← θ − η (F̂ + εI)⁻¹ ∇, with ∇ the gradients in ``p.grad`` (of the minibatch's mean
loss) and F̂ a block-diagonal approximation of the empirical Fisher, (1/m) Σ_i ∇ℓ_i ∇ℓ_iᵀ over
the minibatch's per-example loss gradients (the observed labels), estimated on the minibatch
passed to ``step``. The damping ε is added in each block's eigenbasis and the inverse is exact
per block (``CurvatureMatrix.solve``):

* "kfac": F̂ = A ⊗ B per layer (KFC's factors for convolutions), the factors and their
  eigendecompositions recomputed every ``freq`` steps (``freq = 1``: the strong baseline);
* "ekfac": the Kronecker-factored eigenbasis (KFE) of those factors recomputed every ``freq``
  steps, its diagonal s* re-estimated at every step from the minibatch's per-example gradients;
* "ekfac_ra": s* a running average of the minibatch-mean gradient in the KFE,
  s* ← α s* + (1 − α) m (U_Bᵀ ∇W̃ U_A)², reset to S_B ⊗ S_A (KFAC's own eigenvalues) at every
  recompute (EKFAC-pytorch's ``ra``, α = 0.75).

The damping is added in the KFE, to each eigenvalue: ``damping_mode="kfe"`` adds ε (Algorithm 1,
EKFAC-pytorch's EKFAC), ``"factors"`` adds ε + √ε (S_A ⊗ 1 + 1 ⊗ S_B) (App. A.4, "for deep networks",
and EKFAC-pytorch's KFAC: the eigenvalues of (A + √ε I) ⊗ (B + √ε I) less those of A ⊗ B, from the
factors of the last recompute).

``conv_factors`` picks a convolution's input factor, KFC's (the default) or SUA's (``fisher``'s
docstring), for all three methods. Layers that KFAC does not cover keep an exact dense block.
BatchNorm is refused: the thesis trains these optimisers without it, and its batch statistics
couple the examples.
"""

from __future__ import annotations

import time

import torch
from torch import Tensor, nn
from torch.optim import Optimizer

from ..parameters import ParameterLayout
from .fisher import CONV_FACTORS, build, in_eigenbasis, refit_kfe_diagonal
from .representations import BlockDiagonal, EigenKronecker, Kronecker, factored_damping
from .sources import FisherSource

METHODS = ("kfac", "ekfac", "ekfac_ra")
DAMPING_MODES = ("kfe", "factors")


class KroneckerFactoredOptimizer(Optimizer):
    """Preconditioned steps of one of ``METHODS``; call ``step(x, y)`` after ``loss.backward()`` on
    the minibatch (x, y). ``step_seconds`` records each step's wall time (curvature included)."""

    steps_on_batch = True  # a training loop passes the minibatch to ``step``

    def __init__(self, model: nn.Module, lr: float, damping: float, method: str = "kfac",
                 freq: int = 1, alpha: float = 0.75, likelihood: str = "categorical",
                 conv_factors: str = "kfc", damping_mode: str = "kfe"):
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        if conv_factors not in CONV_FACTORS:
            raise ValueError(f"conv_factors must be one of {CONV_FACTORS}, got {conv_factors!r}")
        if damping_mode not in DAMPING_MODES:
            raise ValueError(f"damping_mode must be one of {DAMPING_MODES}, got {damping_mode!r}")
        if freq < 1 or not 0 <= alpha <= 1 or lr <= 0 or damping <= 0:
            raise ValueError(f"need freq ≥ 1, 0 ≤ alpha ≤ 1, lr > 0 and damping > 0; got freq={freq}, "
                             f"alpha={alpha}, lr={lr}, damping={damping}")
        for name, module in model.named_modules():
            if isinstance(module, nn.modules.batchnorm._BatchNorm):
                raise ValueError(f"{method} is not defined with BatchNorm layers ({name!r}): the thesis "
                                 "trains KFAC and EKFAC without them, and batch statistics couple the "
                                 "examples whose gradients the curvature is built from")
        self.model, self.method, self.freq, self.alpha, self.likelihood = model, method, freq, alpha, likelihood
        self.conv_factors, self.damping_mode = conv_factors, damping_mode
        self.layout = ParameterLayout(model)
        super().__init__(list(self.layout.parameters().values()), {"lr": lr, "damping": damping})
        self.matrix: BlockDiagonal | None = None
        self.factor_eigenvalues: dict[str, tuple[Tensor, Tensor]] = {}  # (S_A, S_B) of the last recompute
        self.steps = 0
        self.step_seconds: list[float] = []

    def step(self, x: Tensor, y: Tensor) -> None:  # type: ignore[override]
        start = time.perf_counter()
        source = FisherSource(self.model, x, y, self.likelihood, "empirical")
        if self.matrix is None or self.steps % self.freq == 0:
            self.matrix = self._recomputed(source)
        elif self.method == "ekfac":
            refit_kfe_diagonal(self.matrix, source)
        group = self.param_groups[0]
        with torch.no_grad():
            gradient = self.layout.gradient()
            if self.method == "ekfac_ra":
                self._average_in(gradient, len(x))
            direction = torch.cat([self.matrix.blocks[layer.name].solve(gradient[layer.span],
                                                                        self._damping(layer.name, group["damping"]))
                                   for layer in self.layout.layers])
            for p, part in zip(group["params"], self.layout.split(direction).values()):
                p.add_(part, alpha=-group["lr"])
        self.steps += 1
        self.step_seconds.append(time.perf_counter() - start)

    def _recomputed(self, source: FisherSource) -> BlockDiagonal:
        kfac = build(source, "kfac", conv_factors=self.conv_factors)
        self.factor_eigenvalues = {name: (block.eigen[0], block.eigen[2]) for name, block in kfac.blocks.items()
                                   if isinstance(block, Kronecker)}
        if self.method == "kfac":
            return kfac
        matrix = in_eigenbasis(kfac)  # s* = S_B ⊗ S_A: EKFAC-ra's start
        if self.method == "ekfac":
            refit_kfe_diagonal(matrix, source)
        return matrix

    def _damping(self, name: str, epsilon: float) -> float | Tensor:
        """What the block's eigenvalues get added: ε, or App. A.4's ε + √ε (S_A ⊗ 1 + 1 ⊗ S_B) laid out
        as the block's (out, width) eigenvalues."""
        if self.damping_mode == "kfe" or name not in self.factor_eigenvalues:
            return epsilon
        return factored_damping(*self.factor_eigenvalues[name], epsilon)

    def _average_in(self, gradient: Tensor, batch_size: int) -> None:
        for layer in self.layout.layers:
            block = self.matrix.blocks[layer.name]
            if isinstance(block, EigenKronecker):
                average_into(block, gradient[layer.span], batch_size, self.alpha)


def average_into(block: EigenKronecker, gradient: Tensor, batch_size: int, alpha: float) -> None:
    """EKFAC-ra's s* ← α s* + (1 − α) m (U_Bᵀ ∇W̃ U_A)², ∇ the layer's flat minibatch-mean gradient."""
    rotated = block.to_kfe(block.form.matrix(gradient))
    block.scales = alpha * block.scales + (1 - alpha) * batch_size * rotated.square()
