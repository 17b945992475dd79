# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""What validate_inventory.yml judges of an inventory, beside the roles' argument specifications, before any host
changes: a variable name with a role's prefix, or the collection's own (sparkinfer_), that the collection does not know
is a misspelling Ansible would ignore silently (the roles then run with their defaults); a head or worker outside
sparkinfer_nodes is a node every playbook leaves out. No I/O here: the caller gives the roles' argument specifications.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence

# The roles a user sets variables of, by their prefix (the collection's internal roles, such as node_firewall, take
# theirs from these roles).
ROLE_PREFIXES = ("gb10_host_", "nccl_network_", "vllm_image_", "ray_cluster_", "vllm_serve_")
COLLECTION_PREFIX = "sparkinfer_"
# The groups of a cluster's roles, which every playbook reaches through sparkinfer_nodes.
NODES_GROUP = "sparkinfer_nodes"
ROLE_GROUPS = ("sparkinfer_head", "sparkinfer_workers")
# The collection's variables outside its roles, which its playbooks read.
PLAYBOOK_VARIABLES = (
    # The recipe a cluster serves (recipes/), and the nodes that make a cluster (default: the play's hosts).
    "sparkinfer_recipe",
    "sparkinfer_cluster_hosts",
    # The group or hosts a playbook runs on, in place of --limit (default: sparkinfer_nodes).
    "sparkinfer_targets",
    # rollout.yml.
    "sparkinfer_rollout_clusters_per_batch",
    "sparkinfer_rollout_order",
    "sparkinfer_rollout_reporters",
    "sparkinfer_rollout_validate",
    "sparkinfer_rollout_validate_min_available_gib",
    # validate_single_node.yml's port, and prometheus_targets.yml's file.
    "sparkinfer_validate_port",
    "sparkinfer_prometheus_targets_file",
)
# The roles' outputs that other roles read as inputs, which an inventory may set in place of the role that sets them
# (ray_cluster and vllm_image take a node's fabric address from nccl_network_host_ip; vllm_serve Ray's address from
# ray_cluster_address).
OUTPUT_VARIABLES = ("nccl_network_host_ip", "nccl_network_transport", "nccl_network_env", "ray_cluster_address")
# How alike the rest of a misspelling after its prefix and that of the name it was meant as are (difflib's ratio):
# fabric_adresses and fabric_addresses 0.97, recipie and recipe 0.92, fabric_ip and recipe 0.53.
CLOSE = 0.8


def known_variables(specs: Mapping[str, Mapping]) -> set[str]:
    """Every variable the collection reads: each role's options in any of its entry points (specs maps a role to its
    parsed meta/argument_specs.yml), the outputs the roles read from each other, and the playbooks' own."""
    known = {*PLAYBOOK_VARIABLES, *OUTPUT_VARIABLES}
    for spec in specs.values():
        for entry_point in spec["argument_specs"].values():
            known.update(entry_point.get("options") or {})
    return known


def _closest(name: str, prefix: str, known: Iterable[str]) -> str:
    """The known name of the same prefix whose rest is most like the name's ('' when none is alike): the shared prefix
    would make sparkinfer_fabric_ip look like sparkinfer_recipe."""
    rests = {other[len(prefix) :]: other for other in known if other.startswith(prefix)}
    return next((rests[rest] for rest in difflib.get_close_matches(name[len(prefix) :], list(rests), n=1, cutoff=CLOSE)), "")


def unknown_variables(names: Iterable[str], known: Sequence[str] | set[str]) -> list[dict]:
    """The names of the collection's prefixes it does not know, each with the closest name it knows ('' for none)."""
    found = []
    for name in sorted(set(names) - set(known)):
        prefix = next((prefix for prefix in (*ROLE_PREFIXES, COLLECTION_PREFIX) if name.startswith(prefix)), None)
        if prefix is not None:
            found.append({"name": name, "closest": _closest(name, prefix, known)})
    return found


def unknown_message(unknown: Sequence[Mapping]) -> list[str]:
    """One sentence per unknown name: what Ansible does with it, and the name that was likely meant."""
    return [
        f"{item['name']} is no variable of the collection"
        + (f" (did you mean {item['closest']}?)" if item["closest"] else " (names with its prefixes are the collection's: rename a variable of your own)")
        + ": Ansible would ignore it and the roles run with their defaults."
        for item in unknown
    ]


def outside_nodes(groups: Mapping[str, Sequence[str]]) -> list[str]:
    """One sentence per host of sparkinfer_head or sparkinfer_workers that sparkinfer_nodes lacks."""
    nodes = set(groups.get(NODES_GROUP) or ())
    return [
        f"{host} is in {group} but not in {NODES_GROUP}: every playbook runs on {NODES_GROUP}, so the cluster would be "
        f"deployed without it; put {group} among the children of {NODES_GROUP} (inventories/example-two-sparks/hosts.yml)."
        for group in ROLE_GROUPS
        for host in groups.get(group) or ()
        if host not in nodes
    ]
