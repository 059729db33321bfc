"""How linear a training run has stayed: the three metrics of George thesis §5.2, each comparing
the network at step t with itself at initialisation on a fixed probe set.

- sign similarity: the share of ReLU units (every ReLU call, every probe example) whose status,
  zero or positive, is the one at θ₀. A ReLU module used twice in a forward pass (torchvision's
  BasicBlock) counts twice, at t as at θ₀;
- tangent-kernel alignment: KA(K_t, K_0) = Tr[K_t K_0] / (‖K_t‖_F ‖K_0‖_F) (eq. 5.2.5), uncentred,
  on the full (n, c, n, c) Gram of every output (the author's code);
- representation alignment: the same KA between the n × n Grams φ(x)ᵀφ(x′) of the last
  representation, the input of the last Linear layer (the thesis's definition; the author's code
  compares the d × d matrices φᵀφ instead).

The kernels are those of the network f_θ, not of f^α = α(f_θ − f_θ₀): α² scales a Gram and the
alignment does not see scale.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
from torch import Tensor, nn

from ..kernels.alignment import alignment
from ..kernels.ntk import empirical_ntk


@contextmanager
def _recorded(modules: list[nn.Module], keep):
    """Forward hooks that append ``keep(input, output)`` of every call of ``modules``."""
    calls: list[Tensor] = []
    handles = [m.register_forward_hook(lambda module, args, out: calls.append(keep(args[0], out).detach().clone()))
               for m in modules]
    try:
        yield calls
    finally:
        for handle in handles:
            handle.remove()


@torch.no_grad()
def relu_activity(model: nn.Module, x: Tensor) -> list[Tensor]:
    """Which outputs of each ReLU call are positive (boolean, the call's output shape), in call order."""
    relus = [m for m in model.modules() if isinstance(m, nn.ReLU)]
    if not relus:
        raise ValueError("ReLU activity needs nn.ReLU modules (none found in the model)")
    with _recorded(relus, lambda inputs, out: out > 0) as calls:
        model(x)
    return calls


def relu_pattern(model: nn.Module, x: Tensor) -> Tensor:
    """Which ReLU outputs are positive, over every ReLU call and example, as one boolean vector."""
    return torch.cat([c.reshape(-1) for c in relu_activity(model, x)])


def active_fractions(model: nn.Module, x: Tensor) -> list[float]:
    """Per ReLU call, the fraction of its outputs that are positive over channels, positions and
    the examples of ``x`` (every example has as many, so this is the mean of the per-example fractions)."""
    return [float(call.double().mean()) for call in relu_activity(model, x)]


def sign_similarity(pattern: Tensor, initial_pattern: Tensor) -> float:
    if pattern.shape != initial_pattern.shape:
        raise ValueError(f"ReLU patterns differ in size ({pattern.numel()} vs {initial_pattern.numel()} units)")
    return float((pattern == initial_pattern).double().mean())


@torch.no_grad()
def last_representation(model: nn.Module, x: Tensor) -> Tensor:
    """φ_R(x): the input of the model's last nn.Linear, one row per example."""
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    if not linears:
        raise ValueError("representation alignment needs a final nn.Linear layer (none found)")
    with _recorded(linears[-1:], lambda inputs, out: inputs) as calls:
        model(x)
    return calls[-1].reshape(len(x), -1)


def kernel_alignment(gram: Tensor, initial_gram: Tensor) -> float:
    """Uncentred KA (eq. 5.2.5) of two Grams of any matching shape."""
    return float(alignment(gram.double(), initial_gram.double(), centred=False))


def tangent_gram(model: nn.Module, x: Tensor) -> Tensor:
    """The (n, c, n, c) tangent Gram over every output."""
    return empirical_ntk(model, x)


def representation_gram(model: nn.Module, x: Tensor) -> Tensor:
    features = last_representation(model, x).double()
    return features @ features.T


class LinearityProbe:
    """The three metrics of ``network`` on ``x`` against its state when the probe was built (build
    it at θ₀). A session probe (``probe(session) -> dict``); with ``every = k`` it measures at
    every k-th evaluation only (the thesis: every 5th log) and returns nothing at the others."""

    def __init__(self, network: nn.Module, x: Tensor, every: int = 1):
        self.network, self.x, self.every = network, x, int(every)
        self.calls = 0
        self.initial = self.measure_state()

    def measure_state(self) -> dict[str, Tensor]:
        was_training = self.network.training
        self.network.eval()
        try:
            return {"pattern": relu_pattern(self.network, self.x), "ntk": tangent_gram(self.network, self.x),
                    "representation": representation_gram(self.network, self.x)}
        finally:
            self.network.train(was_training)

    def metrics(self) -> dict[str, float]:
        now = self.measure_state()
        return {"sign_similarity": sign_similarity(now["pattern"], self.initial["pattern"]),
                "ntk_alignment": kernel_alignment(now["ntk"], self.initial["ntk"]),
                "representation_alignment": kernel_alignment(now["representation"], self.initial["representation"])}

    def __call__(self, session) -> dict[str, float]:
        due = self.calls % self.every == 0
        self.calls += 1
        return self.metrics() if due else {}

    def state_dict(self) -> dict:
        return {"calls": self.calls, "initial": self.initial}

    def load_state_dict(self, state: dict) -> None:
        self.calls, self.initial = state["calls"], state["initial"]
