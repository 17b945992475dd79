"""The sysfs fabric reader and its pure functions, on generated sysfs trees of a DGX Spark.

The trees are built under tmp_path from the dicts below, in the kernel's layout and formats; the
names, formats and values, and where each comes from, are in fixtures/fabric/SOURCES.md.
"""

from __future__ import annotations

import errno
import ipaddress
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils import _fabric
from ansible_collections.sparkinfer.cluster.plugins.module_utils._fabric import (
    FabricParseError,
    FabricReadError,
    GidRead,
    HcaRead,
    NetdevRead,
    PortRead,
    SysfsRead,
    SysfsReader,
    fabric_facts,
    find_twins,
    gid_ipv4,
    is_zero_gid,
    parse_numbered,
    parse_pci_address,
    parse_rate_gbps,
    roce_v2_ipv4_gids,
    twin_pairs,
)

# ------------------------------------------------------------------ the tree generator


@dataclass(frozen=True)
class Link:
    """A symlink, target relative to the link's directory, as sysfs writes them."""

    target: str


class _Einval:
    """A file the kernel refuses to read (EINVAL), such as gid_attrs/types/N of an unused GID."""


EINVAL = _Einval()
Tree = dict  # relative path -> str (file text) | Link | EINVAL


def build(root: Path, tree: Tree) -> set[str]:
    """Write tree under root; return the absolute paths that must fail with EINVAL."""
    refused = set()
    for relative, value in sorted(tree.items()):
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(value, Link):
            path.symlink_to(value.target)
        elif value is EINVAL:
            path.write_text("", encoding="ascii")
            refused.add(str(path))
        else:
            path.write_text(f"{value}\n", encoding="ascii")
    return refused


_READ_ATTRIBUTE = _fabric.read_attribute  # the real one, even while a test has patched the module's


def refusing(paths: set[str]) -> Callable[[str], str]:
    """read_attribute, except that paths (and files below a refused link) fail with EINVAL like the kernel."""
    real = {os.path.realpath(path) for path in paths}

    def read(path: str) -> str:
        if os.path.realpath(path) in real:
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL), path)
        return _READ_ATTRIBUTE(path)

    return read


def sysfs(root: Path, tree: Tree) -> SysfsReader:
    return SysfsReader(str(root), read=refusing(build(root, tree)))


V1 = "IB/RoCE v1"
V2 = "RoCE v2"
GID_TABLE_SIZE = 16  # mlx5 has 256 entries (gid_tbl_len); the size does not matter to the reader
ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"


def v4_gid(ip: str) -> str:
    """The GID the kernel writes for an IPv4 address: ::ffff:a.b.c.d in full-width hex groups."""
    packed = ipaddress.IPv6Address(f"::ffff:{ip}").packed
    return ":".join(packed[i : i + 2].hex() for i in range(0, 16, 2))


def link_local_gid(mac: str) -> str:
    """The default GID of a RoCE port: fe80::/64 with the EUI-64 of the netdev's MAC."""
    octets = [int(part, 16) for part in mac.split(":")]
    eui = [octets[0] ^ 0x02, *octets[1:3], 0xFF, 0xFE, *octets[3:]]
    return "fe80:0000:0000:0000:" + ":".join(f"{eui[i]:02x}{eui[i + 1]:02x}" for i in range(0, 8, 2))


def standard_gids(mac: str, ip: str | None) -> dict[int, tuple[str, str]]:
    """The table of an mlx5 RoCE port: link-local v1 and v2 at 0 and 1, then the IPv4 address v1 and v2."""
    table = {0: (link_local_gid(mac), V1), 1: (link_local_gid(mac), V2)}
    if ip is not None:
        table.update({2: (v4_gid(ip), V1), 3: (v4_gid(ip), V2)})
    return table


def drifted_gids(mac: str, ip: str) -> dict[int, tuple[str, str]]:
    """After interface events: 2 and 3 are holes, the IPv4 entries came back at 4 and 5."""
    return {0: (link_local_gid(mac), V1), 1: (link_local_gid(mac), V2), 4: (v4_gid(ip), V1), 5: (v4_gid(ip), V2)}


PCI_ROOT = {"0000": "devices/pci0000:00/0000:00:00.0", "0002": "devices/pci0002:00/0002:00:00.0"}


@dataclass
class Half:
    """One PCIe function of a Spark's ConnectX-7: its RDMA device and its netdev."""

    hca: str
    netdev: str
    pci: str
    mac: str
    up: bool = False
    ip: str | None = None
    mtu: int = 1500
    gids: dict[int, tuple[str, str]] | None = None
    refuse_types: bool = False
    refuse_ndevs: bool = False

    def tree(self) -> Tree:
        pci_dir = f"{PCI_ROOT[self.pci[:4]]}/{self.pci}"
        ib = f"{pci_dir}/infiniband/{self.hca}"
        port = f"{ib}/ports/1"
        net = f"{pci_dir}/net/{self.netdev}"
        tree: Tree = {
            f"class/infiniband/{self.hca}": Link(f"../../{ib}"),
            f"{ib}/device": Link(f"../../../{self.pci}"),
            f"{ib}/node_type": "1: CA",
            f"{port}/state": "4: ACTIVE" if self.up else "1: DOWN",
            f"{port}/phys_state": "5: LinkUp" if self.up else "3: Disabled",
            f"{port}/link_layer": "Ethernet",
            f"{port}/rate": "200 Gb/sec (4X HDR)" if self.up else "100 Gb/sec (2X HDR)",
            f"class/net/{self.netdev}": Link(f"../../{net}"),
            f"{net}/mtu": str(self.mtu),
            f"{net}/operstate": "up" if self.up else "down",
            f"{net}/address": self.mac,
            f"{net}/speed": "200000" if self.up else EINVAL,
            f"{net}/type": "1",
        }
        gids = self.gids if self.gids is not None else standard_gids(self.mac, self.ip)
        for index in range(GID_TABLE_SIZE):
            gid, kind = gids.get(index, (ZERO_GID, ""))
            unused = gid == ZERO_GID
            tree[f"{port}/gids/{index}"] = gid
            tree[f"{port}/gid_attrs/types/{index}"] = EINVAL if unused or self.refuse_types else kind
            tree[f"{port}/gid_attrs/ndevs/{index}"] = EINVAL if unused or self.refuse_ndevs else self.netdev
        return tree


def spark_halves(**changes: dict) -> list[Half]:
    """A Spark cabled on port 1 (NVIDIA's Connect Two Sparks, node 1): both halves of port 1 up, port 0 down."""
    halves = [
        Half("rocep1s0f0", "enp1s0f0np0", "0000:01:00.0", "3c:6d:66:cc:b3:b6"),
        Half("rocep1s0f1", "enp1s0f1np1", "0000:01:00.1", "3c:6d:66:cc:b3:b7", up=True, ip="192.168.100.10", mtu=9000),
        Half("roceP2p1s0f0", "enP2p1s0f0np0", "0002:01:00.0", "3c:6d:66:cc:b3:b8"),
        Half("roceP2p1s0f1", "enP2p1s0f1np1", "0002:01:00.1", "3c:6d:66:cc:b3:b9", up=True, ip="192.168.101.10", mtu=9000),
    ]
    for half in halves:
        for name, value in changes.get(half.hca, {}).items():
            setattr(half, name, value)
    return halves


HOST_NETDEVS: Tree = {
    "class/net/lo": Link("../../devices/virtual/net/lo"),
    "devices/virtual/net/lo/mtu": "65536",
    "devices/virtual/net/lo/operstate": "unknown",
    "devices/virtual/net/lo/address": "00:00:00:00:00:00",
    "devices/virtual/net/lo/speed": EINVAL,
    "devices/virtual/net/lo/type": "772",
    "class/net/enP7s7": Link("../../devices/pci0007:00/0007:00:00.0/0007:01:00.0/net/enP7s7"),
    "devices/pci0007:00/0007:00:00.0/0007:01:00.0/net/enP7s7/mtu": "1500",
    "devices/pci0007:00/0007:00:00.0/0007:01:00.0/net/enP7s7/operstate": "up",
    "devices/pci0007:00/0007:00:00.0/0007:01:00.0/net/enP7s7/address": "3c:6d:66:cc:b3:b5",
    "devices/pci0007:00/0007:00:00.0/0007:01:00.0/net/enP7s7/speed": "10000",
    "devices/pci0007:00/0007:00:00.0/0007:01:00.0/net/enP7s7/type": "1",
}


def spark_tree(**changes: dict) -> Tree:
    tree = dict(HOST_NETDEVS)
    for half in spark_halves(**changes):
        tree.update(half.tree())
    return tree


# (a) port 1 cabled and up, RoCE v2 IPv4 GIDs at 3 on both twins, port 0 down.
SPARK_PORT1_UP = spark_tree()
# (b) the GID index of roceP2p1s0f1 drifted to 5 (2 and 3 became holes).
SPARK_GID_DRIFT = spark_tree(roceP2p1s0f1={"gids": drifted_gids("3c:6d:66:cc:b3:b9", "192.168.101.10")})
# (c) enP2p1s0f1np1 back at the ConnectX-7 default MTU 1500 (as after a firmware capsule reboot).
SPARK_MTU_1500 = spark_tree(roceP2p1s0f1={"mtu": 1500})
# (d) no RDMA: the project's lab machine, captured (class/net holds eth0 and lo).
NO_RDMA: Tree = {
    "class/net/lo": HOST_NETDEVS["class/net/lo"],
    **{key: value for key, value in HOST_NETDEVS.items() if key.startswith("devices/virtual/net/lo/")},
    "class/net/eth0": Link("../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0"),
    "devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/mtu": "1400",
    "devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/operstate": "up",
    "devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/address": "02:fc:00:00:00:01",
    "devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/speed": "-1",
    "devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/type": "1",
}
# (e) rocep1s0f1 refuses every gid_attrs/types entry, roceP2p1s0f1 every gid_attrs/ndevs entry.
SPARK_UNREADABLE_GID_ATTRS = spark_tree(rocep1s0f1={"refuse_types": True}, roceP2p1s0f1={"refuse_ndevs": True})


def facts_of(tmp_path: Path, tree: Tree, hca_names: list[str] | None = None) -> dict:
    return fabric_facts(sysfs(tmp_path, tree).read(), hca_names)


def by_name(facts: dict) -> dict[str, dict]:
    return {hca["name"]: hca for hca in facts["hcas"]}


# ------------------------------------------------------------------ the scenarios


def test_spark_with_port_1_up(tmp_path):
    facts = facts_of(tmp_path, SPARK_PORT1_UP)
    assert facts["rdma_present"] is True
    assert facts["hcas"] == [
        {
            "name": "rocep1s0f0",
            "pci_address": "0000:01:00.0",
            "netdev": "enp1s0f0np0",
            "port": 1,
            "state": "DOWN",
            "phys_state": "Disabled",
            "link_layer": "Ethernet",
            "rate_gbps": 100.0,
            "mtu": 1500,
            "operstate": "down",
            "roce_v2_ipv4_gids": [],
            "twin": "roceP2p1s0f0",
            "physical_port": 0,
        },
        {
            "name": "rocep1s0f1",
            "pci_address": "0000:01:00.1",
            "netdev": "enp1s0f1np1",
            "port": 1,
            "state": "ACTIVE",
            "phys_state": "LinkUp",
            "link_layer": "Ethernet",
            "rate_gbps": 200.0,
            "mtu": 9000,
            "operstate": "up",
            "roce_v2_ipv4_gids": [{"index": 3, "address": "192.168.100.10"}],
            "twin": "roceP2p1s0f1",
            "physical_port": 1,
        },
        {
            "name": "roceP2p1s0f0",
            "pci_address": "0002:01:00.0",
            "netdev": "enP2p1s0f0np0",
            "port": 1,
            "state": "DOWN",
            "phys_state": "Disabled",
            "link_layer": "Ethernet",
            "rate_gbps": 100.0,
            "mtu": 1500,
            "operstate": "down",
            "roce_v2_ipv4_gids": [],
            "twin": "rocep1s0f0",
            "physical_port": 0,
        },
        {
            "name": "roceP2p1s0f1",
            "pci_address": "0002:01:00.1",
            "netdev": "enP2p1s0f1np1",
            "port": 1,
            "state": "ACTIVE",
            "phys_state": "LinkUp",
            "link_layer": "Ethernet",
            "rate_gbps": 200.0,
            "mtu": 9000,
            "operstate": "up",
            "roce_v2_ipv4_gids": [{"index": 3, "address": "192.168.101.10"}],
            "twin": "rocep1s0f1",
            "physical_port": 1,
        },
    ]
    assert facts["twins"] == [["rocep1s0f0", "roceP2p1s0f0"], ["rocep1s0f1", "roceP2p1s0f1"]]
    assert facts["netdevs"] == [
        {"name": "enP2p1s0f0np0", "mtu": 1500, "operstate": "down", "address": "3c:6d:66:cc:b3:b8", "speed_mbps": None, "hca": "roceP2p1s0f0"},
        {"name": "enP2p1s0f1np1", "mtu": 9000, "operstate": "up", "address": "3c:6d:66:cc:b3:b9", "speed_mbps": 200000, "hca": "roceP2p1s0f1"},
        {"name": "enP7s7", "mtu": 1500, "operstate": "up", "address": "3c:6d:66:cc:b3:b5", "speed_mbps": 10000, "hca": None},
        {"name": "enp1s0f0np0", "mtu": 1500, "operstate": "down", "address": "3c:6d:66:cc:b3:b6", "speed_mbps": None, "hca": "rocep1s0f0"},
        {"name": "enp1s0f1np1", "mtu": 9000, "operstate": "up", "address": "3c:6d:66:cc:b3:b7", "speed_mbps": 200000, "hca": "rocep1s0f1"},
    ]


def test_gid_index_read_live_after_drift(tmp_path):
    hcas = by_name(facts_of(tmp_path, SPARK_GID_DRIFT))
    assert hcas["rocep1s0f1"]["roce_v2_ipv4_gids"] == [{"index": 3, "address": "192.168.100.10"}]
    # 4 holds the IPv4 GID as RoCE v1 and 1 a RoCE v2 link-local GID: neither is the one NCCL needs.
    assert hcas["roceP2p1s0f1"]["roce_v2_ipv4_gids"] == [{"index": 5, "address": "192.168.101.10"}]


def test_mtu_1500_on_one_twin(tmp_path):
    hcas = by_name(facts_of(tmp_path, SPARK_MTU_1500))
    assert (hcas["rocep1s0f1"]["mtu"], hcas["roceP2p1s0f1"]["mtu"]) == (9000, 1500)


def test_no_rdma_host(tmp_path):
    facts = facts_of(tmp_path, NO_RDMA)
    assert facts == {
        "rdma_present": False,
        "hcas": [],
        "twins": [],
        "netdevs": [{"name": "eth0", "mtu": 1400, "operstate": "up", "address": "02:fc:00:00:00:01", "speed_mbps": None, "hca": None}],
    }


def test_unreadable_gid_attributes(tmp_path):
    hcas = by_name(facts_of(tmp_path, SPARK_UNREADABLE_GID_ATTRS))
    # A GID whose type cannot be read is never taken for RoCE v2.
    assert hcas["rocep1s0f1"]["roce_v2_ipv4_gids"] == []
    assert hcas["rocep1s0f1"]["netdev"] == "enp1s0f1np1"
    # The type is what decides; without ndevs the netdev still comes from the PCI function.
    assert (hcas["roceP2p1s0f1"]["roce_v2_ipv4_gids"], hcas["roceP2p1s0f1"]["netdev"]) == ([{"index": 3, "address": "192.168.101.10"}], "enP2p1s0f1np1")


def test_reader_skips_unused_gids_unread(tmp_path):
    read = sysfs(tmp_path, SPARK_PORT1_UP).read()
    port = next(hca for hca in read.hcas if hca.name == "rocep1s0f1").ports[0]
    assert [gid.index for gid in port.gids] == [0, 1, 2, 3]
    assert port.gids[3] == GidRead(3, "0000:0000:0000:0000:0000:ffff:c0a8:640a", V2, "enp1s0f1np1")
    assert port.gids[0].gid == "fe80:0000:0000:0000:3e6d:66ff:fecc:b3b7"  # the NVIDIA playbook's enp1s0f1np1


def test_filter_limits_hcas_only(tmp_path):
    facts = facts_of(tmp_path, SPARK_PORT1_UP, ["rocep1s0f1"])
    assert [(hca["name"], hca["twin"]) for hca in facts["hcas"]] == [("rocep1s0f1", "roceP2p1s0f1")]
    assert len(facts["twins"]) == 2
    assert len(facts["netdevs"]) == 5


def test_non_directories_in_class_net_are_not_netdevs(tmp_path):
    facts = facts_of(tmp_path, {**NO_RDMA, "class/net/bonding_masters": ""})
    assert [netdev["name"] for netdev in facts["netdevs"]] == ["eth0"]


def test_device_without_pci_function(tmp_path):
    """A software RoCE device (rxe) has no device link; its netdev comes from its GID table."""
    tree = {
        **NO_RDMA,
        "class/infiniband/rxe0": Link("../../devices/virtual/infiniband/rxe0"),
        "devices/virtual/infiniband/rxe0/ports/1/state": "4: ACTIVE",
        "devices/virtual/infiniband/rxe0/ports/1/phys_state": "5: LinkUp",
        "devices/virtual/infiniband/rxe0/ports/1/link_layer": "Ethernet",
        "devices/virtual/infiniband/rxe0/ports/1/rate": EINVAL,
        "devices/virtual/infiniband/rxe0/ports/1/gids/0": v4_gid("10.1.2.3"),
        "devices/virtual/infiniband/rxe0/ports/1/gid_attrs/types/0": V2,
        "devices/virtual/infiniband/rxe0/ports/1/gid_attrs/ndevs/0": "eth0",
    }
    (hca,) = facts_of(tmp_path, tree)["hcas"]
    assert (hca["pci_address"], hca["twin"], hca["physical_port"], hca["rate_gbps"]) == (None, None, None, None)
    assert (hca["netdev"], hca["mtu"], hca["roce_v2_ipv4_gids"]) == ("eth0", 1400, [{"index": 0, "address": "10.1.2.3"}])


def test_hca_without_gid_table_or_netdev(tmp_path):
    tree = {**NO_RDMA, "class/infiniband/mlx5_0/ports/1/state": "1: DOWN"}
    (hca,) = facts_of(tmp_path, tree)["hcas"]
    assert (hca["netdev"], hca["mtu"], hca["operstate"], hca["phys_state"], hca["link_layer"]) == (None, None, None, None, None)


def test_loopback_known_by_name_when_type_is_unreadable(tmp_path):
    tree = {**NO_RDMA, "devices/virtual/net/lo/type": EINVAL}
    assert [netdev["name"] for netdev in facts_of(tmp_path, tree)["netdevs"]] == ["eth0"]


# ------------------------------------------------------------------ reading failures


def test_missing_class_net_is_a_read_error(tmp_path):
    with pytest.raises(FabricReadError, match=r"cannot list .*/class/net: No such file or directory"):
        SysfsReader(str(tmp_path)).read()


def test_unreadable_port_state_is_a_read_error(tmp_path):
    tree = {**SPARK_PORT1_UP, "devices/pci0000:00/0000:00:00.0/0000:01:00.1/infiniband/rocep1s0f1/ports/1/state": EINVAL}
    with pytest.raises(FabricReadError, match=r"cannot read .*/rocep1s0f1/ports/1/state: Invalid argument"):
        sysfs(tmp_path, tree).read()


def test_unlistable_class_infiniband_is_a_read_error(tmp_path):
    with pytest.raises(FabricReadError, match=r"cannot list .*/class/infiniband"):
        sysfs(tmp_path, {**NO_RDMA, "class/infiniband": "not a directory"}).read()


@pytest.mark.parametrize(
    ("path", "text", "message"),
    [
        ("ports/1/state", "ACTIVE", r"mlx5_0 port 1 state 'ACTIVE' is not '<code>: <name>'"),
        ("ports/1/rate", "fast", r"port rate 'fast'"),
    ],
)
def test_unexpected_port_text_is_a_parse_error(tmp_path, path, text, message):
    tree = {**NO_RDMA, "class/infiniband/mlx5_0/ports/1/state": "4: ACTIVE", f"class/infiniband/mlx5_0/{path}": text}
    with pytest.raises(FabricParseError, match=message):
        facts_of(tmp_path, tree)


def test_unexpected_mtu_is_a_parse_error(tmp_path):
    with pytest.raises(FabricParseError, match=r"eth0 mtu 'jumbo' is not a number"):
        facts_of(tmp_path, {**NO_RDMA, "devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/mtu": "jumbo"})


# ------------------------------------------------------------------ the pure functions


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("4: ACTIVE", "ACTIVE"),
        ("1: DOWN", "DOWN"),
        ("5: LinkUp", "LinkUp"),
        ("3: Disabled", "Disabled"),
        ("7: Phy Test", "Phy Test"),
        ("9: <unknown>", "<unknown>"),
    ],
)
def test_parse_numbered(text, name):
    assert parse_numbered(text, "state") == name


@pytest.mark.parametrize(
    ("text", "gbps"),
    [("200 Gb/sec (4X HDR)", 200.0), ("100 Gb/sec (2X HDR)", 100.0), ("2.5 Gb/sec (1X SDR)", 2.5), ("10 Gb/sec (4X)", 10.0), (None, None)],
)
def test_parse_rate(text, gbps):
    assert parse_rate_gbps(text) == gbps


@pytest.mark.parametrize(
    ("text", "parts"),
    [("0000:01:00.1", (0, 1, 0, 1)), ("0002:01:00.0", (2, 1, 0, 0)), ("0000000f:01:00.0", (15, 1, 0, 0)), ("rxe0", None), (None, None), ("0000:01:00.8", None)],
)
def test_parse_pci_address(text, parts):
    address = parse_pci_address(text)
    assert (None if address is None else (address.domain, address.bus, address.device, address.function)) == parts


@pytest.mark.parametrize(
    ("gid", "ipv4", "zero"),
    [
        ("0000:0000:0000:0000:0000:ffff:c0a8:b10b", "192.168.177.11", False),
        ("0000:0000:0000:0000:0000:FFFF:0A00:00D6", "10.0.0.214", False),
        ("fe80:0000:0000:0000:4ebb:47ff:fee8:782b", None, False),
        ("fd00:0000:0000:0000:0000:0000:0000:0001", None, False),
        (ZERO_GID, None, True),
        ("not a gid", None, False),
    ],
)
def test_gid_classification(gid, ipv4, zero):
    assert (gid_ipv4(gid), is_zero_gid(gid)) == (ipv4, zero)


def test_roce_v2_ipv4_gids_are_every_v2_ipv4_entry_by_index():
    gids = [
        GidRead(5, v4_gid("192.168.177.11"), V2, "enp1s0f1np1"),
        GidRead(1, link_local_gid("4c:bb:47:e8:78:2b"), V2, "enp1s0f1np1"),
        GidRead(2, v4_gid("192.168.177.11"), V1, "enp1s0f1np1"),
        GidRead(3, v4_gid("192.168.177.11"), None, None),
        GidRead(4, v4_gid("192.168.177.12"), V2, None),
    ]
    assert roce_v2_ipv4_gids(gids) == [{"index": 4, "address": "192.168.177.12"}, {"index": 5, "address": "192.168.177.11"}]
    assert roce_v2_ipv4_gids(gids[1:4]) == []
    assert roce_v2_ipv4_gids([]) == []


def test_link_local_gid_of_a_real_spark_mac():
    # The NVIDIA playbook prints inet6 fe80::3e6d:66ff:fecc:b3b7 for link/ether 3c:6d:66:cc:b3:b7.
    assert ipaddress.IPv6Address(link_local_gid("3c:6d:66:cc:b3:b7")) == ipaddress.IPv6Address("fe80::3e6d:66ff:fecc:b3b7")


SPARK_PCI = {"rocep1s0f0": "0000:01:00.0", "rocep1s0f1": "0000:01:00.1", "roceP2p1s0f0": "0002:01:00.0", "roceP2p1s0f1": "0002:01:00.1"}


def test_twins_of_a_spark():
    twins = find_twins(SPARK_PCI)
    assert twins == {"rocep1s0f0": "roceP2p1s0f0", "roceP2p1s0f0": "rocep1s0f0", "rocep1s0f1": "roceP2p1s0f1", "roceP2p1s0f1": "rocep1s0f1"}
    assert twin_pairs(twins, SPARK_PCI) == [["rocep1s0f0", "roceP2p1s0f0"], ["rocep1s0f1", "roceP2p1s0f1"]]


@pytest.mark.parametrize(
    "addresses",
    [
        {"mlx5_0": "0000:01:00.0", "mlx5_1": "0000:01:00.1"},  # a dual-port card in one domain: ports, not twins
        {"a": "0000:01:00.1", "b": "0000:01:00.1"},  # same domain
        {"a": "0000:01:00.1", "b": "0002:01:00.1", "c": "0004:01:00.1"},  # three halves: ambiguous
        {"a": "0000:01:00.1", "rxe0": None},
    ],
)
def test_no_twins_unless_exactly_two_domains_share_a_function(addresses):
    assert find_twins(addresses) == {}


def test_twin_pairs_skip_a_twin_without_address():
    assert twin_pairs({"a": "b", "b": "a"}, {"a": "0000:01:00.1", "b": None}) == []


def test_facts_from_read_records_without_sysfs():
    port = PortRead(1, "4: ACTIVE", "5: LinkUp", "Ethernet", "200 Gb/sec (4X HDR)", (GidRead(3, v4_gid("192.168.177.11"), V2, "enp1s0f1np1"),))
    read = SysfsRead(
        hcas=(HcaRead("rocep1s0f1", "0000:01:00.1", ("enp1s0f1np1",), (port,)),),
        netdevs=(NetdevRead("enp1s0f1np1", "9000", "up", "4c:bb:47:e8:78:2b", "200000", "1"),),
    )
    (hca,) = fabric_facts(read)["hcas"]
    assert (hca["netdev"], hca["mtu"], hca["roce_v2_ipv4_gids"], hca["twin"]) == ("enp1s0f1np1", 9000, [{"index": 3, "address": "192.168.177.11"}], None)
