# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NCCL's RoCE variables for the HCAs of the cabled port, checked against each twin's GID table by address."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._fabric import LOOPBACK_ADDRESS, LOOPBACK_INTERFACE, cabled_port_problem, port_condition


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


def nccl_loopback(fabric, node, fabric_port):
    """What a cluster of one node has instead of a fabric, from its fabric_facts: NCCL, Gloo, vLLM's ranks and Ray on
    loopback, with the sentence that says so and how its ConnectX-7 port stands.

    One node reaches no peer: its port may be down or uncabled, and no fabric address, netplan or ping is wanted.
    Loopback also keeps Ray's ports and vLLM's rendezvous off every network; the API is published apart from this.
    """
    if not isinstance(fabric, dict) or not isinstance(fabric.get("hcas"), list):
        raise AnsibleFilterError("nccl_loopback needs fabric_facts' sparkinfer_fabric (a dict with its hcas)")
    return {
        "host_ip": LOOPBACK_ADDRESS,
        "interface": LOOPBACK_INTERFACE,
        "transport": "loopback",
        "env": {
            "NCCL_SOCKET_IFNAME": LOOPBACK_INTERFACE,
            "GLOO_SOCKET_IFNAME": LOOPBACK_INTERFACE,
            "TP_SOCKET_IFNAME": LOOPBACK_INTERFACE,
            "UCX_NET_DEVICES": LOOPBACK_INTERFACE,
            "VLLM_HOST_IP": LOOPBACK_ADDRESS,
            "RAY_NODE_IP_ADDRESS": LOOPBACK_ADDRESS,
            "MASTER_ADDR": LOOPBACK_ADDRESS,
            "NCCL_IB_DISABLE": "1",
        },
        "note": (
            f"{node} is a cluster of one node: it needs no fabric, so none was configured or checked (no netplan, no ping, "
            f"no bandwidth test), and its ConnectX-7 is no error here ({port_condition(fabric['hcas'], int(fabric_port))}). "
            f"Its ranks and Ray use loopback ({LOOPBACK_ADDRESS}); clients reach the API on the management network. To serve "
            "across Sparks, list them in sparkinfer_cluster_hosts and give each its nccl_network_fabric_addresses."
        ),
    }


def nccl_port_problem(hcas_by_node, node, fabric_port):
    """Why ConnectX-7 port fabric_port is not up on node, naming which port is cabled on which node; '' when it is up."""
    if not isinstance(hcas_by_node, dict) or node not in hcas_by_node:
        raise AnsibleFilterError(f"nccl_port_problem needs every node's fabric_facts HCAs by node name, {node} among them")
    return cabled_port_problem(node, hcas_by_node, int(fabric_port))


class FilterModule:
    def filters(self):
        return {"nccl_roce_env": nccl_roce_env, "nccl_loopback": nccl_loopback, "nccl_port_problem": nccl_port_problem}
