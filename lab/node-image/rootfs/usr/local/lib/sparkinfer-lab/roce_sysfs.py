"""Lab stand-in for a DGX Spark's RoCE sysfs: class/infiniband and class/net under one root.

A lab node has no RDMA device (the lab machine's kernel has no mlx5 nor rxe), so this keeps a
Spark-shaped tree (default /run/sparkinfer-lab/sysfs) that nccl_network reads through its
nccl_network_sysfs_root inventory value. Names, PCI addresses, file formats and the GID table's
order are those of a real Spark, with their sources in
tests/unit/plugins/module_utils/fixtures/fabric/SOURCES.md.

The tree follows the node's own stand-in twins (sparkinfer-cx7-standin) at each link or address
event (`ip monitor`, so it costs nothing while the network is quiet), as the kernel's tables
follow the netdevs: a twin whose link is up is ACTIVE/LinkUp and has an IB/RoCE
v1 and a RoCE v2 GID first for the port's default GID (fe80:: with the EUI-64 of the netdev's MAC,
whether or not the netdev holds an IPv6 link-local address: the kernel's make_default_gid in
drivers/infiniband/core/roce_gid_mgmt.c), then for each IPv4 address (IPv4-mapped); a twin that is
down is DOWN/Disabled with no GID. The halves of port 0
are not cabled on a Spark of a pair: DOWN, no GID. class/net links every real netdev of the node.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import subprocess
import sys

# (HCA, netdev, PCI parent directory, PCI address): the four halves of a Spark's ConnectX-7.
HALVES = (
    ("rocep1s0f0", "enp1s0f0np0", "pci0000:00/0000:00:00.0", "0000:01:00.0"),
    ("rocep1s0f1", "enp1s0f1np1", "pci0000:00/0000:00:00.0", "0000:01:00.1"),
    ("roceP2p1s0f0", "enP2p1s0f0np0", "pci0002:00/0002:00:00.0", "0002:01:00.0"),
    ("roceP2p1s0f1", "enP2p1s0f1np1", "pci0002:00/0002:00:00.0", "0002:01:00.1"),
)
GID_TABLE_SIZE = 16
ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"
RATE = "200 Gb/sec (4X HDR)"


def write(path: str, text: str) -> None:
    """Write a file whole or not at all, and only when it changes, as a reader may look at any time."""
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                return
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".new", "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(path + ".new", path)


def remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def symlink(target: str, path: str) -> None:
    if os.path.islink(path) and os.readlink(path) == target:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    remove(path)
    os.symlink(target, path)


def gid_text(address: str) -> str:
    """The kernel's %pI6 form of a GID: eight groups of four hex digits; IPv4 as ::ffff:a.b.c.d."""
    parsed = ipaddress.ip_address(address)
    if parsed.version == 4:
        parsed = ipaddress.IPv6Address(f"::ffff:{address}")
    return ":".join(parsed.exploded.split(":"))


def links() -> dict[str, dict]:
    answer = subprocess.run(["ip", "-j", "addr", "show"], capture_output=True, text=True, timeout=10, check=True)
    return {link["ifname"]: link for link in json.loads(answer.stdout)}


def default_gid_address(mac: str) -> str:
    """fe80:: with the modified EUI-64 interface identifier of a MAC address."""
    octets = [int(part, 16) for part in mac.split(":")]
    identifier = [octets[0] ^ 0x02, *octets[1:3], 0xFF, 0xFE, *octets[3:6]]
    return str(ipaddress.IPv6Address(bytes([0xFE, 0x80, 0, 0, 0, 0, 0, 0, *identifier])))


def gid_entries(link: dict | None) -> list[tuple[str, str]]:
    """(GID, type) pairs in the order a real Spark's table shows them: default GID, then IPv4, v1 before v2."""
    if link is None or link.get("operstate") != "UP":
        return []
    ipv4 = [info["local"] for info in link.get("addr_info", []) if info["family"] == "inet"]
    addresses = [default_gid_address(link["address"]), *ipv4]
    return [(gid_text(address), kind) for address in addresses for kind in ("IB/RoCE v1", "RoCE v2")]


def render_half(root: str, half: tuple[str, str, str, str], link: dict | None) -> None:
    hca, netdev, parent, pci = half
    device = os.path.join(root, "devices", parent, pci)
    os.makedirs(os.path.join(device, "net", netdev), exist_ok=True)
    base = os.path.join(root, "class", "infiniband", hca)
    symlink(os.path.relpath(device, base), os.path.join(base, "device"))
    port = os.path.join(base, "ports", "1")
    entries = gid_entries(link)
    write(os.path.join(port, "state"), "4: ACTIVE\n" if entries else "1: DOWN\n")
    write(os.path.join(port, "phys_state"), "5: LinkUp\n" if entries else "3: Disabled\n")
    write(os.path.join(port, "link_layer"), "Ethernet\n")
    write(os.path.join(port, "rate"), RATE + "\n")
    for index in range(GID_TABLE_SIZE):
        gid, kind = entries[index] if index < len(entries) else (ZERO_GID, None)
        write(os.path.join(port, "gids", str(index)), gid + "\n")
        # An unused entry's type and ndev cannot be read on a real host (EINVAL): here they are absent.
        for attribute, value in (("types", kind), ("ndevs", netdev if kind else None)):
            path = os.path.join(port, "gid_attrs", attribute, str(index))
            if value is None:
                remove(path)
            else:
                write(path, value + "\n")


def render_net(root: str, names: list[str]) -> None:
    net = os.path.join(root, "class", "net")
    os.makedirs(net, exist_ok=True)
    for name in names:
        symlink(os.path.join("/sys/class/net", name), os.path.join(net, name))
    for stale in set(os.listdir(net)) - set(names):
        remove(os.path.join(net, stale))


def render(root: str) -> None:
    current = links()
    render_net(root, sorted(current))
    for half in HALVES:
        render_half(root, half, current.get(half[1]))


def main() -> int:
    root = sys.argv[1] if len(sys.argv) > 1 else "/run/sparkinfer-lab/sysfs"
    if "--once" in sys.argv[2:]:
        render(root)
        return 0
    # Listening before the first render: no event falls between the two.
    with subprocess.Popen(["ip", "-o", "monitor", "link", "address"], stdout=subprocess.PIPE, text=True) as monitor:
        render(root)
        for _event in monitor.stdout or ():
            render(root)
    return 1


if __name__ == "__main__":
    sys.exit(main())
