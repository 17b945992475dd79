# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""What ray_cluster's Verify decides from the head's reading of the cluster (ray_cluster_info's ``ray_cluster`` facts)
and each node's raylet: which nodes' raylets are ALIVE there, and whether a re-run restarted nothing and the reading
already shows the whole cluster, so that it is the verification (roles/ray_cluster/tasks/verify.yml). No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def alive_node_ids(facts: Any) -> list[str]:
    """The node ids the head's cluster holds ALIVE ([] for no reading)."""
    nodes = facts.get("nodes") if isinstance(facts, Mapping) else None
    return [node["node_id"] for node in nodes or [] if isinstance(node, Mapping) and node.get("state") == "ALIVE" and node.get("node_id")]


def not_alive(raylets: Mapping[str, Any], facts: Any) -> list[str]:
    """The hosts (raylets maps each to its own raylet's node id) whose raylet is not ALIVE in the head's cluster."""
    alive = set(alive_node_ids(facts))
    return [host for host, node_id in raylets.items() if node_id not in alive]


def _restarted(node: Mapping) -> bool:
    return any(isinstance(node.get(name), Mapping) and node[name].get("changed") for name in ("__ray_cluster_head_container", "__ray_cluster_worker_container"))


def steady(nodes: Sequence[Mapping], probe: Any, gpus_needed: int, complete: bool) -> bool:
    """Whether nothing restarted and the head's reading in Service (probe: ray_cluster_info's result, or {skipped: true})
    shows the whole cluster: every node in the play (complete), no Ray container (re)started, each node's raylet known
    from before and ALIVE in the reading, no problem in it, and the autoscaler's totals counting the GPUs needed.

    nodes: each node's variables (__ray_cluster_head_container, __ray_cluster_worker_container, __ray_cluster_node_id_before)."""
    if not complete or any(_restarted(node) for node in nodes):
        return False
    if not isinstance(probe, Mapping) or probe.get("skipped") or probe.get("failed") or probe.get("problems"):
        return False
    facts = probe.get("ray_cluster") or {}
    totals = facts.get("totals") or {}
    if (totals.get("GPU") or 0) < gpus_needed:
        return False
    before = [node.get("__ray_cluster_node_id_before") for node in nodes]
    alive = set(alive_node_ids(facts))
    return all(before) and all(node_id in alive for node_id in before)
