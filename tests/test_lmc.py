"""Linear mode connectivity (telescoping Fig 6): interpolation endpoints, BatchNorm buffers,
spawning, gradient change and the two gap definitions."""

import copy

import pytest
import torch

from linearlens.experiments import lmc
from linearlens.models.resnet import cifar_resnet
from linearlens.train.schedules import StepDecay

SCHEDULE = lmc.Schedule(lr=0.1, momentum=0.9, weight_decay=1e-4, batch_size=8, steps=12, drops=(6, 9),
                        crop_padding=1, flip=True)


@pytest.fixture
def task():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(40, 1, 8, 8, generator=generator)
    return x, torch.randint(0, 3, (40,), generator=generator)


def network():
    torch.manual_seed(0)
    return cifar_resnet(1, num_classes=3, in_channels=1, width=4)


def test_learning_rate_drops_at_the_given_steps():
    decay = StepDecay(SCHEDULE.drops, SCHEDULE.factor)
    assert [SCHEDULE.lr * decay(t + 1) for t in (0, 5, 6, 8, 9, 11)] == pytest.approx([0.1, 0.1, 0.01, 0.01, 0.001, 0.001])


def test_children_differ_only_by_their_data_seed(task):
    x, y = task
    model = network()
    kept = lmc.train(model, lmc.new_optimizer(model, SCHEDULE), SCHEDULE, x, y, 0, 4,
                     torch.Generator().manual_seed(1), keep_at={4})
    same = lmc.train_children(model, SCHEDULE, x, y, kept[4], (5, 5))
    other = lmc.train_children(model, SCHEDULE, x, y, kept[4], (5, 6))
    assert all(torch.equal(same[0][k], same[1][k]) for k in same[0])
    assert not all(torch.equal(other[0][k], other[1][k]) for k in other[0])


def test_interpolation_endpoints_are_the_children_buffers_included(task):
    x, y = task
    model = network()
    kept = lmc.train(model, lmc.new_optimizer(model, SCHEDULE), SCHEDULE, x, y, 0, 3,
                     torch.Generator().manual_seed(1), keep_at={3})
    first, second = lmc.train_children(model, SCHEDULE, x, y, kept[3], (7, 8))
    assert not torch.equal(first["1.running_mean"], second["1.running_mean"])
    for alpha, child in ((1.0, first), (0.0, second)):
        mixed = lmc.interpolate(first, second, alpha)
        assert all(torch.equal(mixed[k], child[k]) or not child[k].is_floating_point() for k in child)
        assert lmc.accuracy_at(model, mixed, x, y) == lmc.accuracy_at(model, child, x, y)
    halfway = lmc.interpolate(first, second, 0.5)
    torch.testing.assert_close(halfway["1.running_var"], (first["1.running_var"] + second["1.running_var"]) / 2)


def test_gradient_change_is_zero_between_identical_checkpoints_and_positive_otherwise(task):
    x, _ = task
    model = network()
    state = copy.deepcopy(model.state_dict())
    changes = lmc.gradient_change(model, state, state, x[:5])
    assert set(changes) == {name.rsplit(".", 1)[0] for name, _ in model.named_parameters()}
    assert all(value == 0.0 for value in changes.values())
    moved = {k: v + 0.05 if v.is_floating_point() else v for k, v in state.items()}
    assert all(value > 0 for value in lmc.gradient_change(model, state, moved, x[:5]).values())


def test_accuracy_gaps_follow_both_definitions():
    curve = [{"alpha": 0.0, "accuracy": 0.8}, {"alpha": 0.5, "accuracy": 0.5}, {"alpha": 1.0, "accuracy": 0.9}]
    gaps = lmc.accuracy_gaps(curve)
    assert gaps["gap_midpoint"] == pytest.approx(0.35)
    assert gaps["gap_max"] == pytest.approx(0.35)
    assert lmc.interpolation_alphas(3) == [0.0, 0.5, 1.0] and len(lmc.interpolation_alphas(30)) == 31
