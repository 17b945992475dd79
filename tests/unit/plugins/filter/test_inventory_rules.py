"""inventory_findings, as validate_inventory.yml calls it: every node of an inventory judged at once, on the roles' real
argument specifications and recipes (the rules: module_utils/_inventory_rules.py, _nccl_settings.py,
_vllm_image_settings.py, _ray_cluster_settings.py, _vllm_serve_settings.py; the playbook's own run: tests/unit/test_example_inventory.py)."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.inventory_rules import FilterModule, inventory_findings, inventory_node_problems, role_specs

GROUPS = {"all": ["spark-a", "spark-b"], "sparkinfer_nodes": ["spark-a", "spark-b"], "sparkinfer_head": ["spark-a"], "sparkinfer_workers": ["spark-b"]}
# What inventories/example-two-sparks sets, in part, and what Ansible adds to every host's variables.
WORKED = {
    "spark-a": {"inventory_hostname": "spark-a", "sparkinfer_recipe": "qwen3.5-122b-a10b-fp8", "nccl_network_fabric_addresses": ["192.168.177.11/24"]},
    "spark-b": {"inventory_hostname": "spark-b", "sparkinfer_recipe": "qwen3.5-122b-a10b-fp8", "nccl_network_fabric_addresses": ["192.168.177.12/24"]},
}


def findings(**changed):
    hostvars = {host: {**variables, **changed} for host, variables in WORKED.items()}
    return inventory_findings(hostvars, ["spark-a", "spark-b"], GROUPS)


def test_the_filter_is_registered_and_the_worked_pair_passes():
    assert FilterModule().filters() == {"inventory_findings": inventory_findings, "inventory_node_problems": inventory_node_problems}
    assert findings() == []


def test_each_node_is_named_with_each_of_its_problems_in_one_list():
    said = findings(nccl_network_fabric_adresses=["192.168.180.11/24"], vllm_serve_port="api", vllm_serve_gpu_memory_utilization=1.5)
    assert said == [
        f"{node}: {problem}"
        for node in ("spark-a", "spark-b")
        for problem in (
            "vllm_serve: argument 'vllm_serve_port' is of type str and we were unable to convert to int: \"'api'\" cannot be converted to an int.",
            "nccl_network_fabric_adresses is no variable of the collection (did you mean nccl_network_fabric_addresses?): Ansible would ignore it "
            "and the roles run with their defaults.",
            "vllm_serve_gpu_memory_utilization is 1.5: gpu_memory_utilization (--gpu-memory-utilization) must be a number in (0, 1].",
        )
    ]


def test_the_cluster_is_the_play_unless_the_inventory_names_it():
    alone = inventory_findings(WORKED, ["spark-a"], GROUPS)
    assert alone[0].startswith("spark-a: recipe qwen3.5-122b-a10b-fp8 is served on 2 Sparks (tensor x pipeline parallel size 2); the cluster has 1 (spark-a).")
    named = {host: {**variables, "sparkinfer_cluster_hosts": ["spark-a", "spark-b"]} for host, variables in WORKED.items()}
    assert inventory_findings(named, ["spark-a"], GROUPS) == []


def test_a_head_outside_the_nodes_is_said_once_after_the_nodes():
    groups = {**GROUPS, "sparkinfer_nodes": ["spark-b"]}
    assert inventory_findings(WORKED, ["spark-a", "spark-b"], groups) == [
        "spark-a is in sparkinfer_head but not in sparkinfer_nodes: every playbook runs on sparkinfer_nodes, so the cluster would be deployed "
        "without it; put sparkinfer_head among the children of sparkinfer_nodes (inventories/example-two-sparks/hosts.yml)."
    ]


def test_a_ray_port_set_in_the_inventory_is_judged_against_the_roles_other_ports():
    # The inventory moves one port onto another's default, for a cluster that runs Ray (vLLM's Ray executor).
    said = findings(vllm_serve_executor="ray", ray_cluster_metrics_export_port=6379)
    assert [finding.split(" (ray_cluster_port")[0] for finding in said] == [
        f"{node}: Ray's ports overlap: 6379, 6380, 6381, 6382, 6383, 6379, 52365, 10001, 44217, 44227, 8265" for node in ("spark-a", "spark-b")
    ]
    # With the mp executor no Ray container runs: its ports are not judged.
    assert findings(ray_cluster_metrics_export_port=6379) == []


def test_a_transfer_address_set_in_the_inventory_is_judged_for_a_cluster_of_more_than_one_node():
    said = findings(vllm_image_transfer_address="192.0.2.12;touch /tmp/x")
    assert [finding.split(", which is")[0] for finding in said] == [
        f"{node}: vllm_image_transfer_address on {node} is '192.0.2.12;touch /tmp/x'" for node in ("spark-a", "spark-b")
    ]
    # A node alone sends no image anywhere: its transfer values are not judged.
    alone = {"spark-a": {**WORKED["spark-a"], "sparkinfer_cluster_hosts": ["spark-a"], "vllm_image_transfer_address": "192.0.2.12;touch /tmp/x"}}
    said = inventory_findings(alone, ["spark-a"], GROUPS)
    assert said
    assert not [finding for finding in said if "vllm_image_transfer_address" in finding], said


def test_the_specs_are_the_five_roles_a_user_sets():
    assert sorted(role_specs()) == ["gb10_host", "nccl_network", "ray_cluster", "vllm_image", "vllm_serve"]


@pytest.mark.parametrize(("hosts", "groups"), [("spark-a", GROUPS), ([1], GROUPS), (["spark-a"], {"sparkinfer_nodes": "spark-a"})])
def test_what_is_not_hosts_and_groups_is_refused(hosts, groups):
    with pytest.raises(AnsibleFilterError, match="inventory_findings: expected"):
        inventory_findings(WORKED, hosts, groups)


def test_node_by_node_the_same_sentences_without_the_nodes_name_and_without_the_groups():
    hostvars = {**WORKED, "spark-b": {**WORKED["spark-b"], "vllm_serve_gpu_memory_utilization": 1.5}}
    groups = {**GROUPS, "sparkinfer_nodes": ["spark-b"]}
    assert inventory_node_problems(hostvars, ["spark-a", "spark-b"], groups) == {
        "spark-a": [],
        "spark-b": ["vllm_serve_gpu_memory_utilization is 1.5: gpu_memory_utilization (--gpu-memory-utilization) must be a number in (0, 1]."],
    }
    with pytest.raises(AnsibleFilterError, match="inventory_node_problems: expected the nodes as a list"):
        inventory_node_problems(hostvars, "spark-a", groups)
