"""nccl_roce_env: NCCL_IB_HCA for both twins, the GID index left to NCCL, each twin's GID found by its address.

The HCA entries are fabric_facts' for a Spark with port 1 cabled (values and sources in
tests/unit/plugins/module_utils/fixtures/fabric/SOURCES.md), the addresses as Ansible's network facts give them.
"""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.fabric import FilterModule, nccl_loopback, nccl_port_problem, nccl_roce_env


def twin(name: str, netdev: str, *gids: tuple[int, str]) -> dict:
    return {"name": name, "netdev": netdev, "port": 1, "roce_v2_ipv4_gids": [{"index": index, "address": address} for index, address in gids]}


def facts(**addresses: str | None) -> dict:
    return {netdev: ({"ipv4": {"address": address}} if address else {}) for netdev, address in addresses.items()}


SPARK_FACTS = facts(enp1s0f1np1="192.168.100.10", enP2p1s0f1np1="192.168.101.10")
# Port 1's twins, their GIDs at index 3; on the second one drifted to 5 (a hole at 3), as seen on real Sparks.
TWINS = [twin("rocep1s0f1", "enp1s0f1np1", (3, "192.168.100.10")), twin("roceP2p1s0f1", "enP2p1s0f1np1", (3, "192.168.101.10"))]
DRIFTED = [TWINS[0], twin("roceP2p1s0f1", "enP2p1s0f1np1", (5, "192.168.101.10"))]


def test_the_filter_is_registered():
    assert FilterModule().filters() == {"nccl_roce_env": nccl_roce_env, "nccl_loopback": nccl_loopback, "nccl_port_problem": nccl_port_problem}


@pytest.mark.parametrize("hcas", [TWINS, DRIFTED], ids=["same-index", "drifted-index"])
def test_both_twins_are_named_and_the_gid_index_is_left_to_nccl(hcas):
    assert nccl_roce_env(hcas, SPARK_FACTS) == {"NCCL_IB_HCA": "rocep1s0f1,roceP2p1s0f1"}


def test_the_gid_of_the_twins_address_is_found_among_others():
    # An old address left by another netplan file has its own RoCE v2 GID, at a lower index.
    hcas = [twin("rocep1s0f1", "enp1s0f1np1", (3, "169.254.12.7"), (4, "192.168.100.10")), TWINS[1]]
    assert nccl_roce_env(hcas, SPARK_FACTS, gid_index=None) == {"NCCL_IB_HCA": "rocep1s0f1,roceP2p1s0f1"}


def test_a_pinned_index_that_holds_each_twins_gid_is_kept():
    assert nccl_roce_env(TWINS, SPARK_FACTS, gid_index=3) == {"NCCL_IB_HCA": "rocep1s0f1,roceP2p1s0f1", "NCCL_IB_GID_INDEX": "3"}


def test_a_pinned_index_that_drifted_on_one_twin_is_refused_naming_it():
    with pytest.raises(AnsibleFilterError) as refused:
        nccl_roce_env(DRIFTED, SPARK_FACTS, gid_index=3)
    assert str(refused.value) == (
        "nccl_network_ib_gid_index is 3, but roceP2p1s0f1 (enP2p1s0f1np1, 192.168.101.10) holds its RoCE v2 GID at index 5 "
        "(indices drift as addresses change): leave nccl_network_ib_gid_index unset for NCCL to pick the entry per HCA."
    )


def test_a_twin_whose_address_has_no_roce_v2_gid_is_refused_naming_what_it_has():
    hcas = [twin("rocep1s0f1", "enp1s0f1np1", (3, "169.254.12.7")), TWINS[1]]
    with pytest.raises(AnsibleFilterError) as refused:
        nccl_roce_env(hcas, SPARK_FACTS)
    assert str(refused.value) == (
        "rocep1s0f1 (enp1s0f1np1, 192.168.100.10) has no RoCE v2 GID for its address (its RoCE v2 IPv4 GIDs: 3 (169.254.12.7)): "
        "the kernel adds one once the address is on the netdev; check ip -4 addr show enp1s0f1np1 and "
        "/sys/class/infiniband/rocep1s0f1/ports/1/gids."
    )


def test_a_twin_without_an_address_is_refused():
    with pytest.raises(AnsibleFilterError, match=r"roceP2p1s0f1 \(enP2p1s0f1np1, no IPv4 address\) has no RoCE v2 GID .*GIDs: none\)"):
        nccl_roce_env([TWINS[0], twin("roceP2p1s0f1", "enP2p1s0f1np1")], facts(enp1s0f1np1="192.168.100.10", enP2p1s0f1np1=None))


def test_no_hca_on_the_port_is_refused():
    with pytest.raises(AnsibleFilterError, match="no ConnectX-7 HCA on the cabled port"):
        nccl_roce_env([], SPARK_FACTS)


def hca(name: str, netdev: str, physical_port: int, state: str, phys_state: str) -> dict:
    return {"name": name, "netdev": netdev, "physical_port": physical_port, "state": state, "phys_state": phys_state}


# A Spark with nothing cabled: the four halves down (fabric_facts' entries; values in fixtures/fabric/SOURCES.md).
UNCABLED = [
    hca("rocep1s0f0", "enp1s0f0np0", 0, "DOWN", "Disabled"),
    hca("rocep1s0f1", "enp1s0f1np1", 1, "DOWN", "Disabled"),
    hca("roceP2p1s0f0", "enP2p1s0f0np0", 0, "DOWN", "Disabled"),
    hca("roceP2p1s0f1", "enP2p1s0f1np1", 1, "DOWN", "Disabled"),
]


def test_a_node_alone_gets_loopback_and_a_note_that_its_down_port_is_no_error():
    plan = nccl_loopback({"hcas": UNCABLED}, "spark-1", 1)
    assert (plan["host_ip"], plan["interface"], plan["transport"]) == ("127.0.0.1", "lo", "loopback")
    assert plan["env"] == {
        "NCCL_SOCKET_IFNAME": "lo",
        "GLOO_SOCKET_IFNAME": "lo",
        "TP_SOCKET_IFNAME": "lo",
        "UCX_NET_DEVICES": "lo",
        "VLLM_HOST_IP": "127.0.0.1",
        "RAY_NODE_IP_ADDRESS": "127.0.0.1",
        "MASTER_ADDR": "127.0.0.1",
        "NCCL_IB_DISABLE": "1",
    }
    assert plan["note"] == (
        "spark-1 is a cluster of one node: it needs no fabric, so none was configured or checked (no netplan, no ping, no bandwidth "
        "test), and its ConnectX-7 is no error here (ConnectX-7 port 1: rocep1s0f1 (enp1s0f1np1) DOWN (Disabled), roceP2p1s0f1 "
        "(enP2p1s0f1np1) DOWN (Disabled); no port is up). Its ranks and Ray use loopback (127.0.0.1); clients reach the API on the "
        "management network. To serve across Sparks, list them in sparkinfer_cluster_hosts and give each its nccl_network_fabric_addresses."
    )


@pytest.mark.parametrize(
    ("hcas", "said"),
    [
        ([], "ConnectX-7 port 1 has no RoCE HCA in sysfs (0 HCA port(s) listed)"),
        (
            [{**entry, "state": "ACTIVE", "phys_state": "LinkUp"} if entry["physical_port"] == 0 else entry for entry in UNCABLED],
            "ConnectX-7 port 1: rocep1s0f1 (enp1s0f1np1) DOWN (Disabled), roceP2p1s0f1 (enP2p1s0f1np1) DOWN (Disabled); port 0 is up",
        ),
        (
            [{**entry, "state": "ACTIVE", "phys_state": "LinkUp"} if entry["physical_port"] == 1 else entry for entry in UNCABLED],
            "ConnectX-7 port 1: rocep1s0f1 (enp1s0f1np1) ACTIVE (LinkUp), roceP2p1s0f1 (enP2p1s0f1np1) ACTIVE (LinkUp)",
        ),
    ],
    ids=["no-rdma", "other-port-cabled", "port-up"],
)
def test_the_note_says_how_the_port_stands_and_which_port_is_up_instead(hcas, said):
    assert f"its ConnectX-7 is no error here ({said})." in nccl_loopback({"hcas": hcas}, "spark-1", 1)["note"]


def test_loopback_needs_the_fabric_facts():
    with pytest.raises(AnsibleFilterError, match="needs fabric_facts' sparkinfer_fabric"):
        nccl_loopback({"twins": []}, "spark-1", 1)


def cabled(port: int) -> list[dict]:
    """A Spark of a pair with the cable in this port: its two halves ACTIVE, the other port's DOWN."""
    return [{**entry, "state": "ACTIVE", "phys_state": "LinkUp"} if entry["physical_port"] == port else entry for entry in UNCABLED]


def test_a_port_up_on_the_node_is_no_problem():
    assert nccl_port_problem({"spark-a": cabled(1), "spark-b": cabled(1)}, "spark-a", 1) == ""


def test_the_cable_in_the_other_port_on_every_node_names_the_port_to_set():
    problem = nccl_port_problem({"spark-a": cabled(0), "spark-b": cabled(0)}, "spark-a", 1)
    assert problem == (
        "spark-a: ConnectX-7 port 1: rocep1s0f1 (enp1s0f1np1) DOWN (Disabled), roceP2p1s0f1 (enP2p1s0f1np1) DOWN (Disabled); port 0 is up. "
        "The cable is in port 0 on every node (port 0 on spark-a, port 0 on spark-b): set nccl_network_fabric_port: 0."
    )


def test_cables_in_different_ports_name_the_port_of_each_node():
    problem = nccl_port_problem({"spark-a": cabled(0), "spark-b": cabled(1)}, "spark-a", 1)
    assert problem.endswith(
        "The cabled ports differ between the nodes (port 0 on spark-a, port 1 on spark-b): put the cable in the same port on every node, "
        "port 1 (nccl_network_fabric_port), or set nccl_network_fabric_port to the one they share."
    )


@pytest.mark.parametrize(
    "hcas",
    [UNCABLED, [{**UNCABLED[1], "state": "ACTIVE", "phys_state": "LinkUp"}, UNCABLED[3]]],
    ids=["nothing-up", "one-half-down"],
)
def test_no_other_port_up_says_to_check_the_cable_and_the_peer(hcas):
    problem = nccl_port_problem({"spark-a": hcas, "spark-b": cabled(1)}, "spark-a", 1)
    # The port itself half up is no other port up; nothing up at all is said.
    assert problem.startswith("spark-a: ConnectX-7 port 1: rocep1s0f1 (enp1s0f1np1) ")
    assert ("(Disabled). Check" in problem, "(Disabled); no port is up. Check" in problem) == ((True, False) if hcas[0]["state"] == "ACTIVE" else (False, True))
    assert problem.endswith(
        "Check that the cable sits in port 1 (nccl_network_fabric_port) on every node, the same port on both ends, and that the peer is powered on."
    )


def test_the_port_problem_needs_the_nodes_hcas():
    with pytest.raises(AnsibleFilterError, match="needs every node's fabric_facts HCAs by node name, spark-a among them"):
        nccl_port_problem({"spark-b": cabled(1)}, "spark-a", 1)
