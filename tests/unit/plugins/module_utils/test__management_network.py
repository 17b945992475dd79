"""The interfaces of a node's management network, on iproute2's real JSON answers (fixtures/fabric, see SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._management_network import ManagementReadError, management_clash, management_interfaces

FIXTURES = Path(__file__).parent / "fixtures" / "fabric"


def answer(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_the_default_routes_device_is_the_management_interface():
    answers = [answer("ip-j-4-route-default-lab-host.json"), answer("ip-j-6-route-default-lab-host.json")]
    assert management_interfaces(answers) == ["eth0"]


def test_every_nexthop_of_a_multipath_route_and_the_reached_address_s_interface_count():
    answers = [answer("ip-j-4-route-default-multipath-netns.json"), "", answer("ip-j-4-addr-to-fabric-address-netns.json")]
    assert management_interfaces(answers) == ["d0", "d1", "enp1s0f0np0"]


def test_a_fabric_interface_that_carries_the_management_network_is_named_in_the_fabric_s_order():
    answers = [answer("ip-j-4-route-default-multipath-netns.json"), answer("ip-j-4-addr-to-fabric-address-netns.json")]
    assert management_clash(answers, ["enP2p1s0f0np0", "enp1s0f0np0", "d1"]) == ["enp1s0f0np0", "d1"]
    # No interface holds an address Ansible does not reach the node at: nothing clashes.
    assert management_clash([answer("ip-j-4-addr-to-absent-address-netns.json")], ["enp1s0f0np0"]) == []


@pytest.mark.parametrize(
    ("wrong", "message"),
    [
        ("(no JSON at all)", "ip -j answered what is no JSON: Expecting value: line 1 column 1 (char 0)"),
        ('{"dst": "default"}', "ip -j answered dict, not a list of routes or interfaces"),
        # A list, but of names rather than routes or interfaces.
        ('["eth0"]', "ip -j answered list, not a list of routes or interfaces"),
    ],
    ids=["no-json", "an-object", "a-list-of-strings"],
)
def test_an_answer_that_is_no_json_list_is_refused(wrong, message):
    with pytest.raises(ManagementReadError) as raised:
        management_interfaces([wrong])
    assert str(raised.value) == message
