# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""A fleet's clusters in rollout order, and the batches a play's `serial` takes them in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

# Each batch's reporter, a host of the admin box added to the rollout's play (rollout_batches).
REPORTER_PREFIX = "sparkinfer-rollout-batch-"


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


def settled_clusters_per_batch(admin_value: object, node_values: Mapping[str, object]) -> object:
    """How many clusters a rollout's batch holds: the admin box's value (group_vars/all, -e), else the one value the
    nodes' inventory gives them (a fleet's group_vars, which the admin box does not read), else 1. Refused when the nodes
    give different values: the batches are the fleet's, one size for all."""
    if admin_value is not None:
        return admin_value
    given = {host: value for host, value in node_values.items() if value is not None}
    values = list(dict.fromkeys(str(value) for value in given.values()))
    if len(values) > 1:
        said = "; ".join(f"{value} on {', '.join(host for host, given_value in given.items() if str(given_value) == value)}" for value in values)
        raise FleetError(
            f"sparkinfer_rollout_clusters_per_batch differs between the nodes ({said}): a rollout's batches are the fleet's, so set it once"
            " (group_vars/all, the fleet's group, or -e)"
        )
    return next(iter(given.values()), 1)


def rollout_batches(targets: Sequence[str], cluster_hosts: Mapping[str, object], clusters_per_batch: int = 1) -> dict:
    """The clusters of the targets (each node's sparkinfer_cluster_hosts, head first; None: one cluster of all targets),
    in the order their first node appears among the targets, grouped clusters_per_batch at a time.

    Returns `clusters` (each a list of hosts, head first), `order` (every host, cluster by cluster, each batch followed
    by its reporter: a play's hosts), `batches` (the number of hosts in each batch, its reporter among them: that play's
    `serial`) and `reporters` (the name of each batch's reporter, a host on the admin box that judges the batch once its
    nodes are done: it never becomes unreachable, so the rollout can say where it stopped when a node does).
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
    batch_nodes = {f"{REPORTER_PREFIX}{number}": [host for cluster in batch for host in cluster] for number, batch in enumerate(batches, start=1)}
    return {
        "clusters": clusters,
        "order": [host for reporter, nodes in batch_nodes.items() for host in [*nodes, reporter]],
        "batches": [len(nodes) + 1 for nodes in batch_nodes.values()],
        "reporters": list(batch_nodes),
        "batch_nodes": batch_nodes,
        "clusters_per_batch": clusters_per_batch,
    }


# What each stage of a cluster's change had done to its server when a node of it stopped answering.
_SERVER_AT_STAGE = {
    "": "nothing of it had been changed yet",
    "image": "its server had not been stopped, so it most likely still serves what it served before",
    "validate": "its server had not been stopped, so it most likely still serves what it served before",
    "cluster": "its server may have been stopped (Ray restarts in this stage), so it may be down",
    "serve": "its server may have been stopped for the relaunch, so it may be down",
    "benchmark": "its new server had passed its gate and was being benchmarked, so it most likely serves the change",
}


def rollout_unreachable(rollout: Mapping, reporter: str, answering: Sequence[str], stages: Mapping[str, str], failed: Sequence[str] = ()) -> str:
    """What the reporter of a batch says when nodes of it stopped answering ('' when every node answers): where the
    rollout stopped, at which stage, what that means for each such cluster's server, and where the fleet stands.

    answering: the batch's nodes that still answer (in the play, or failed but reachable: their own failure spoke);
    stages: each node's last stage ('' before the first); failed: the heads of the batch's clusters that failed and
    said so themselves.
    """
    number = list(rollout["reporters"]).index(reporter)
    per_batch = rollout["clusters_per_batch"]
    batch = rollout["clusters"][number * per_batch : (number + 1) * per_batch]
    lost = [(cluster, [host for host in cluster if host not in answering]) for cluster in batch]
    lost = [(cluster, silent) for cluster, silent in lost if silent]
    if not lost:
        return ""
    said = []
    for cluster, silent in lost:
        stage = stages.get(silent[0]) or ""
        at = f"at the {stage} stage" if stage else "before its change began"
        said.append(
            f"The rollout stopped at the cluster of {cluster[0]} ({', '.join(cluster)}): {', '.join(silent)} stopped answering "
            f"{at}, so nothing could be put back or checked there: {_SERVER_AT_STAGE.get(stage, _SERVER_AT_STAGE['serve'])}."
        )
    stopped = [cluster[0] for cluster, _silent in lost] + list(failed)
    done = [cluster[0] for cluster in rollout["clusters"][: number * per_batch]] + [cluster[0] for cluster in batch if cluster[0] not in stopped]
    untouched = [cluster[0] for cluster in rollout["clusters"][(number + 1) * per_batch :]]
    silent_hosts = ", ".join(host for _cluster, silent in lost for host in silent)
    said.append(
        f"Changed and serving the change: {', '.join(done) or 'none'}. Not touched: {', '.join(untouched) or 'none'}. Once "
        f"{silent_hosts} answers again, run doctor.yml to see what it serves, then rollout.yml again: the clusters already "
        "changed change nothing."
    )
    return " ".join(said)
