"""nccl_network_setting_problems as nccl_network's preflight and validate_inventory.yml call it."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.nccl_settings import nccl_network_setting_problems


def test_it_judges_the_variables_of_the_node_it_names():
    [problem] = nccl_network_setting_problems({"nccl_network_fabric_addresses": ["192.168.177.11"]}, "spark-a")
    assert problem.startswith("nccl_network_fabric_addresses on spark-a holds 192.168.177.11;")


def test_what_is_no_mapping_is_refused():
    with pytest.raises(AnsibleFilterError, match="nccl_network_setting_problems: expected the variables as a mapping, got list"):
        nccl_network_setting_problems(["192.168.177.11"], "spark-a")
