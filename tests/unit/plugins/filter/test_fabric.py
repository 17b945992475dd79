"""nccl_roce_env: NCCL_IB_HCA for both twins, the GID index left to NCCL, each twin's GID found by its address.

The HCA entries are fabric_facts' for a Spark with port 1 cabled (values and sources in
tests/unit/plugins/module_utils/fixtures/fabric/SOURCES.md), the addresses as Ansible's network facts give them.
"""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.fabric import FilterModule, nccl_roce_env


def twin(name: str, netdev: str, *gids: tuple[int, str]) -> dict:
    return {"name": name, "netdev": netdev, "port": 1, "roce_v2_ipv4_gids": [{"index": index, "address": address} for index, address in gids]}


def facts(**addresses: str | None) -> dict:
    return {netdev: ({"ipv4": {"address": address}} if address else {}) for netdev, address in addresses.items()}


SPARK_FACTS = facts(enp1s0f1np1="192.168.100.10", enP2p1s0f1np1="192.168.101.10")
# Port 1's twins, their GIDs at index 3; on the second one drifted to 5 (a hole at 3), as seen on real Sparks.
TWINS = [twin("rocep1s0f1", "enp1s0f1np1", (3, "192.168.100.10")), twin("roceP2p1s0f1", "enP2p1s0f1np1", (3, "192.168.101.10"))]
DRIFTED = [TWINS[0], twin("roceP2p1s0f1", "enP2p1s0f1np1", (5, "192.168.101.10"))]


def test_the_filter_is_registered():
    assert FilterModule().filters() == {"nccl_roce_env": nccl_roce_env}


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
