"""Verify two lab nodes after the nccl_network role: their fabric, netplan file and NCCL environment."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest
import testinfra
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "_shared"))
from role_runs import CONVERGE, run_playbook, run_role

SCENARIO = "nccl_network"
FABRIC_IP = {"nccl-spark-1": "192.168.176.11", "nccl-spark-2": "192.168.176.12"}
NETPLAN_ADDRESSES = {
    "nccl-spark-1": ["192.168.180.11/24", "192.168.181.11/24"],
    "nccl-spark-2": ["192.168.180.12/24", "192.168.181.12/24"],
}
ENV_FILE = "/etc/sparkinfer/nccl.env"
NETPLAN_FILE = "/etc/netplan/40-sparkinfer-fabric.yaml"
NVIDIA_NETPLAN_FILE = "/etc/netplan/40-cx7.yaml"
# The node image's copy of it, as NVIDIA's guide has it written (lab/node-image/rootfs/etc/netplan/40-cx7.yaml).
NVIDIA_NETPLAN_SHIPPED = "/usr/share/sparkinfer-lab/40-cx7.yaml"
TWINS = ["enp1s0f1np1", "enP2p1s0f1np1"]
LOCAL_FACT = "/etc/ansible/facts.d/sparkinfer_network.fact"
# The node image's Spark-shaped RoCE sysfs (lab/node-image/rootfs/usr/local/lib/sparkinfer-lab/roce_sysfs.py), which
# follows the stand-in twins: read in place of /sys, with the socket fallback off, it takes the role down its RoCE path.
ROCE = {"nccl_network_sysfs_root": "/run/sparkinfer-lab/sysfs", "nccl_network_allow_socket_fallback": False}


def node(name: str) -> testinfra.host.Host:
    return testinfra.get_host(f"ansible://{name}?ansible_inventory={os.environ['MOLECULE_INVENTORY_FILE']}")


def name_of(host) -> str:
    return host.check_output("hostname")


def ipv4_held(host, interface: str) -> list[str]:
    links = json.loads(host.check_output(f"ip -j -4 addr show dev {interface}"))
    return [address["local"] for link in links for address in link["addr_info"]]


def wait_until(condition, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(1)


def environment(host) -> dict[str, str]:
    lines = host.file(ENV_FILE).content_string.splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def test_env_file_holds_this_nodes_own_fabric_address(host):
    own_ip = host.check_output("ip -4 -o addr show dev eth0 | awk '{print $4}' | cut -d/ -f1")
    assert own_ip == FABRIC_IP[name_of(host)]
    env_file = host.file(ENV_FILE)
    assert (env_file.user, env_file.group, env_file.mode) == ("root", "root", 0o600)
    env = environment(host)
    assert env["VLLM_HOST_IP"] == env["RAY_NODE_IP_ADDRESS"] == own_ip
    assert env["MASTER_ADDR"] == FABRIC_IP["nccl-spark-1"]
    for name in ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "UCX_NET_DEVICES"):
        assert env[name] == "eth0", name
    # No RoCE HCA in the lab: sockets, and no HCA or GID index to mislead NCCL.
    assert env["NCCL_IB_DISABLE"] == "1"
    assert "NCCL_IB_HCA" not in env
    assert "NCCL_IB_GID_INDEX" not in env


def test_netplan_file_addresses_the_twins_and_netplan_accepts_it(host):
    netplan = host.file(NETPLAN_FILE)
    assert (netplan.user, netplan.mode) == ("root", 0o600)
    ethernets = yaml.safe_load(netplan.content_string)["network"]["ethernets"]
    assert list(ethernets) == TWINS
    assert [ethernets[twin]["addresses"][0] for twin in TWINS] == NETPLAN_ADDRESSES[name_of(host)]
    assert {ethernets[twin]["mtu"] for twin in TWINS} == {9000}
    # The stand-in twins exist, and netplan itself turns the file into networkd units.
    for twin in TWINS:
        assert host.interface(twin).exists, twin
    generated = host.run(
        "root=$(mktemp -d) && mkdir -p $root/etc/netplan && cp /etc/netplan/*.yaml $root/etc/netplan/ "
        f"&& netplan generate --root-dir $root && cat $root/run/systemd/network/10-netplan-{TWINS[1]}.network; rm -rf $root"
    )
    assert generated.rc == 0, generated.stderr
    # One address: NVIDIA's 40-cx7.yaml (the node image ships it, 192.168.101.10/24 on this twin) no longer adds its own.
    assert [line for line in generated.stdout.splitlines() if line.startswith("Address=")] == [f"Address={NETPLAN_ADDRESSES[name_of(host)][1]}"]
    assert "MTUBytes=9000" in generated.stdout


def test_netplan_applied_each_twin_holds_its_fabric_address_alone(host):
    # Before the role, each twin held NVIDIA's 40-cx7.yaml address (192.168.100.10, 192.168.101.10).
    for twin, address in zip(TWINS, NETPLAN_ADDRESSES[name_of(host)], strict=True):
        assert ipv4_held(host, twin) == [address.partition("/")[0]], twin


def test_an_address_added_by_hand_beside_the_fabric_address_fails_the_run_naming_it_and_the_netplan_written_is_put_back():
    head = node("nccl-spark-1")
    before = head.file(NETPLAN_FILE).content_string
    # networkd drops addresses it did not set when netplan applies, unless a drop-in tells it to keep them (as a setup
    # script of its own may leave): then an address added by hand stays beside the fabric address.
    keep = f"/etc/systemd/network/10-netplan-{TWINS[0]}.network.d/lab-keep.conf"
    head.check_output(
        f"rm -f {NETPLAN_FILE}.*~ && mkdir -p {keep.rpartition('/')[0]} && printf '[Network]\\nKeepConfiguration=static\\n' > {keep}"
        f" && ip addr add 10.99.99.99/24 dev {TWINS[0]}"
    )
    try:
        # New fabric addresses: the run writes and applies a netplan, which then does not settle; with the ping off, the
        # settle check alone puts it back.
        code, output = run_role(
            SCENARIO,
            {"nccl_network_settle_timeout": 4, "nccl_network_ping_enabled": False, "nccl_network_fabric_addresses": ["192.168.180.21/24", "192.168.181.21/24"]},
            limit="nccl-spark-1",
        )
        backups = head.check_output(f"ls {NETPLAN_FILE}.*~").split()
    finally:
        head.run(
            f"rm -f {keep} {NETPLAN_FILE}.*~; ip addr del 10.99.99.99/24 dev {TWINS[0]}; ip addr del 192.168.180.21/24 dev {TWINS[0]}; timeout 60 netplan apply"
        )
    assert code == 2, output[-2000:]
    held = re.search(rf"{TWINS[0]} on nccl-spark-1 holds ([0-9., ]+), where the fabric netplan gives 192.168.180.21/24 alone, still after 4 s", output)
    assert held, output[-2000:]
    assert "10.99.99.99" in held.group(1).split(", ")
    assert f"ip addr del ADDRESS dev {TWINS[0]}." in output, output[-2000:]
    assert len(backups) == 1, backups
    assert (
        f"The netplan files this run wrote were put back as they were ({NETPLAN_FILE} from {backups[0]}), and netplan apply restored the previous network."
    ) in output, output[-2000:]
    assert head.file(NETPLAN_FILE).content_string == before
    for twin, address in zip(TWINS, NETPLAN_ADDRESSES["nccl-spark-1"], strict=True):
        wait_until(lambda twin=twin, address=address: ipv4_held(head, twin) == [address.partition("/")[0]])
        assert ipv4_held(head, twin) == [address.partition("/")[0]], twin


def test_nvidias_netplan_gave_up_the_twins_and_is_kept_as_it_was_beside_itself(host):
    nvidia = host.file(NVIDIA_NETPLAN_FILE)
    assert nvidia.content_string.startswith(f"# sparkinfer.cluster moved {', '.join(TWINS)} out of this file into {NETPLAN_FILE}")
    assert yaml.safe_load(nvidia.content_string) == {"network": {"version": 2}}
    assert (nvidia.user, nvidia.mode) == ("root", 0o600)
    [backup] = host.check_output(f"ls {NVIDIA_NETPLAN_FILE}.*~").split()
    assert host.file(backup).content_string == host.file(NVIDIA_NETPLAN_SHIPPED).content_string
    for twin, address in zip(TWINS, NETPLAN_ADDRESSES[name_of(host)]):
        assert yaml.safe_load(host.check_output(f"netplan get ethernets.{twin}"))["addresses"] == [address]


def test_a_twin_configured_by_a_file_the_role_does_not_own_is_refused():
    # netplan also reads /run/netplan, which the role leaves alone: an address there would join the twin's own.
    head = node("nccl-spark-1")
    head.check_output(f"mkdir -p /run/netplan && cp {NVIDIA_NETPLAN_SHIPPED} /run/netplan/40-cx7.yaml && chmod 0600 /run/netplan/40-cx7.yaml")
    try:
        code, output = run_role(SCENARIO, {}, limit="nccl-spark-1")
    finally:
        head.check_output("rm -f /run/netplan/40-cx7.yaml")
    assert code == 2, output[-2000:]
    assert f"netplan merges for {TWINS[0]} on nccl-spark-1 the addresses ['192.168.100.10/24', '{NETPLAN_ADDRESSES['nccl-spark-1'][0]}']" in output, output[
        -2000:
    ]
    assert "another netplan file configures it too (look in /run/netplan and /lib/netplan" in output, output[-2000:]


def test_fabric_carries_jumbo_frames_unfragmented_and_nothing_bigger(host):
    peer = FABRIC_IP["nccl-spark-2" if name_of(host) == "nccl-spark-1" else "nccl-spark-1"]
    fits = host.run(f"ping -M do -s 8972 -c 2 -W 2 -I eth0 {peer}")
    assert fits.rc == 0, fits.stdout + fits.stderr
    too_big = host.run(f"ping -M do -s 8973 -c 1 -W 2 -I eth0 {peer}")
    assert too_big.rc != 0
    assert "message too long" in (too_big.stdout + too_big.stderr).lower()


# The argument specification's refusals are drill 7's (e2e); the rules of the variables alone are one table
# (module_utils/_nccl_settings.py, each rule unit-tested; a fabric address without its prefix length below, in
# test_netplan_refuses_a_bad_file_and_keeps_the_old_one), of which the netplan file's name, which reaches a command, is here.
@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            {"nccl_network_allow_socket_fallback": False},
            "nccl-spark-1 has no RoCE HCA on ConnectX-7 port 1 (sysfs lists no RDMA device). NCCL would fall back to TCP sockets",
        ),
        ({"nccl_network_mtu": 1500}, "eth0 on nccl-spark-1 has MTU 9000, not 1500 (nccl_network_mtu)"),
        ({"nccl_network_netplan_file": "/etc/netplan/40-$(touch /tmp/sparkinfer-injected).yaml"}, "give a file in /etc/netplan whose name"),
    ],
)
def test_role_refuses_what_would_break_nccl(override, message):
    code, output = run_role(SCENARIO, override)
    assert code == 2, output[-2000:]
    assert message in output, output[-2000:]
    assert not node("nccl-spark-1").file("/tmp/sparkinfer-injected").exists


def test_netplan_refuses_a_bad_file_and_keeps_the_old_one():
    # An impossible prefix length: the preflight's rule refuses it; past the preflight, netplan's own check refuses the file.
    before = node("nccl-spark-1").file(NETPLAN_FILE).content_string
    bad = {"nccl_network_fabric_addresses": ["192.168.180.11/99", "192.168.181.11/24"]}
    code, output = run_role(SCENARIO, bad, limit="nccl-spark-1")
    assert code == 2, output[-2000:]
    assert "nccl_network_fabric_addresses on nccl-spark-1 holds 192.168.180.11/99; each entry must be an IPv4 address" in output, output[-2000:]
    code, output = run_playbook(CONVERGE, bad, "nccl-spark-1", scenario=SCENARIO, options=("--skip-tags", "nccl_network_preflight"))
    assert code == 2, output[-2000:]
    assert "failed to validate" in output, output[-2000:]
    assert node("nccl-spark-1").file(NETPLAN_FILE).content_string == before


def test_a_changed_netplan_keeps_the_replaced_file_beside_it_where_netplan_does_not_read_it():
    head = node("nccl-spark-1")
    before = head.file(NETPLAN_FILE).content_string
    head.check_output(f"rm -f {NETPLAN_FILE}.*~")
    code, output = run_role(SCENARIO, {"nccl_network_fabric_addresses": ["192.168.180.21/24", "192.168.181.21/24"]}, limit="nccl-spark-1")
    try:
        assert code == 0, output[-2000:]
        assert "192.168.180.21/24" in head.file(NETPLAN_FILE).content_string
        backups = head.check_output(f"ls {NETPLAN_FILE}.*~").split()
        assert len(backups) == 1, backups
        backup = head.file(backups[0])
        assert (backup.content_string, backup.user, backup.mode) == (before, "root", 0o600)
    finally:
        code, output = run_role(SCENARIO, {}, limit="nccl-spark-1")
        head.check_output(f"rm -f {NETPLAN_FILE}.*~")
    assert code == 0, output[-2000:]
    assert NETPLAN_ADDRESSES["nccl-spark-1"][0] in head.file(NETPLAN_FILE).content_string


def test_a_fabric_interface_that_carries_the_default_route_is_refused_and_nothing_is_written():
    # The management network's interface named as a twin: here a stand-in twin given the node's default route.
    head = node("nccl-spark-1")
    before = head.file(NETPLAN_FILE).content_string
    twin = TWINS[0]
    head.check_output(f"ip route add default dev {twin} metric 4242")
    try:
        code, output = run_role(SCENARIO, {"nccl_network_fabric_addresses": ["192.168.180.21/24", "192.168.181.21/24"]}, limit="nccl-spark-1")
    finally:
        head.check_output(f"ip route del default dev {twin} metric 4242")
    assert code == 2, output[-2000:]
    assert f"nccl-spark-1: {twin} carries this node's default route or the address Ansible reaches it at" in output, output[-2000:]
    assert "Nothing was written." in output, output[-2000:]
    assert head.file(NETPLAN_FILE).content_string == before


def test_a_cut_fabric_is_reported_with_the_failing_pair():
    worker = node("nccl-spark-2")
    drop = "iptables -I INPUT -i eth0 -p icmp -j DROP"
    worker.check_output(drop)
    try:
        code, output = run_role(SCENARIO, {})
    finally:
        worker.check_output(drop.replace("-I", "-D", 1))
    assert code == 2, output[-2000:]
    assert "The fabric fails between nccl-spark-1 -> nccl-spark-2 (192.168.176.12" in output, output[-2000:]


def test_a_fabric_that_fails_after_apply_gets_the_previous_netplan_back_and_applied():
    nodes = {name: node(name) for name in FABRIC_IP}
    before = {name: host.file(NETPLAN_FILE).content_string for name, host in nodes.items()}
    for host in nodes.values():
        host.check_output(f"rm -f {NETPLAN_FILE}.*~")
    drop = "iptables -I INPUT -i eth0 -p icmp -j DROP"
    nodes["nccl-spark-2"].check_output(drop)
    try:
        # The twins are each node's own veths: both nodes may take the same new addresses.
        code, output = run_role(SCENARIO, {"nccl_network_fabric_addresses": ["192.168.180.21/24", "192.168.181.21/24"]})
    finally:
        nodes["nccl-spark-2"].check_output(drop.replace("-I", "-D", 1))
    backups = {name: host.check_output(f"ls {NETPLAN_FILE}.*~").split() for name, host in nodes.items()}
    for host in nodes.values():
        host.check_output(f"rm -f {NETPLAN_FILE}.*~")
    assert code == 2, output[-2000:]
    assert "The fabric fails between nccl-spark-1 -> nccl-spark-2 (192.168.176.12" in output, output[-2000:]
    for name, host in nodes.items():
        assert (
            f"The netplan files this run wrote were put back as they were ({NETPLAN_FILE} from {backups[name][0]}), "
            "and netplan apply restored the previous network."
        ) in output, output[-2000:]
        assert host.file(NETPLAN_FILE).content_string == before[name]
        # networkd moves the addresses a moment after netplan apply returns.
        previous = NETPLAN_ADDRESSES[name][0].partition("/")[0]
        wait_until(lambda host=host, previous=previous: ipv4_held(host, TWINS[0]) == [previous])
        assert ipv4_held(host, TWINS[0]) == [previous], name


def test_roce_path_gives_nccl_both_twins_of_the_cabled_port_and_leaves_the_gid_index_to_nccl():
    code, output = run_role(SCENARIO, ROCE)
    assert code == 0, output[-2000:]
    for name in FABRIC_IP:
        env = environment(node(name))
        assert env["NCCL_IB_HCA"] == "rocep1s0f1,roceP2p1s0f1", name
        assert env["NCCL_IB_DISABLE"] == "0"
        assert "NCCL_IB_GID_INDEX" not in env
        assert (env["NCCL_DEBUG"], env["NCCL_DEBUG_SUBSYS"]) == ("INFO", "INIT,NET")
        assert env["NCCL_SOCKET_IFNAME"] == "eth0"
        assert json.loads(node(name).file(LOCAL_FACT).content_string)["transport"] == "ib"


def test_roce_a_gid_index_is_pinned_only_where_both_twins_hold_their_gid():
    # The stand-in's table, as a real Spark's: the default GID at 0 and 1, the address at 2 (v1) and 3 (RoCE v2).
    code, output = run_role(SCENARIO, {**ROCE, "nccl_network_ib_gid_index": 5}, limit="nccl-spark-1")
    assert code == 2, output[-2000:]
    assert (
        f"nccl_network_ib_gid_index is 5, but rocep1s0f1 ({TWINS[0]}, 192.168.180.11) holds its RoCE v2 GID at index 3 (indices drift as addresses change)"
    ) in output, output[-2000:]
    code, output = run_role(SCENARIO, {**ROCE, "nccl_network_ib_gid_index": 3}, limit="nccl-spark-1")
    assert code == 0, output[-2000:]
    assert environment(node("nccl-spark-1"))["NCCL_IB_GID_INDEX"] == "3"


def test_roce_a_twin_without_link_is_named_with_its_state():
    head = node("nccl-spark-1")
    address = NETPLAN_ADDRESSES["nccl-spark-1"][1].partition("/")[0]
    head.check_output(f"ip link set {TWINS[1]}-x down")
    try:
        code, output = run_role(SCENARIO, {**ROCE, "nccl_network_netplan_apply": False, "nccl_network_settle_timeout": 4}, limit="nccl-spark-1")
    finally:
        head.check_output(f"ip link set {TWINS[1]}-x up")
        wait_until(lambda: ipv4_held(head, TWINS[1]) == [address])
    assert code == 2, output[-2000:]
    assert (
        f"nccl-spark-1: ConnectX-7 port 1: rocep1s0f1 ({TWINS[0]}) ACTIVE (LinkUp), roceP2p1s0f1 ({TWINS[1]}) DOWN (Disabled). "
        "Check that the cable sits in port 1 (nccl_network_fabric_port) on every node"
    ) in output, output[-2000:]


def test_roce_twins_in_one_subnet_are_refused():
    code, output = run_role(SCENARIO, {**ROCE, "nccl_network_fabric_addresses": ["192.168.180.11/24", "192.168.180.21/24"]}, limit="nccl-spark-1")
    assert code == 2, output[-2000:]
    assert (f"The ConnectX-7 twins of nccl-spark-1 are ['{TWINS[0]}', '{TWINS[1]}'] in the IPv4 networks ['192.168.180.0', '192.168.180.0']") in output, output[
        -2000:
    ]


# nccl-tests on the head, as a Spark owner runs it: the node image's stand-in prints a real Spark pair's run of these
# arguments when the RoCE environment's NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=INIT,NET reach it (gb10-standin/SOURCES.md).
PERF = {**ROCE, "nccl_network_run_perf_test": True, "nccl_network_perf_argv": ["/opt/nccl-tests/build/all_gather_perf", "-b", "1G", "-e", "1G"]}


def test_roce_the_bandwidth_test_runs_nccl_tests_with_the_fabric_environment_and_gates_on_its_floor():
    code, output = run_role(SCENARIO, PERF, limit="nccl-spark-1")
    assert code == 0, output[-2000:]
    assert (
        "all_gather_perf: 21.99 GB/s bus bandwidth at the largest buffer (1073741824 bytes) between spark-fb97, spark-4440, "
        "over NET/IB (rocep1s0f1, roceP2p1s0f1); the floor is 21.875 GB/s."
    ) in output, output[-2000:]
    code, output = run_role(SCENARIO, {**PERF, "nccl_network_perf_min_busbw_gbps": 23}, limit="nccl-spark-1")
    assert code == 2, output[-2000:]
    assert "bus bandwidth 21.99 GB/s at 1 GiB is below 23 GB/s. Just under the floor: most likely MTU 1500 on one end of the link." in output, output[-2000:]


def test_absent_removes_what_present_wrote_and_present_restores_it():
    code, output = run_role(SCENARIO, {"nccl_network_state": "absent"})
    assert code == 0, output[-2000:]
    for name in FABRIC_IP:
        assert not node(name).file(ENV_FILE).exists
        assert not node(name).file(NETPLAN_FILE).exists
        assert node(name).file(NVIDIA_NETPLAN_FILE).content_string == node(name).file(NVIDIA_NETPLAN_SHIPPED).content_string
    code, output = run_role(SCENARIO, {})
    assert code == 0, output[-2000:]
    for name, fabric_ip in FABRIC_IP.items():
        assert environment(node(name))["VLLM_HOST_IP"] == fabric_ip
        assert environment(node(name))["NCCL_IB_DISABLE"] == "1"
        assert ipv4_held(node(name), TWINS[1]) == [NETPLAN_ADDRESSES[name][1].partition("/")[0]]
