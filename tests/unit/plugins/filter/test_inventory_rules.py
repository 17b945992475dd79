"""inventory_problems, as validate_inventory.yml calls it (the rules: module_utils/_inventory_rules.py)."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.inventory_rules import inventory_problems

GROUPS = {"all": ["spark-a", "spark-b"], "sparkinfer_nodes": ["spark-a", "spark-b"], "sparkinfer_head": ["spark-a"], "sparkinfer_workers": ["spark-b"]}


def test_a_misspelt_variable_is_named_with_the_one_meant():
    problems = inventory_problems(["nccl_network_fabric_adresses", "inventory_hostname"], ["nccl_network_fabric_addresses"], GROUPS)
    assert len(problems) == 1
    assert problems[0].startswith("nccl_network_fabric_adresses is no variable of the collection (did you mean nccl_network_fabric_addresses?)")


@pytest.mark.parametrize(
    ("names", "known", "groups"),
    [("nccl_network_mtu", [], GROUPS), (["nccl_network_mtu"], "nccl_network_mtu", GROUPS), ([1], [], GROUPS), ([], [], {"sparkinfer_nodes": "spark-a"})],
)
def test_what_is_not_names_known_names_and_groups_is_refused(names, known, groups):
    with pytest.raises(AnsibleFilterError, match="inventory_problems: expected"):
        inventory_problems(names, known, groups)
