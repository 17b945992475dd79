# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NCCL's RoCE variables for the HCAs of the cabled port, checked against each twin's GID table by address."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError


def _address_of(netdev: str | None, facts: dict) -> str | None:
    """The IPv4 address Ansible's network facts give the netdev (names with '-' are kept with '_')."""
    interface = facts.get((netdev or "").replace("-", "_")) or {}
    return (interface.get("ipv4") or {}).get("address")


def _gid_list(hca: dict) -> str:
    gids = hca.get("roce_v2_ipv4_gids") or []
    return ", ".join(f"{gid['index']} ({gid['address']})" for gid in gids) or "none"


def nccl_roce_env(port_hcas, facts, gid_index=None):
    """``{"NCCL_IB_HCA": "a,b"[, "NCCL_IB_GID_INDEX": "N"]}`` for the fabric_facts entries of the cabled port's HCAs.

    Each HCA's netdev must hold an IPv4 address that its GID table has a RoCE v2 entry for: NCCL picks that
    entry by itself when NCCL_IB_GID_INDEX is unset, per HCA and whatever its index. A pinned gid_index must
    be that entry on every HCA.
    """
    if not isinstance(port_hcas, list) or not port_hcas:
        raise AnsibleFilterError("no ConnectX-7 HCA on the cabled port: nothing for NCCL_IB_HCA")
    problems = []
    for hca in port_hcas:
        address = _address_of(hca.get("netdev"), facts)
        indices = [gid["index"] for gid in hca.get("roce_v2_ipv4_gids") or [] if gid["address"] == address]
        where = f"{hca['name']} ({hca.get('netdev')}, {address or 'no IPv4 address'})"
        if not indices:
            problems.append(
                f"{where} has no RoCE v2 GID for its address (its RoCE v2 IPv4 GIDs: {_gid_list(hca)}): the kernel adds one once "
                f"the address is on the netdev; check ip -4 addr show {hca.get('netdev')} and "
                f"/sys/class/infiniband/{hca['name']}/ports/{hca.get('port', 1)}/gids"
            )
        elif gid_index is not None and int(gid_index) not in indices:
            problems.append(
                f"nccl_network_ib_gid_index is {gid_index}, but {where} holds its RoCE v2 GID at index {indices[0]} "
                "(indices drift as addresses change): leave nccl_network_ib_gid_index unset for NCCL to pick the entry per HCA"
            )
    if problems:
        raise AnsibleFilterError("; ".join(problems) + ".")
    env = {"NCCL_IB_HCA": ",".join(hca["name"] for hca in port_hcas)}
    if gid_index is not None:
        env["NCCL_IB_GID_INDEX"] = str(int(gid_index))
    return env


class FilterModule:
    def filters(self):
        return {"nccl_roce_env": nccl_roce_env}
