# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""A fleet's clusters in rollout order, and the batches a play's `serial` takes them in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


class FleetError(ValueError):
    """The inventory's clusters cannot be rolled out one by one; the message says which hosts and why."""


def _cluster_of(host: str, given: object, targets: Sequence[str]) -> list[str]:
    if given is None:
        return list(targets)
    if not isinstance(given, Sequence) or isinstance(given, str) or not all(isinstance(member, str) for member in given):
        raise FleetError(f"sparkinfer_cluster_hosts of {host} must be a list of host names, got {given!r}")
    if host not in given:
        raise FleetError(f"sparkinfer_cluster_hosts of {host} is {list(given)}, which does not hold {host}: list every node of its cluster, head first")
    return list(given)


def rollout_batches(targets: Sequence[str], cluster_hosts: Mapping[str, object], clusters_per_batch: int = 1) -> dict:
    """The clusters of the targets (each node's sparkinfer_cluster_hosts, head first; None: one cluster of all targets),
    in the order their first node appears among the targets, grouped clusters_per_batch at a time.

    Returns `clusters` (each a list of hosts, head first), `order` (every host, cluster by cluster: a play's hosts) and
    `batches` (the number of hosts in each batch: that play's `serial`).
    """
    if isinstance(clusters_per_batch, bool) or not isinstance(clusters_per_batch, int) or clusters_per_batch < 1:
        raise FleetError(f"sparkinfer_rollout_clusters_per_batch must be a whole number of clusters, 1 or more, got {clusters_per_batch!r}")
    clusters: list[list[str]] = []
    cluster_of: dict[str, list[str]] = {}
    for host in targets:
        cluster = _cluster_of(host, cluster_hosts.get(host), targets)
        if host in cluster_of:
            if cluster_of[host] != cluster:
                raise FleetError(
                    f"{host} is in two clusters, {cluster_of[host]} and {cluster}: give the nodes of one cluster the same sparkinfer_cluster_hosts"
                )
            continue
        outside = [member for member in cluster if member not in targets]
        if outside:
            raise FleetError(f"the cluster of {cluster[0]} has nodes the run does not target ({', '.join(outside)}): a rollout changes whole clusters")
        for member in cluster:
            if member in cluster_of and cluster_of[member] != cluster:
                raise FleetError(
                    f"{member} is in two clusters, {cluster_of[member]} and {cluster}: give the nodes of one cluster the same sparkinfer_cluster_hosts"
                )
            cluster_of[member] = cluster
        clusters.append(cluster)
    batches = [clusters[start : start + clusters_per_batch] for start in range(0, len(clusters), clusters_per_batch)]
    return {
        "clusters": clusters,
        "order": [host for cluster in clusters for host in cluster],
        "batches": [sum(len(cluster) for cluster in batch) for batch in batches],
    }
