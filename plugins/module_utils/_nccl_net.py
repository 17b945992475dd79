# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""What NCCL's NCCL_DEBUG=INFO lines say about the network between nodes, and the transport it used.

Pure: fed one line at a time by the parsers of nccl-tests output and of vLLM's log, which both carry
NCCL's own lines ("host:pid:tid [0] NCCL INFO NET/IB : Using [0]rocep1s0f1:1/RoCE [RO]; OOB ...").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

CAPPED = 20

_IB_USING = re.compile(r"NET/IB\s*:\s*Using\s+(?P<rest>.*)$")
_IB_PORT = re.compile(r"\[\d+\](?P<device>[^\s:\[\]]+):(?P<port>\d+)/(?P<link>\w+)")
_OOB = re.compile(r"\bOOB\s+(?P<interface>[^\s:]+):(?P<address>[^\s<]+)")
_SOCKET_USING = re.compile(r"NET/Socket\s*:\s*Using\s+(?P<rest>\[.*)$")
_SOCKET_IFACE = re.compile(r"\[\d+\](?P<interface>[^\s:\[\]]+):(?P<address>[^\s<]+)")
_IB_NO_DEVICE = re.compile(r"NET/IB\s*:\s*No device found")
_NETWORK = re.compile(r"\bUsing network (?P<network>.+?)\s*$")
_VIA_NET = re.compile(r"\bvia (?P<transport>NET/[^/\n]+?)/\d")
_VIA_OTHER = re.compile(r"\bvia (?P<transport>[A-Za-z0-9]+)")


def append_unique(items: list, item: object, cap: int = CAPPED) -> None:
    if item not in items and len(items) < cap:
        items.append(item)


@dataclass
class NcclNet:
    """The network facts of the NCCL lines read so far."""

    networks: list[str] = field(default_factory=list)
    hcas: list[dict] = field(default_factory=list)
    oob: list[dict] = field(default_factory=list)
    sockets: list[dict] = field(default_factory=list)
    net_channels: list[str] = field(default_factory=list)
    other_channels: list[str] = field(default_factory=list)
    ib_no_device: bool = False

    def read(self, line: str) -> None:
        """Read one line NCCL printed: the HCAs or sockets it selected, the network, the channels' transports."""
        match = _IB_USING.search(line)
        if match:
            for port in _IB_PORT.finditer(match.group("rest")):
                append_unique(self.hcas, {"device": port.group("device"), "port": int(port.group("port")), "link_layer": port.group("link")})
            for iface in _OOB.finditer(match.group("rest")):
                append_unique(self.oob, {"interface": iface.group("interface"), "address": iface.group("address")})
        match = _SOCKET_USING.search(line)
        if match:
            for iface in _SOCKET_IFACE.finditer(match.group("rest")):
                append_unique(self.sockets, {"interface": iface.group("interface"), "address": iface.group("address")})
        if _IB_NO_DEVICE.search(line):
            self.ib_no_device = True
        match = _NETWORK.search(line)
        if match:
            append_unique(self.networks, match.group("network"))
        match = _VIA_NET.search(line)
        if match:
            append_unique(self.net_channels, match.group("transport"))
        elif " via " in line:
            match = _VIA_OTHER.search(line)
            if match:
                append_unique(self.other_channels, match.group("transport"))

    def channel_transport(self) -> str | None:
        """The transport of the first channel that crossed a node ("via NET/IB/0"); None before one did.

        NCCL names a network ("Using network Socket") on one node too, where no data crosses it.
        """
        return self.net_channels[0] if self.net_channels else None

    def transport(self) -> str | None:
        """The transport NCCL used between nodes: channel lines first, then what it said it selected."""
        if self.net_channels:
            return self.channel_transport()
        if self.other_channels:
            # Channels were printed and none crossed a node: the run was intra-node only.
            return None
        if self.networks:
            return f"NET/{self.networks[0]}"
        if self.hcas:
            return "NET/IB"
        if self.sockets:
            return "NET/Socket"
        return None
