"""Optimisers by name, as configs give them, and the one torch lacks: SGD with bias-corrected
EMA momentum (the momentum of the telescoping paper's Sec. 5 and Eq. 11),

    m_t = β m_{t−1} + (1 − β)(g_t + λ θ_{t−1}),    θ_t = θ_{t−1} − γ m_t / (1 − β^t).

torch's SGD(momentum=β) is heavy-ball instead (buf = β buf + g, no (1 − β), no correction), about
1/(1 − β) times larger steps; configs name which one they mean.
"""

from __future__ import annotations

import torch


class EMAMomentumSGD(torch.optim.Optimizer):
    def __init__(self, params, lr: float, momentum: float = 0.9, weight_decay: float = 0.0):
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"momentum must be in [0, 1), got {momentum}")
        super().__init__(params, {"lr": lr, "momentum": momentum, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta = group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                state["step"] += 1
                gradient = p.grad.add(p, alpha=group["weight_decay"]) if group["weight_decay"] else p.grad
                state["exp_avg"].mul_(beta).add_(gradient, alpha=1 - beta)
                p.add_(state["exp_avg"], alpha=-group["lr"] / (1 - beta ** state["step"]))
        return loss


OPTIMISERS = {"sgd": torch.optim.SGD, "ema_sgd": EMAMomentumSGD, "adam": torch.optim.Adam,
              "adamw": torch.optim.AdamW}


def build_optimiser(spec: dict, params) -> torch.optim.Optimizer:
    """``{"name": "adamw", "lr": 1e-4, "betas": [0.9, 0.99], "weight_decay": 0.1}`` and so on;
    the keys after ``name`` are the optimiser's own keyword arguments."""
    arguments = dict(spec)
    name = arguments.pop("name")
    if name not in OPTIMISERS:
        raise ValueError(f"optimiser {name!r} is not one of {sorted(OPTIMISERS)}")
    if "betas" in arguments:
        arguments["betas"] = tuple(arguments["betas"])
    return OPTIMISERS[name](params, **arguments)

