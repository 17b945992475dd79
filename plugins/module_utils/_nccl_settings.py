# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""What nccl_network's argument specification cannot say of its variables, in one table: nccl_network's preflight
refuses on it, and validate_inventory.yml judges the same rules on what the inventory sets before any host changes.

The rules read the variables by their full names; a variable a mapping lacks (the inventory did not set it) leaves its
rules unjudged, and a value of the wrong type is the argument specification's to name. No I/O here.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator, Mapping

_NETPLAN_FILE = re.compile(r"/etc/netplan/[A-Za-z0-9._-]+\.yaml")


def _is_cidr(entry: object) -> bool:
    """An IPv4 address with its prefix length: 192.168.177.11/24 (ipaddress takes 192.168.177.11 alone for a /32)."""
    if not isinstance(entry, str) or "/" not in entry:
        return False
    try:
        ipaddress.IPv4Interface(entry)
    except ValueError:
        return False
    return True


def _fabric_addresses(node: str, settings: Mapping) -> Iterator[str]:
    addresses = settings.get("nccl_network_fabric_addresses")
    for entry in addresses if isinstance(addresses, list) else []:
        if not _is_cidr(entry):
            yield (
                f"nccl_network_fabric_addresses on {node} holds {entry}; each entry must be an IPv4 address with its prefix length, "
                "such as 192.168.177.11/24 (one per ConnectX-7 twin)."
            )


def _netplan_file(node: str, settings: Mapping) -> Iterator[str]:
    name = settings.get("nccl_network_netplan_file")
    # The file's name reaches netplan's check command; netplan reads /etc/netplan only.
    if isinstance(name, str) and not _NETPLAN_FILE.fullmatch(name):
        yield (
            f"nccl_network_netplan_file is '{name}': give a file in /etc/netplan whose name has letters, digits, '.', '_' and '-' "
            "only and ends in .yaml, such as /etc/netplan/40-sparkinfer-fabric.yaml."
        )


def _head_in_cluster(node: str, settings: Mapping) -> Iterator[str]:
    head, hosts = settings.get("nccl_network_head_host"), settings.get("nccl_network_cluster_hosts")
    if isinstance(head, str) and isinstance(hosts, list) and head not in hosts:
        yield f"nccl_network_head_host is {head}, which is not in nccl_network_cluster_hosts ({', '.join(map(str, hosts))})."


def _perf_command(node: str, settings: Mapping) -> Iterator[str]:
    if settings.get("nccl_network_run_perf_test") is True and settings.get("nccl_network_perf_argv", []) == []:
        yield (
            "nccl_network_run_perf_test is true but nccl_network_perf_argv is empty: give the nccl-tests command to run on the head "
            "node, e.g. mpirun across both nodes with all_gather_perf -b 16G -e 16G -f 2."
        )


RULES: tuple[Callable[[str, Mapping], Iterator[str]], ...] = (_fabric_addresses, _netplan_file, _head_in_cluster, _perf_command)


def setting_problems(node: str, settings: Mapping) -> list[str]:
    """One sentence per problem of nccl_network's variables on a node, in the table's order."""
    return [problem for rule in RULES for problem in rule(node, settings)]
