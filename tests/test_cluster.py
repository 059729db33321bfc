"""What jobs ask a cluster for (linearlens.cluster): budgets grow with the attempt, a misspelt one
fails naming itself, and the families name only known budgets."""

import pytest

from linearlens.cluster import BUDGETS, budget_resources
from linearlens.families import declared_families


def test_each_attempt_asks_for_more():
    for name in BUDGETS:
        resources = budget_resources(name)
        for resource in ("runtime", "mem_mb"):
            asked = [resources[resource](None, attempt) for attempt in (1, 2, 3)]
            assert 0 < asked[0] < asked[1] < asked[2], (name, resource, asked)


def test_no_budget_leaves_the_profiles_default():
    assert budget_resources("") == {}


def test_a_misspelt_budget_fails_naming_it():
    with pytest.raises(ValueError, match="'long_trainig'.*long_training"):
        budget_resources("long_trainig")


def test_every_family_names_a_known_budget_and_device_families_name_one():
    for family in declared_families():
        assert family.budget in ("", *BUDGETS), (family.rule, family.budget)
        assert family.budget or not family.device, f"{family.rule} runs on the device with the default hour"
