"""The two-layer network of Kumar, Bordelon, Gershman & Pehlevan (2024), telescoping Eq. 25:

    f(x) = (1/n_h) Σ_j φ(θ_jᵀx),   φ(h) = h + (ε/2) h²,

with a fixed readout (no output weights, no biases) and θ_j ~ N(0, I). With ``centred`` the
network outputs f(x) − f₀(x), f₀ the network at initialisation (KBGP24's CENTER_LOSS), so the
initial predictions are exactly 0.
"""

from __future__ import annotations

from torch import Tensor, nn

from .names import zoo_model


class QuadraticActivation(nn.Module):
    def __init__(self, epsilon: float):
        super().__init__()
        self.epsilon = epsilon

    def forward(self, h: Tensor) -> Tensor:
        return h + 0.5 * self.epsilon * h * h


class PolynomialNet(nn.Module):
    def __init__(self, in_features: int, hidden: int, epsilon: float, centred: bool = True):
        super().__init__()
        self.hidden = nn.Linear(in_features, hidden, bias=False)
        nn.init.normal_(self.hidden.weight)  # standard normal, as KBGP24
        self.activation = QuadraticActivation(epsilon)
        # The initial weights as a buffer: f₀ is part of the function, not a trained parameter.
        self.register_buffer("initial_weight", self.hidden.weight.detach().clone() if centred else None)

    def forward(self, x: Tensor) -> Tensor:
        x = x.flatten(1)
        out = self.activation(self.hidden(x)).mean(1, keepdim=True)
        if self.initial_weight is not None:
            out = out - self.activation(x @ self.initial_weight.T).mean(1, keepdim=True)
        return out


@zoo_model
def polynomial_net(in_features: int, hidden: int, epsilon: float, centred: bool = True) -> PolynomialNet:
    return PolynomialNet(in_features, hidden, epsilon, centred)
