"""Models of one architecture as one batched computation: stacked states and every member's outputs
at once, against torch's own stacking and each model run alone."""

import torch
from torch import nn
from torch.func import stack_module_state

from linearlens.ensembles import member_outputs, stacked, stacked_parameters, unstacked


def members(count=3):
    torch.manual_seed(0)
    return [nn.Sequential(nn.Linear(4, 5), nn.BatchNorm1d(5), nn.Tanh(), nn.Linear(5, 2)).double()
            for _ in range(count)]


def test_stacking_is_torchs_and_unstacking_gives_each_member_back():
    models = members()
    params = stacked_parameters(models)
    expected, _ = stack_module_state(models)
    assert list(params) == list(expected) and all(torch.equal(params[k], expected[k]) for k in params)
    assert not any(t.requires_grad for t in params.values())  # detached: the caller decides what trains
    second = unstacked(params, 1)
    assert all(torch.equal(second[name], p) for name, p in models[1].named_parameters())
    second["0.weight"].zero_()  # a copy: the stack is untouched
    assert torch.equal(params["0.weight"][1], models[1][0].weight)


def test_member_outputs_are_each_model_run_alone():
    models = members()
    params = stacked_parameters(models)
    buffers = stacked([dict(model.named_buffers()) for model in models])
    own = torch.randn(3, 6, 4, dtype=torch.float64)
    shared = torch.randn(6, 4, dtype=torch.float64)
    for model in models:
        model.eval()
    together = member_outputs(models[0], params, buffers, own, train=False)
    alone = torch.stack([model(x) for model, x in zip(models, own)])
    assert torch.allclose(together, alone, atol=1e-12)
    together = member_outputs(models[0], params, buffers, shared, train=False, shared_inputs=True)
    assert torch.allclose(together, torch.stack([model(shared) for model in models]), atol=1e-12)
