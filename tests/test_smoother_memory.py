"""Peak memory of the label-Jacobian smoother (telescoping Figs 3, 9, 10: heavy-ball SGD) at paper width.

At paper size (MLP 64 → 5,000 → 1, p = 330,001; n = 1,000 training and 1,000 test points) each
p × n float64 array is 2.64 GB. A step must hold θ's and the momentum's label parts (p × n each),
the per-example gradients ((n + m) × p) and, while the update is formed, the step's gradient signal
and its change (p × n each): six such arrays. Before: the signal was kept through the output product
and the gradients were cast whole to float32 for it, 7.4 arrays (19.5 GB at paper width).
"""

from __future__ import annotations

import pytest

from linearlens.cluster import BUDGETS
from memory_probe import AVAILABLE, UNAVAILABLE_REASON, peak_above_baseline

N = 200  # training points, and as many evaluation points
PAPER_N, PAPER_PARAMETERS = 1000, 64 * 5000 + 5000 + 5000 + 1


def request_bytes() -> float:
    """telescoping_smoother_run's memory request at the first attempt (its rule's cluster budget)."""
    return BUDGETS["smoother"].resources()["mem_mb"](None, 1) * 1e6

SETUP = """
import sys
import torch
from torch import nn
from linearlens.linearize.smoother import smoother_for
from linearlens.train.runtime import default_dtype

torch.set_num_threads(1)
torch.manual_seed(0)
n, width = {N}, int(sys.argv[1])
with default_dtype("float64"):
    model = nn.Sequential(nn.Linear(64, width), nn.ReLU(), nn.Linear(width, 1))
    x, x_eval, y = torch.randn(n, 64), torch.randn(n, 64), torch.randn(n)
optimizer = torch.optim.SGD(model.parameters(), lr=0.0025, momentum=0.95)


def steps(count):
    smoother = smoother_for(model, optimizer, x, x_eval, "half_squared", torch.float32)
    for step in range(count):
        batch = torch.arange(step * 50, step * 50 + 50)
        smoother.before_step(batch)
        optimizer.zero_grad()
        (0.5 * ((model(x[batch]).reshape(-1) - y[batch]) ** 2).mean()).backward()
        optimizer.step()
        smoother.after_step()
    return smoother


with default_dtype("float64"):
    steps(1)  # torch's first passes allocate their own buffers: warm up before the baseline
""".format(N=N)
STEPS = "with default_dtype('float64'):\n    steps(3)"


def arrays_per_parameter(folder, widths: tuple[int, int]) -> float:
    """Peak memory per parameter in units of a float64 label row (n values): the slope between two
    widths, so that what does not grow with the width (torch, the data) is not counted."""
    peaks = [peak_above_baseline(SETUP, STEPS, [str(w)], folder) for w in widths]
    parameters = [64 * w + w + w + 1 for w in widths]
    return (peaks[1] - peaks[0]) / (parameters[1] - parameters[0]) / (8 * N)


@pytest.mark.skipif(not AVAILABLE, reason=UNAVAILABLE_REASON)
def test_heavy_ball_smoother_step_holds_six_label_arrays_at_most(tmp_path):
    arrays = arrays_per_parameter(tmp_path, (500, 1500))
    assert arrays < 6.4, f"{arrays:.2f} float64 arrays of p × n at the peak"
    assert arrays * 8 * PAPER_N * PAPER_PARAMETERS < request_bytes()
