"""nccl_network's rules on its variables alone, on the worked inventory's values (inventories/example-two-sparks) and the
mistakes a user makes in them; nccl_network's preflight and validate_inventory.yml judge by the same rules."""

from __future__ import annotations

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._nccl_settings import setting_problems

# spark-a's values in the worked inventory, and the role's defaults beside them (roles/nccl_network/defaults/main.yml).
WORKED = {
    "nccl_network_fabric_addresses": ["192.168.177.11/24", "192.168.178.11/24"],
    "nccl_network_netplan_file": "/etc/netplan/40-sparkinfer-fabric.yaml",
    "nccl_network_head_host": "spark-a",
    "nccl_network_cluster_hosts": ["spark-a", "spark-b"],
    "nccl_network_run_perf_test": False,
    "nccl_network_perf_argv": [],
}


def test_the_worked_inventorys_values_hold_together():
    assert setting_problems("spark-a", WORKED) == []


@pytest.mark.parametrize(
    ("entry", "wrong"),
    [
        # The mistake: an address without its prefix length, which was caught only in play 3, after host.yml.
        ("192.168.177.11", True),
        ("192.168.177.11/33", True),
        ("192.168.277.11/24", True),
        ("fe80::1/64", True),
        ("192.168.177.11/24/24", True),
        ("10.0.0.1/8", False),
    ],
)
def test_each_fabric_address_is_an_ipv4_address_with_its_prefix_length(entry, wrong):
    problems = setting_problems("spark-a", {**WORKED, "nccl_network_fabric_addresses": [entry, "192.168.178.11/24"]})
    expected = [
        f"nccl_network_fabric_addresses on spark-a holds {entry}; each entry must be an IPv4 address with its prefix length, "
        "such as 192.168.177.11/24 (one per ConnectX-7 twin)."
    ]
    assert problems == (expected if wrong else [])


def test_the_netplan_file_is_a_plain_name_in_etc_netplan():
    injected = "/etc/netplan/40-$(touch /tmp/sparkinfer-injected).yaml"
    assert setting_problems("spark-a", {**WORKED, "nccl_network_netplan_file": injected}) == [
        f"nccl_network_netplan_file is '{injected}': give a file in /etc/netplan whose name has letters, digits, '.', '_' and '-' "
        "only and ends in .yaml, such as /etc/netplan/40-sparkinfer-fabric.yaml."
    ]
    assert setting_problems("spark-a", {**WORKED, "nccl_network_netplan_file": "/etc/netplan/60-fabric.yml"}) != []


def test_the_head_is_one_of_the_clusters_nodes():
    assert setting_problems("spark-a", {**WORKED, "nccl_network_head_host": "spark-c"}) == [
        "nccl_network_head_host is spark-c, which is not in nccl_network_cluster_hosts (spark-a, spark-b)."
    ]


def test_the_bandwidth_test_needs_its_command():
    [problem] = setting_problems("spark-a", {**WORKED, "nccl_network_run_perf_test": True})
    assert problem.startswith("nccl_network_run_perf_test is true but nccl_network_perf_argv is empty")
    assert setting_problems("spark-a", {**WORKED, "nccl_network_run_perf_test": True, "nccl_network_perf_argv": ["mpirun"]}) == []


def test_what_the_inventory_does_not_set_is_not_judged():
    # validate_inventory.yml gives the inventory's values alone: the role's defaults are the preflight's.
    assert setting_problems("spark-a", {"nccl_network_fabric_addresses": ["192.168.177.11/24"]}) == []
    assert setting_problems("spark-a", {"nccl_network_run_perf_test": True}) != []
    # A value of the wrong type is the argument specification's to name.
    assert setting_problems("spark-a", {"nccl_network_fabric_addresses": "192.168.177.11/24", "nccl_network_netplan_file": 3}) == []
