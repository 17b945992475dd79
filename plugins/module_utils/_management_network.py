# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""The interfaces that carry a node's management network, from what iproute2 answers in JSON: the default routes' (`ip
-j -4|-6 route show default`: "dev", or a multipath route's "nexthops"), and the one holding the address Ansible reaches
the node at (`ip -j -4 addr show to ADDRESS/32`: "ifname"). The fabric netplan must name none of them. No I/O here."""

from __future__ import annotations

import json
from collections.abc import Iterable


class ManagementReadError(ValueError):
    """An answer that is not iproute2's JSON list (named in the message)."""


def _entries(answer: str) -> list[dict]:
    try:
        entries = json.loads(answer) if answer.strip() else []
    except json.JSONDecodeError as exc:
        raise ManagementReadError(f"ip -j answered what is no JSON: {exc}") from exc
    if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
        raise ManagementReadError(f"ip -j answered {type(entries).__name__}, not a list of routes or interfaces")
    return entries


def management_interfaces(answers: Iterable[str]) -> list[str]:
    """Each interface a default route leaves by or the reached address is on, once, in the order found."""
    found: list[str] = []
    for entry in (entry for answer in answers for entry in _entries(answer)):
        hops = entry.get("nexthops")
        hop_devices = [hop.get("dev") for hop in hops if isinstance(hop, dict)] if isinstance(hops, list) else []
        for name in [entry.get("dev"), entry.get("ifname"), *hop_devices]:
            if isinstance(name, str) and name not in found:
                found.append(name)
    return found


def management_clash(answers: Iterable[str], fabric_interfaces: Iterable[str]) -> list[str]:
    """The fabric interfaces that carry the management network, in the fabric's order ([] when none does)."""
    management = management_interfaces(answers)
    return [interface for interface in fabric_interfaces if interface in management]
