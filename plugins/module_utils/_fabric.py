# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""The RDMA fabric of a host from sysfs: RoCE HCAs, their netdevs, port state, GIDs, twins.

SysfsReader is the only code here that does I/O: it walks a sysfs tree and keeps the text of the
files it read, untouched. The functions below it turn that text into facts and never touch a file.

Formats (kernel drivers/infiniband/core/sysfs.c, Documentation/ABI/stable/sysfs-class-infiniband):
ports/N/state reads "4: ACTIVE", phys_state "5: LinkUp", rate "200 Gb/sec (4X HDR)" (older
kernels "2.5 Gb/sec (1X)"), link_layer "Ethernet"; gids/I is a full-width IPv6 text
"0000:0000:0000:0000:0000:ffff:c0a8:640a", all zeros for an unused entry, whose
gid_attrs/types/I and gid_attrs/ndevs/I then fail to read with EINVAL; gid_attrs/types/I reads
"RoCE v2" or "IB/RoCE v1".
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass
from typing import Callable

ROCE_V2 = "RoCE v2"
ARPHRD_LOOPBACK = "772"
# Where a cluster of one node keeps NCCL, Gloo, vLLM's ranks and Ray: it has no peer to reach.
LOOPBACK_INTERFACE = "lo"
LOOPBACK_ADDRESS = "127.0.0.1"

_NUMBERED = re.compile(r"^(?P<code>\d+):\s*(?P<name>\S.*)$")
_RATE = re.compile(r"^(?P<gbps>\d+(?:\.\d+)?) Gb/sec\b")
_PCI_ADDRESS = re.compile(r"^(?P<domain>[0-9a-fA-F]{4,8}):(?P<bus>[0-9a-fA-F]{2}):(?P<device>[0-9a-fA-F]{2})\.(?P<function>[0-7])$")
_GID = re.compile(r"^[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4}){7}$")


class FabricParseError(ValueError):
    """Raised when a sysfs file does not have the shape the kernel gives it."""


class FabricReadError(FabricParseError):
    """Raised when a sysfs file or directory that must be readable is not."""


@dataclass(frozen=True)
class GidRead:
    """One used (non-zero) entry of a port's GID table; type and ndev are None when unreadable."""

    index: int
    gid: str
    gid_type: str | None
    ndev: str | None


@dataclass(frozen=True)
class PortRead:
    number: int
    state: str
    phys_state: str | None
    link_layer: str | None
    rate: str | None
    gids: tuple[GidRead, ...]


@dataclass(frozen=True)
class HcaRead:
    name: str
    pci_address: str | None
    netdevs: tuple[str, ...]
    ports: tuple[PortRead, ...]


@dataclass(frozen=True)
class NetdevRead:
    name: str
    mtu: str | None
    operstate: str | None
    address: str | None
    speed: str | None
    type: str | None


@dataclass(frozen=True)
class SysfsRead:
    hcas: tuple[HcaRead, ...]
    netdevs: tuple[NetdevRead, ...]


@dataclass(frozen=True)
class PciAddress:
    domain: int
    bus: int
    device: int
    function: int


def read_attribute(path: str) -> str:
    """The text of one sysfs attribute without its trailing newline; OSError as the kernel refuses it."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read().strip()


class SysfsReader:
    """Walk class/infiniband and class/net under sysfs_root; keep the raw text of what was read."""

    def __init__(self, sysfs_root: str, read: Callable[[str], str] | None = None) -> None:
        self.root = sysfs_root
        self._read = read if read is not None else read_attribute

    def _optional(self, path: str) -> str | None:
        try:
            return self._read(path)
        except OSError:
            return None

    def _required(self, path: str) -> str:
        try:
            return self._read(path)
        except OSError as exc:
            raise FabricReadError(f"cannot read {path}: {exc.strerror or exc}") from exc

    @staticmethod
    def _listdir(path: str) -> list[str]:
        try:
            return sorted(os.listdir(path))
        except OSError as exc:
            raise FabricReadError(f"cannot list {path}: {exc.strerror or exc}") from exc

    def read(self) -> SysfsRead:
        net_dir = os.path.join(self.root, "class", "net")
        names = [name for name in self._listdir(net_dir) if os.path.isdir(os.path.join(net_dir, name))]
        netdevs = tuple(self._netdev(net_dir, name) for name in names)
        ib_dir = os.path.join(self.root, "class", "infiniband")
        hcas: tuple[HcaRead, ...] = ()
        if os.path.lexists(ib_dir):
            hcas = tuple(self._hca(os.path.join(ib_dir, name), name) for name in self._listdir(ib_dir))
        return SysfsRead(hcas=hcas, netdevs=netdevs)

    def _netdev(self, net_dir: str, name: str) -> NetdevRead:
        base = os.path.join(net_dir, name)
        return NetdevRead(
            name=name,
            mtu=self._optional(os.path.join(base, "mtu")),
            operstate=self._optional(os.path.join(base, "operstate")),
            address=self._optional(os.path.join(base, "address")),
            speed=self._optional(os.path.join(base, "speed")),
            type=self._optional(os.path.join(base, "type")),
        )

    def _hca(self, base: str, name: str) -> HcaRead:
        device = os.path.join(base, "device")
        # class/infiniband/<hca>/device links to the PCI function; a software device (rxe) has none.
        pci_address = os.path.basename(os.path.realpath(device)) if os.path.lexists(device) else None
        net = os.path.join(device, "net")
        netdevs = tuple(self._listdir(net)) if os.path.isdir(net) else ()
        ports_dir = os.path.join(base, "ports")
        numbers = sorted(int(entry) for entry in self._listdir(ports_dir) if entry.isdigit())
        return HcaRead(name=name, pci_address=pci_address, netdevs=netdevs, ports=tuple(self._port(ports_dir, n) for n in numbers))

    def _port(self, ports_dir: str, number: int) -> PortRead:
        base = os.path.join(ports_dir, str(number))
        return PortRead(
            number=number,
            state=self._required(os.path.join(base, "state")),
            phys_state=self._optional(os.path.join(base, "phys_state")),
            link_layer=self._optional(os.path.join(base, "link_layer")),
            rate=self._optional(os.path.join(base, "rate")),
            gids=self._gids(base),
        )

    def _gids(self, port_dir: str) -> tuple[GidRead, ...]:
        gids_dir = os.path.join(port_dir, "gids")
        if not os.path.isdir(gids_dir):
            return ()
        entries = []
        for index in sorted(int(entry) for entry in self._listdir(gids_dir) if entry.isdigit()):
            gid = self._optional(os.path.join(gids_dir, str(index)))
            # An unused entry reads all zeros and its attributes fail with EINVAL: skip it unread.
            if gid is None or is_zero_gid(gid):
                continue
            entries.append(
                GidRead(
                    index=index,
                    gid=gid,
                    gid_type=self._optional(os.path.join(port_dir, "gid_attrs", "types", str(index))),
                    ndev=self._optional(os.path.join(port_dir, "gid_attrs", "ndevs", str(index))),
                )
            )
        return tuple(entries)


# ---------------------------------------------------------------- pure: text -> facts


def parse_numbered(text: str, what: str) -> str:
    """'4: ACTIVE' -> 'ACTIVE', '5: LinkUp' -> 'LinkUp' (the kernel prints the code, then the name)."""
    match = _NUMBERED.match(text.strip())
    if match is None:
        raise FabricParseError(f"{what} {text!r} is not '<code>: <name>'")
    return match.group("name")


def parse_rate_gbps(text: str | None) -> float | None:
    """'200 Gb/sec (4X HDR)' -> 200.0; None stays None (the kernel refuses rate for an invalid width)."""
    if text is None:
        return None
    match = _RATE.match(text.strip())
    if match is None:
        raise FabricParseError(f"port rate {text!r} is not '<number> Gb/sec (...)'")
    return float(match.group("gbps"))


def parse_pci_address(text: str | None) -> PciAddress | None:
    """'0002:01:00.1' -> PciAddress(2, 1, 0, 1); None for anything that is not a PCI function address."""
    match = _PCI_ADDRESS.match(text or "")
    if match is None:
        return None
    return PciAddress(*(int(match.group(part), 16) for part in ("domain", "bus", "device", "function")))


def _gid_address(gid: str) -> ipaddress.IPv6Address | None:
    if not _GID.match(gid.strip()):
        return None
    return ipaddress.IPv6Address(gid.strip())


def is_zero_gid(gid: str) -> bool:
    address = _gid_address(gid)
    return address is not None and int(address) == 0


def gid_ipv4(gid: str) -> str | None:
    """The IPv4 address of an IPv4-mapped GID (::ffff:a.b.c.d), else None (fe80 link-local, IPv6, zero)."""
    address = _gid_address(gid)
    mapped = address.ipv4_mapped if address is not None else None
    return str(mapped) if mapped is not None else None


def roce_v2_ipv4_gids(gids: tuple[GidRead, ...] | list[GidRead]) -> list[dict]:
    """Every entry of type RoCE v2 holding an IPv4-mapped GID, as {index, address}, by index: NCCL's candidates.

    An address has its own entry, and indices drift as addresses come and go: a reader picks by address.
    """
    return [
        {"index": entry.index, "address": gid_ipv4(entry.gid)}
        for entry in sorted(gids, key=lambda gid: gid.index)
        if entry.gid_type == ROCE_V2 and gid_ipv4(entry.gid) is not None
    ]


def find_twins(pci_addresses: dict[str, str | None]) -> dict[str, str]:
    """Pair the HCAs that are the two PCIe halves of one physical port: {hca: its twin}.

    A DGX Spark's ConnectX-7 shows each QSFP port as two PCIe Gen5 x4 functions with the same
    bus:device.function in two PCI domains (0000:01:00.1 and 0002:01:00.1 are port 1). Exactly two
    HCAs with equal bus:device.function and different domains are twins; a group of any other size
    is left unpaired rather than guessed.
    """
    groups: dict[tuple[int, int, int], list[tuple[int, str]]] = {}
    for name, text in pci_addresses.items():
        address = parse_pci_address(text)
        if address is not None:
            groups.setdefault((address.bus, address.device, address.function), []).append((address.domain, name))
    twins = {}
    for members in groups.values():
        if len(members) == 2 and members[0][0] != members[1][0]:
            first, second = members[0][1], members[1][1]
            twins[first], twins[second] = second, first
    return twins


def twin_pairs(twins: dict[str, str], pci_addresses: dict[str, str | None]) -> list[list[str]]:
    """Each pair of find_twins once, [lower PCI domain, higher], in physical port (PCI function) order."""
    order = {}
    for name in twins:
        address = parse_pci_address(pci_addresses[name])
        if address is not None:
            order[name] = (address.bus, address.device, address.function, address.domain)
    pairs = [[first, second] for first, second in twins.items() if first in order and second in order and order[first] < order[second]]
    return sorted(pairs, key=lambda pair: order[pair[0]])


def _int(text: str | None, what: str) -> int | None:
    if text is None:
        return None
    try:
        return int(text.strip())
    except ValueError as exc:
        raise FabricParseError(f"{what} {text!r} is not a number") from exc


def _netdev_of(hca: HcaRead, port: PortRead) -> str | None:
    """The netdev of an HCA port: the PCI function's netdev that its GIDs name, else its only or first one."""
    for entry in port.gids:
        if entry.ndev in hca.netdevs:
            return entry.ndev
    if hca.netdevs:
        return hca.netdevs[0]
    return next((entry.ndev for entry in port.gids if entry.ndev), None)


def _pci_sort_key(hca: HcaRead) -> tuple:
    address = parse_pci_address(hca.pci_address)
    if address is None:
        return (1, 0, 0, 0, 0, hca.name)
    return (0, address.domain, address.bus, address.device, address.function, hca.name)


def hca_facts(hca: HcaRead, port: PortRead, netdevs: dict[str, NetdevRead], twins: dict[str, str]) -> dict:
    netdev_name = _netdev_of(hca, port)
    netdev = netdevs.get(netdev_name) if netdev_name else None
    address = parse_pci_address(hca.pci_address)
    return {
        "name": hca.name,
        "pci_address": hca.pci_address if address is not None else None,
        "netdev": netdev_name,
        "port": port.number,
        "state": parse_numbered(port.state, f"{hca.name} port {port.number} state"),
        "phys_state": parse_numbered(port.phys_state, f"{hca.name} port {port.number} phys_state") if port.phys_state is not None else None,
        "link_layer": port.link_layer,
        "rate_gbps": parse_rate_gbps(port.rate),
        "mtu": _int(netdev.mtu, f"{netdev.name} mtu") if netdev is not None else None,
        "operstate": netdev.operstate if netdev is not None else None,
        "roce_v2_ipv4_gids": roce_v2_ipv4_gids(port.gids),
        "twin": twins.get(hca.name),
        "physical_port": address.function if address is not None else None,
    }


def netdev_facts(netdev: NetdevRead, hca: str | None) -> dict:
    speed = _int(netdev.speed, f"{netdev.name} speed")
    return {
        "name": netdev.name,
        "mtu": _int(netdev.mtu, f"{netdev.name} mtu"),
        "operstate": netdev.operstate,
        "address": netdev.address,
        # The kernel prints -1 for an unknown speed (no carrier) and refuses it on a device that is down.
        "speed_mbps": speed if speed is not None and speed >= 0 else None,
        "hca": hca,
    }


def is_loopback(netdev: NetdevRead) -> bool:
    return netdev.type == ARPHRD_LOOPBACK or (netdev.type is None and netdev.name == "lo")


def fabric_facts(read: SysfsRead, hca_names: list[str] | None = None) -> dict:
    """The sparkinfer_fabric facts; hca_names limits the hcas list, not twins or netdevs."""
    twins = find_twins({hca.name: hca.pci_address for hca in read.hcas})
    netdevs = {netdev.name: netdev for netdev in read.netdevs}
    hcas: list[dict] = []
    for hca in sorted(read.hcas, key=_pci_sort_key):
        if hca_names is not None and hca.name not in hca_names:
            continue
        hcas.extend(hca_facts(hca, port, netdevs, twins) for port in hca.ports)
    hca_of_netdev: dict[str, str] = {}
    for hca in read.hcas:
        for name in hca.netdevs:
            hca_of_netdev.setdefault(name, hca.name)
    return {
        "rdma_present": bool(read.hcas),
        "hcas": hcas,
        "twins": twin_pairs(twins, {hca.name: hca.pci_address for hca in read.hcas}),
        "netdevs": [netdev_facts(netdev, hca_of_netdev.get(netdev.name)) for netdev in sorted(read.netdevs, key=lambda nd: nd.name) if not is_loopback(netdev)],
    }


def port_halves(hcas: list[dict], port: int) -> list[dict]:
    """fabric_facts' HCAs of one ConnectX-7 port: its two halves (one per PCIe link) on a Spark."""
    return [hca for hca in hcas if hca.get("physical_port") == port]


def port_up(hcas: list[dict], port: int) -> bool:
    """Whether the port has halves in sysfs and every one of them is ACTIVE."""
    halves = port_halves(hcas, port)
    return bool(halves) and all(hca.get("state") == "ACTIVE" for hca in halves)


def port_condition(hcas: list[dict], port: int) -> str:
    """In words, how fabric_facts' HCAs show a ConnectX-7 port, and which ports are up where it is not."""
    halves = port_halves(hcas, port)
    if not halves:
        return f"ConnectX-7 port {port} has no RoCE HCA in sysfs ({len(hcas)} HCA port(s) listed)"
    states = ", ".join(
        f"{hca['name']} ({hca.get('netdev')}) {hca.get('state')}" + (f" ({hca['phys_state']})" if hca.get("phys_state") else "") for hca in halves
    )
    said = f"ConnectX-7 port {port}: {states}"
    if port_up(hcas, port):
        return said
    cabled = up_ports(hcas)
    others = [number for number in cabled if number != port]
    if others:
        return said + f"; port {', '.join(map(str, others))} is up"
    return said if cabled else said + "; no port is up"


def up_ports(hcas: list[dict]) -> list[int]:
    """The ConnectX-7 ports whose halves fabric_facts shows ACTIVE: where a cable is."""
    return sorted({hca["physical_port"] for hca in hcas if hca.get("state") == "ACTIVE" and hca.get("physical_port") is not None})


def cabled_port_problem(node: str, hcas_by_node: dict[str, list[dict]], port: int) -> str:
    """Why the fabric port is not up on this node, and which port is cabled on which node instead; '' when both halves
    of the port are ACTIVE. hcas_by_node holds fabric_facts' HCAs of every node of the cluster, this one among them."""
    if port_up(hcas_by_node[node], port):
        return ""
    said = f"{node}: {port_condition(hcas_by_node[node], port)}."
    cabled = {name: up_ports(hcas) for name, hcas in hcas_by_node.items()}
    here = [number for number in cabled[node] if number != port]
    if not here:
        return (
            f"{said} Check that the cable sits in port {port} (nccl_network_fabric_port) on every node, the same port on "
            "both ends, and that the peer is powered on."
        )
    where = ", ".join(f"port {', '.join(map(str, ports)) or 'none'} on {name}" for name, ports in cabled.items())
    if all(cabled[name] == cabled[node] for name in cabled):
        return f"{said} The cable is in port {here[0]} on every node ({where}): set nccl_network_fabric_port: {here[0]}."
    return (
        f"{said} The cabled ports differ between the nodes ({where}): put the cable in the same port on every node, port "
        f"{port} (nccl_network_fabric_port), or set nccl_network_fabric_port to the one they share."
    )
