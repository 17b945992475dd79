"""What validate_inventory.yml judges of an inventory's variable names, against the roles' real argument specifications
and the variable names a user of the worked inventories misspelt (the issue on the plan in Python: a copy of
inventories/example-two-sparks with nccl_network_fabric_adresses and sparkinfer_recipie).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.sparkinfer.cluster.plugins.module_utils._inventory_rules import (
    PLAYBOOK_VARIABLES,
    ROLE_PREFIXES,
    known_variables,
    outside_nodes,
    unknown_message,
    unknown_variables,
)

REPO = Path(__file__).resolve().parents[4]


@pytest.fixture(scope="module")
def known() -> set[str]:
    specs = {
        prefix: yaml.safe_load((REPO / "roles" / prefix.rstrip("_") / "meta" / "argument_specs.yml").read_text(encoding="utf-8")) for prefix in ROLE_PREFIXES
    }
    return known_variables(specs)


def test_the_known_names_are_every_entry_points_options_and_the_playbooks_own(known):
    # Options of main (of every role), an output another role reads, a playbook's.
    assert {"nccl_network_fabric_addresses", "vllm_serve_bench_num_prompts", "nccl_network_host_ip", "sparkinfer_rollout_order"} <= known


def test_misspelt_names_are_named_with_the_name_they_were_meant_as(known):
    names = ["nccl_network_fabric_adresses", "sparkinfer_recipie", "vllm_serve_gpu_memory_utilisation", "nccl_network_mtu", "ansible_host"]
    assert unknown_variables(names, known) == [
        {"name": "nccl_network_fabric_adresses", "closest": "nccl_network_fabric_addresses"},
        {"name": "sparkinfer_recipie", "closest": "sparkinfer_recipe"},
        {"name": "vllm_serve_gpu_memory_utilisation", "closest": "vllm_serve_gpu_memory_utilization"},
    ]


def test_a_name_of_the_collections_prefix_like_none_it_knows_is_named_alone(known):
    # The lab's own variables were once sparkinfer_fabric_ip and sparkinfer_fabric_interface: now lab_fabric_*.
    assert unknown_variables(["sparkinfer_fabric_ip", "lab_fabric_ip"], known) == [{"name": "sparkinfer_fabric_ip", "closest": ""}]


def test_the_message_says_what_ansible_does_with_each_and_what_was_meant():
    message = unknown_message([{"name": "sparkinfer_recipie", "closest": "sparkinfer_recipe"}, {"name": "sparkinfer_mine", "closest": ""}])
    assert message == [
        "sparkinfer_recipie is no variable of the collection (did you mean sparkinfer_recipe?): Ansible would ignore it and the roles run with their defaults.",
        "sparkinfer_mine is no variable of the collection (names with its prefixes are the collection's: rename a variable of your own): Ansible "
        "would ignore it and the roles run with their defaults.",
    ]


def test_the_playbooks_variables_are_the_ones_the_playbooks_read():
    text = "\n".join(path.read_text(encoding="utf-8") for path in (REPO / "playbooks").rglob("*.yml"))
    read = set(re.findall(r"\b(sparkinfer_[a-z_]+)\s*\|\s*default\b", text))
    assert read <= set(PLAYBOOK_VARIABLES), read - set(PLAYBOOK_VARIABLES)
    assert [name for name in PLAYBOOK_VARIABLES if name not in text] == []


def test_the_worked_and_lab_inventories_use_no_name_the_collection_does_not_know(known):
    names: set[str] = set()
    for directory in (
        "inventories/example-two-sparks/group_vars",
        "inventories/example-one-spark/group_vars",
        "inventories/lab/group_vars",
        "extensions/molecule/e2e/host_vars",
    ):
        for path in (REPO / directory).glob("*.yml"):
            names |= set(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    assert unknown_variables(names, known) == []


def test_a_head_outside_sparkinfer_nodes_is_named_with_where_it_belongs():
    # The head group beside sparkinfer_nodes instead of under it: every playbook would run on the worker alone.
    groups = {"sparkinfer_nodes": ["spark-b"], "sparkinfer_head": ["spark-a"], "sparkinfer_workers": ["spark-b"]}
    assert outside_nodes(groups) == [
        "spark-a is in sparkinfer_head but not in sparkinfer_nodes: every playbook runs on sparkinfer_nodes, so the cluster would be "
        "deployed without it; put sparkinfer_head among the children of sparkinfer_nodes (inventories/example-two-sparks/hosts.yml)."
    ]
    assert outside_nodes({"sparkinfer_nodes": ["spark-a", "spark-b"], "sparkinfer_head": ["spark-a"], "sparkinfer_workers": ["spark-b"]}) == []
    # An inventory of other groups (a fleet named by sparkinfer_targets) has nothing to say here.
    assert outside_nodes({"all": ["spark-a"]}) == []
