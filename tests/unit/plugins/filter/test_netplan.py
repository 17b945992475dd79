"""netplan_fabric_claims: the fabric interfaces' entries taken out of the other netplan files, on NVIDIA's own files.

Fixtures and their sources: tests/unit/plugins/filter/fixtures/netplan/SOURCES.md.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.netplan import FilterModule, netplan_fabric_claims, netplan_management_clash

FIXTURES = Path(__file__).parent / "fixtures" / "netplan"
TWINS = ["enp1s0f1np1", "enP2p1s0f1np1"]
OWNER = "/etc/netplan/40-sparkinfer-fabric.yaml"


def slurped(path: str, text: str) -> dict:
    """What ansible.builtin.slurp returns for a file."""
    return {"source": path, "content": base64.b64encode(text.encode()).decode(), "encoding": "base64"}


def fixture(name: str, path: str = "/etc/netplan/40-cx7.yaml") -> dict:
    return slurped(path, (FIXTURES / name).read_text())


def test_the_filter_is_registered():
    assert FilterModule().filters() == {"netplan_fabric_claims": netplan_fabric_claims, "netplan_management_clash": netplan_management_clash}


def test_nvidias_static_file_loses_both_twins_and_says_where_they_went():
    [claim] = netplan_fabric_claims([fixture("nvidia-40-cx7-static-node1.yaml")], TWINS, OWNER)
    assert claim["path"] == "/etc/netplan/40-cx7.yaml"
    assert claim["interfaces"] == TWINS
    assert claim["content"] == (
        f"# sparkinfer.cluster moved enp1s0f1np1, enP2p1s0f1np1 out of this file into {OWNER}: netplan merges the files\n"
        "# of /etc/netplan, and an interface configured twice keeps the addresses of both. The file as it was\n"
        "# is kept beside this one (NAME.yaml.PID.DATE~, which netplan does not read).\n"
        "network:\n"
        "  version: 2\n"
    )


def test_nvidias_link_local_file_keeps_the_interface_of_the_other_port_in_block_style_and_in_its_order():
    [claim] = netplan_fabric_claims([fixture("nvidia-cx7-netplan-link-local.yaml")], TWINS, OWNER)
    assert claim["interfaces"] == ["enp1s0f1np1"]
    header, body = claim["content"].split("does not read).\n")
    assert header.startswith(f"# sparkinfer.cluster moved enp1s0f1np1 out of this file into {OWNER}: ")
    # version stays before ethernets, as NVIDIA wrote them; the lists and mappings stay in block style.
    assert body == "network:\n  version: 2\n  ethernets:\n    enp1s0f0np0:\n      link-local:\n      - ipv4\n"


def test_an_entry_without_settings_is_kept_as_it_is():
    # NVIDIA's link-local file with the other port's entry emptied (`enp1s0f0np0:` and nothing under it).
    text = (FIXTURES / "nvidia-cx7-netplan-link-local.yaml").read_text()
    text = text.replace("    enp1s0f0np0:\n      link-local: [ ipv4 ]\n", "    enp1s0f0np0:\n")
    [claim] = netplan_fabric_claims([slurped("/etc/netplan/40-cx7.yaml", text)], TWINS, OWNER)
    assert claim["interfaces"] == ["enp1s0f1np1"]
    assert yaml.safe_load(claim["content"]) == {"network": {"version": 2, "ethernets": {"enp1s0f0np0": None}}}


def test_files_that_do_not_name_a_twin_are_left_alone():
    others = [
        slurped("/etc/netplan/01-network-manager-all.yaml", "network:\n  version: 2\n  renderer: NetworkManager\n"),
        slurped("/etc/netplan/empty.yaml", ""),
    ]
    assert netplan_fabric_claims(others, TWINS, OWNER) == []


def test_every_file_that_names_a_twin_is_claimed_in_order():
    claims = netplan_fabric_claims(
        [fixture("nvidia-cx7-netplan-link-local.yaml", "/etc/netplan/30-link-local.yaml"), fixture("nvidia-40-cx7-static-node1.yaml")], TWINS, OWNER
    )
    assert [(claim["path"], claim["interfaces"]) for claim in claims] == [
        ("/etc/netplan/30-link-local.yaml", ["enp1s0f1np1"]),
        ("/etc/netplan/40-cx7.yaml", TWINS),
    ]


def test_files_that_claim_nothing_do_not_stop_the_files_after_them_from_being_claimed():
    files = [
        slurped("/etc/netplan/00-empty.yaml", ""),
        fixture("networkmanager-90-NM-ethernet.yaml", "/etc/netplan/10-NM-0f7a33ac.yaml"),
        fixture("nvidia-40-cx7-static-node1.yaml"),
    ]
    assert [(claim["path"], claim["interfaces"]) for claim in netplan_fabric_claims(files, TWINS, OWNER)] == [("/etc/netplan/40-cx7.yaml", TWINS)]


@pytest.mark.parametrize(
    ("network", "named"),
    [
        ({"bonds": {"bond0": {"interfaces": TWINS, "addresses": ["10.0.0.1/24"]}}}, "bonds.bond0.interfaces names enp1s0f1np1"),
        ({"bridges": {"br0": {"interfaces": ["enP2p1s0f1np1"]}}}, "bridges.br0.interfaces names enP2p1s0f1np1"),
        ({"vlans": {"vlan10": {"id": 10, "link": "enp1s0f1np1"}}}, "vlans.vlan10.link names enp1s0f1np1"),
    ],
    ids=["bond", "bridge", "vlan"],
)
def test_a_twin_that_another_device_uses_is_refused_naming_the_file_and_device(network, named):
    text = yaml.safe_dump({"network": {"version": 2, **network}})
    with pytest.raises(AnsibleFilterError, match=re.escape(f"/etc/netplan/60-bond.yaml: {named}") + ".*Nothing was written"):
        netplan_fabric_claims([slurped("/etc/netplan/60-bond.yaml", text)], TWINS, OWNER)


def test_the_refusal_names_every_device_entry_and_says_what_to_do():
    # A bond of both twins with a vlan on the bond: the vlan names no twin, and does not hide the bond.
    text = yaml.safe_dump({"network": {"version": 2, "bonds": {"bond0": {"interfaces": TWINS}}, "vlans": {"vlan10": {"id": 10, "link": "bond0"}}}})
    with pytest.raises(AnsibleFilterError) as raised:
        netplan_fabric_claims([slurped("/etc/netplan/60-bond.yaml", text)], TWINS, OWNER)
    assert str(raised.value) == (
        "/etc/netplan/60-bond.yaml: bonds.bond0.interfaces names enp1s0f1np1; "
        "/etc/netplan/60-bond.yaml: bonds.bond0.interfaces names enP2p1s0f1np1. "
        "A fabric interface that another device uses, or that a pattern configures with other interfaces, "
        "cannot hold its own fabric address alone: take it out of that device or pattern, or leave nccl_network_fabric_addresses "
        "empty and configure the fabric yourself. Nothing was written."
    )


def test_a_refused_file_is_refused_even_when_a_later_file_is_fine():
    text = yaml.safe_dump({"network": {"version": 2, "bridges": {"br0": {"interfaces": ["enP2p1s0f1np1"]}}}})
    files = [slurped("/etc/netplan/30-bridge.yaml", text), fixture("nvidia-40-cx7-static-node1.yaml")]
    with pytest.raises(AnsibleFilterError, match=re.escape("/etc/netplan/30-bridge.yaml: bridges.br0.interfaces names enP2p1s0f1np1. ")):
        netplan_fabric_claims(files, TWINS, OWNER)


@pytest.mark.parametrize(
    ("slurped_files", "interfaces"),
    [("/etc/netplan/40-cx7.yaml", TWINS), ([], "enp1s0f1np1,enP2p1s0f1np1")],
    ids=["a-path-for-the-slurp-results", "a-string-for-the-interfaces"],
)
def test_anything_but_two_lists_is_refused(slurped_files, interfaces):
    with pytest.raises(AnsibleFilterError) as raised:
        netplan_fabric_claims(slurped_files, interfaces, OWNER)
    assert str(raised.value) == "netplan_fabric_claims takes a list of slurp results and a list of interface names"


def test_a_file_that_is_not_yaml_is_named():
    with pytest.raises(AnsibleFilterError, match=re.escape("/etc/netplan/bad.yaml is not readable netplan YAML (at line 2, column 1)")):
        netplan_fabric_claims([slurped("/etc/netplan/bad.yaml", "network: [\n")], TWINS, OWNER)


def test_a_broken_file_is_named_by_line_never_by_its_text():
    # A Wi-Fi entry whose password lost its closing quote: the YAML parser's own message quotes that line.
    text = 'network:\n  version: 2\n  wifis:\n    wlan0:\n      access-points:\n        "home":\n          password: "PLANTEDsecret\n'
    with pytest.raises(AnsibleFilterError) as raised:
        netplan_fabric_claims([slurped("/etc/netplan/50-wifi.yaml", text)], TWINS, OWNER)
    # The parser stopped at the end of the file (line 8), not where the quoted scalar began (line 7, column 21).
    assert str(raised.value) == (
        "/etc/netplan/50-wifi.yaml is not readable netplan YAML (at line 8, column 1): netplan generate would refuse it too; "
        "mend or remove it (netplan generate names the problem)"
    )
    assert "PLANTED" not in str(raised.value)
    assert raised.value.__cause__ is None


def test_a_file_that_is_not_utf8_is_named():
    result = {"source": "/etc/netplan/bin.yaml", "content": base64.b64encode(b"\xff\xfe").decode()}
    with pytest.raises(AnsibleFilterError, match=re.escape("/etc/netplan/bin.yaml is not readable netplan YAML (not UTF-8 text)")):
        netplan_fabric_claims([result], TWINS, OWNER)


def test_a_slurp_that_failed_is_named_by_its_item_or_else_by_a_question_mark():
    # A looped slurp of a file gone since it was found: slurp's failure has no content and no source.
    failed = {"failed": True, "msg": "File not found: /etc/netplan/gone.yaml", "changed": False}
    with pytest.raises(AnsibleFilterError) as raised:
        netplan_fabric_claims([{**failed, "item": "/etc/netplan/gone.yaml"}], TWINS, OWNER)
    assert str(raised.value) == (
        "/etc/netplan/gone.yaml is not readable netplan YAML (unreadable): netplan generate would refuse it too; "
        "mend or remove it (netplan generate names the problem)"
    )
    with pytest.raises(AnsibleFilterError, match=re.escape("? is not readable netplan YAML (unreadable): ")):
        netplan_fabric_claims([failed], TWINS, OWNER)


def test_a_networkmanager_profile_that_matches_a_twin_by_name_is_claimed():
    # NetworkManager keys its profiles NM-<uuid> and names the interface in match.name (here enp1s0).
    [claim] = netplan_fabric_claims([fixture("networkmanager-90-NM-ethernet.yaml", "/etc/netplan/90-NM-0f7a33ac.yaml")], ["enp1s0"], OWNER)
    assert claim["interfaces"] == ["enp1s0"]
    assert yaml.safe_load(claim["content"]) == {"network": {"version": 2}}
    assert netplan_fabric_claims([fixture("networkmanager-90-NM-ethernet.yaml")], TWINS, OWNER) == []


def test_a_pattern_that_takes_in_a_twin_with_other_interfaces_is_refused():
    text = yaml.safe_dump({"network": {"version": 2, "ethernets": {"all-cx7": {"match": {"name": "enp1s0f*"}, "mtu": 9000}}}})
    with pytest.raises(AnsibleFilterError, match=re.escape("/etc/netplan/50-all.yaml: ethernets.all-cx7.match.name 'enp1s0f*' takes in enp1s0f1np1")):
        netplan_fabric_claims([slurped("/etc/netplan/50-all.yaml", text)], TWINS, OWNER)


def test_a_pattern_after_other_entries_is_refused_naming_every_twin_it_takes_in():
    # NVIDIA's link-local file, its enp1s0f1np1 entry replaced by a pattern that takes in both twins.
    text = (FIXTURES / "nvidia-cx7-netplan-link-local.yaml").read_text()
    text = text.replace("    enp1s0f1np1:\n", "    all-cx7:\n      match:\n        name: en*\n")
    with pytest.raises(
        AnsibleFilterError, match=re.escape("/etc/netplan/40-cx7.yaml: ethernets.all-cx7.match.name 'en*' takes in enp1s0f1np1, enP2p1s0f1np1. ")
    ):
        netplan_fabric_claims([slurped("/etc/netplan/40-cx7.yaml", text)], TWINS, OWNER)


def test_the_management_clash_takes_the_registered_stdouts_and_refuses_what_is_no_list():
    routes = '[{"dst":"default","gateway":"192.0.2.1","dev":"eth0","flags":[]}]'
    assert netplan_management_clash([routes, None], ["eth0", "enp1s0f1np1"]) == ["eth0"]
    with pytest.raises(AnsibleFilterError, match="netplan_management_clash: expected the answers of ip -j as a list, got str"):
        netplan_management_clash(routes, ["eth0"])
    # The registered loop result itself rather than the list of its stdouts.
    with pytest.raises(AnsibleFilterError) as raised:
        netplan_management_clash({"results": [{"stdout": routes}]}, ["eth0"])
    assert str(raised.value) == "netplan_management_clash: expected the answers of ip -j as a list, got dict"
    with pytest.raises(AnsibleFilterError, match="netplan_management_clash: ip -j answered what is no JSON"):
        netplan_management_clash(["(no JSON at all)"], ["eth0"])
