# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What ray_cluster's Verify decides from the head's reading of the cluster (module_utils/_ray_steady.py)."""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_steady import not_alive, steady


def ray_cluster_steady(nodes, probe, gpus_needed, complete):
    """Whether a re-run restarted nothing and the head's reading already shows the whole cluster."""
    if not isinstance(nodes, list) or not all(isinstance(node, Mapping) for node in nodes):
        raise AnsibleFilterError("ray_cluster_steady: expected each node's variables as a list of mappings")
    try:
        needed = int(gpus_needed)
    except (TypeError, ValueError) as error:
        raise AnsibleFilterError(f"ray_cluster_steady: gpus_needed must be a number, got {gpus_needed!r}") from error
    return steady(nodes, probe, needed, bool(complete))


def ray_cluster_not_alive(raylets, facts):
    """The hosts whose own raylet (raylets: host to node id) is not ALIVE in the head's cluster (ray_cluster facts)."""
    if not isinstance(raylets, Mapping):
        raise AnsibleFilterError("ray_cluster_not_alive: expected each host's raylet node id as a mapping")
    return not_alive(raylets, facts)


class FilterModule:
    def filters(self):
        return {"ray_cluster_steady": ray_cluster_steady, "ray_cluster_not_alive": ray_cluster_not_alive}
