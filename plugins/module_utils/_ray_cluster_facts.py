# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""One view of a Ray cluster from its ``ray status`` report and ``ray list nodes``, and the checks on it:
the expected nodes that are not ALIVE (named when the state API gives IPs, counted always) and the
ALIVE nodes short of a required resource."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_nodes import ListedNode
from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_status import StatusReport


@dataclass(frozen=True)
class NodeCheck:
    """What ``check_nodes`` found: the expected nodes not ALIVE (named when IPs are known,
    counted always) and the ALIVE nodes short of a required resource."""

    missing: list
    missing_count: int
    ips_known: bool
    lacking: list


def _usage_dict(usage: dict) -> dict:
    return {name: asdict(value) for name, value in sorted(usage.items())}


def cluster_facts(status: StatusReport | None = None, nodes: list[ListedNode] | None = None, nodes_error: str | None = None) -> dict:
    """One view of the cluster from the report and (when the state API answered) the node list.

    Nodes are keyed by node id: the state API gives IP, state and head; the verbose report each
    node's usage; ``node_<id>`` node types of clusters started by hand add nodes that neither of
    them listed (as ALIVE, IP unknown).
    """
    entries: list[dict] = []
    by_id: dict[str, dict] = {}

    def add(node_id: str | None, **values: Any) -> dict:
        entry: dict[str, Any] = {
            "node_id": node_id,
            "ip": None,
            "state": "ALIVE",
            "state_message": None,
            "is_head": None,
            "node_type": None,
            "resources": {},
            "usage": {},
            "idle_ms": None,
            "activity": [],
        }
        entry.update(values)
        entries.append(entry)
        if node_id:
            by_id[node_id] = entry
        return entry

    for node in nodes or []:
        add(
            node.node_id,
            ip=node.ip,
            state=node.state,
            state_message=node.state_message,
            is_head=node.is_head,
            resources=dict(node.resources),
        )
    group_count = 0
    if status is not None and status.available:
        for report in status.node_reports:
            entry = by_id.get(report.node_id or "")
            if entry is None and report.ip:
                entry = next((candidate for candidate in entries if candidate["ip"] == report.ip and candidate["state"] == "ALIVE"), None)
            if entry is None:
                entry = add(report.node_id, ip=report.ip)
            entry["node_type"] = report.node_type
            entry["usage"] = _usage_dict(report.usage)
            entry["idle_ms"] = report.idle_ms
            entry["activity"] = list(report.activity)
            if not entry["resources"]:
                entry["resources"] = {name: usage.total for name, usage in sorted(report.usage.items())}
        for group in [*status.active, *status.idle]:
            group_count += group.count
            if group.node_id is None:
                continue
            entry = by_id.get(group.node_id)
            if entry is None:
                entry = add(group.node_id)
            if entry["node_type"] is None:
                entry["node_type"] = group.node_type
    alive = [entry for entry in entries if entry["state"] == "ALIVE"]
    alive_count = len(alive) if nodes is not None else max(len(alive), group_count)
    alive_ips = sorted({entry["ip"] for entry in alive if entry["ip"]})
    if status is not None and status.usage:
        usage = _usage_dict(status.usage)
    else:
        totals: dict[str, float] = {}
        for entry in alive:
            for name, amount in entry["resources"].items():
                totals[name] = totals.get(name, 0) + amount
        usage = {
            name: {"used": None, "total": amount, "placement_group_used": None, "placement_group_reserved": None} for name, amount in sorted(totals.items())
        }
    return {
        "available": status.available if status is not None else nodes is not None,
        "message": status.message if status is not None else None,
        "timestamp": status.timestamp if status is not None else None,
        "node_count": alive_count,
        "alive_ips": alive_ips,
        "node_ips_known": alive_count == sum(1 for entry in alive if entry["ip"]),
        "head_ip": next((entry["ip"] for entry in alive if entry["is_head"]), None),
        "dead_nodes": sum(1 for entry in entries if entry["state"] == "DEAD"),
        "nodes": entries,
        "node_groups": {
            "active": [asdict(group) for group in status.active] if status is not None else [],
            "idle": [asdict(group) for group in status.idle] if status is not None else [],
        },
        "totals": {name: value["total"] for name, value in usage.items()},
        "usage": usage,
        "pending_nodes": [asdict(node) for node in status.pending_nodes] if status is not None else [],
        "pending_launches": [asdict(launch) for launch in status.pending_launches] if status is not None else [],
        "failures": [asdict(failure) for failure in status.failures] if status is not None else [],
        "demands": [asdict(demand) for demand in status.demands] if status is not None else [],
        "placement_group_demands": [asdict(demand) for demand in status.placement_group_demands] if status is not None else [],
        "resource_requests": [asdict(request) for request in status.resource_requests] if status is not None else [],
        "state_api": nodes is not None,
        "state_api_error": nodes_error,
    }


def missing_nodes(expected_ips: list[str], facts: dict) -> list[str]:
    """The expected IPs no ALIVE node has, in their given order.

    Empty when the ALIVE nodes' IPs are not all known (no state API): ``check_nodes`` then
    counts the missing nodes instead.
    """
    if not facts["node_ips_known"]:
        return []
    alive = set(facts["alive_ips"])
    return [ip for ip in expected_ips if ip not in alive]


def lacking_resources(facts: dict, required: dict, expected_ips: list[str] | None = None) -> list[dict]:
    """ALIVE nodes (those at ``expected_ips`` when given and known) with less than ``required``
    of a resource (``{"GPU": 1}``; memory resources in bytes). Where no node's own resources are
    known, the cluster's totals are checked against ``required`` times the number of nodes."""
    alive = [node for node in facts["nodes"] if node["state"] == "ALIVE"]
    if expected_ips and facts["node_ips_known"]:
        alive = [node for node in alive if node["ip"] in expected_ips]
    known = [node for node in alive if node["resources"]]
    lacking: list[dict] = []
    if known:
        for node in known:
            for name, amount in required.items():
                have = node["resources"].get(name, 0.0)
                if have < float(amount):
                    lacking.append(
                        {"scope": "node", "node_id": node["node_id"], "ip": node["ip"], "resource": name, "required": float(amount), "available": have}
                    )
        return lacking
    nodes = len(expected_ips) if expected_ips else facts["node_count"]
    for name, amount in required.items():
        have = facts["totals"].get(name, 0.0)
        if have < float(amount) * nodes:
            lacking.append({"scope": "cluster", "node_id": None, "ip": None, "resource": name, "required": float(amount) * nodes, "available": have})
    return lacking


def check_nodes(facts: dict, expected_ips: list[str] | None = None, required: dict | None = None) -> NodeCheck:
    """The expected nodes not ALIVE, and the ALIVE nodes short of ``required``."""
    expected = list(expected_ips or [])
    missing = missing_nodes(expected, facts)
    count = len(missing) if facts["node_ips_known"] else max(0, len(expected) - facts["node_count"])
    lacking = lacking_resources(facts, required, expected) if required else []
    return NodeCheck(missing=missing, missing_count=count, ips_known=facts["node_ips_known"], lacking=lacking)
