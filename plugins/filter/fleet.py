# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A fleet's clusters in rollout order (playbooks/rollout.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._fleet import FleetError, rollout_batches, rollout_unreachable, settled_clusters_per_batch


def fleet_rollout_batches(cluster_hosts, targets, clusters_per_batch=1):
    """The clusters, the hosts cluster by cluster, and the size of each batch of clusters_per_batch clusters."""
    if not isinstance(cluster_hosts, dict):
        raise AnsibleFilterError(f"fleet_rollout_batches: expected a mapping of host to its sparkinfer_cluster_hosts, got {type(cluster_hosts).__name__}")
    try:
        return rollout_batches(list(targets), cluster_hosts, clusters_per_batch)
    except FleetError as error:
        raise AnsibleFilterError(f"fleet_rollout_batches: {error}") from error


def fleet_rollout_clusters_per_batch(admin_value, node_values):
    """The size of a rollout's batch: the admin box's value, else the one the nodes share, else 1."""
    if not isinstance(node_values, dict):
        raise AnsibleFilterError(f"fleet_rollout_clusters_per_batch: expected a mapping of host to its value, got {type(node_values).__name__}")
    try:
        return settled_clusters_per_batch(admin_value, node_values)
    except FleetError as error:
        raise AnsibleFilterError(f"fleet_rollout_clusters_per_batch: {error}") from error


def fleet_rollout_unreachable(rollout, reporter, answering, stages, failed=()):
    """What a batch's reporter says when nodes of its clusters stopped answering; '' when none did."""
    if not isinstance(rollout, dict) or reporter not in rollout.get("reporters", []):
        raise AnsibleFilterError(f"fleet_rollout_unreachable: expected fleet_rollout_batches' result with the reporter {reporter!r}")
    return rollout_unreachable(rollout, reporter, list(answering), dict(stages), list(failed))


class FilterModule:
    def filters(self):
        return {
            "fleet_rollout_batches": fleet_rollout_batches,
            "fleet_rollout_clusters_per_batch": fleet_rollout_clusters_per_batch,
            "fleet_rollout_unreachable": fleet_rollout_unreachable,
        }
