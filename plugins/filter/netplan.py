# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The other netplan files' entries for the fabric interfaces, moved out so that one file owns them; and the fabric
interfaces that carry the management network, which the fabric netplan must not take."""

from __future__ import annotations

import base64
import fnmatch

import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._management_network import ManagementReadError, management_clash

# Device types whose entries list other interfaces as their members (bonds, bridges) or parent (vlans).
_MEMBER_KEYS = {"bonds": "interfaces", "bridges": "interfaces", "vlans": "link"}


def _where(error: Exception) -> str:
    """Where the parser stopped, by line and column only: its own message quotes the file's text, which may hold a
    Wi-Fi password or 802.1X credentials."""
    mark = getattr(error, "problem_mark", None)
    if mark is not None:
        return f"at line {mark.line + 1}, column {mark.column + 1}"
    return "not UTF-8 text" if isinstance(error, UnicodeDecodeError) else "unreadable"


def _document(result: dict) -> tuple[str, object]:
    path = result.get("source") or result.get("item") or "?"
    try:
        return path, yaml.safe_load(base64.b64decode(result["content"]).decode("utf-8"))
    except (KeyError, ValueError, yaml.YAMLError) as error:
        raise AnsibleFilterError(
            f"{path} is not readable netplan YAML ({_where(error)}): netplan generate would refuse it too; mend or remove it "
            f"(netplan generate names the problem)"
        ) from None


def _match_name(device: object) -> object:
    """An ethernets entry's match.name, or None."""
    match = device.get("match") if isinstance(device, dict) else None
    return match.get("name") if isinstance(match, dict) else None


def _members_named(network: dict, interfaces: list[str]) -> list[str]:
    found = []
    for kind, key in _MEMBER_KEYS.items():
        for name, device in (network.get(kind) or {}).items():
            members = (device or {}).get(key) or []
            members = [members] if isinstance(members, str) else members
            found += [f"{kind}.{name}.{key} names {member}" for member in members if member in interfaces]
    return found


def _patterns_over(network: dict, interfaces: list[str]) -> list[str]:
    """The ethernets entries whose match.name is a pattern that takes in a fabric interface, with whatever else it matches."""
    found = []
    for key, device in (network.get("ethernets") or {}).items():
        pattern = _match_name(device)
        if not isinstance(pattern, str) or pattern in interfaces:
            continue
        taken = [interface for interface in interfaces if fnmatch.fnmatchcase(interface, pattern)]
        if taken:
            found.append(f"ethernets.{key}.match.name {pattern!r} takes in {', '.join(taken)}")
    return found


def _configured_interface(key: str, device: object, interfaces: list[str]) -> str | None:
    """The fabric interface an ethernets entry configures: by its key, or by an exact match.name (NetworkManager keeps
    its profiles as NM-<uuid> entries that name their interface there)."""
    if key in interfaces:
        return key
    name = _match_name(device)
    return name if name in interfaces else None


def netplan_fabric_claims(slurped, interfaces, owner):
    """The netplan files among ``slurped`` (ansible.builtin.slurp results) that configure a fabric interface.

    netplan merges every file of /etc/netplan, concatenating lists: an interface also configured in another file
    (NVIDIA's /etc/netplan/40-cx7.yaml) keeps that file's addresses and link-local beside the fabric netplan's.
    Returns ``[{"path", "interfaces", "content"}]``: the interfaces each file configures, and its text with their
    entries taken out. A fabric interface that a bond, bridge or vlan uses fails, as does a match.name pattern that
    takes one in with other interfaces: the interface cannot then hold its own address alone.
    """
    if not isinstance(slurped, list) or not isinstance(interfaces, list):
        raise AnsibleFilterError("netplan_fabric_claims takes a list of slurp results and a list of interface names")
    claims, problems = [], []
    for result in slurped:
        path, document = _document(result)
        network = document.get("network") if isinstance(document, dict) else None
        if not isinstance(network, dict):
            continue
        problems += [f"{path}: {problem}" for problem in _members_named(network, interfaces) + _patterns_over(network, interfaces)]
        ethernets = network.get("ethernets") or {}
        configured = {key: _configured_interface(key, device, interfaces) for key, device in ethernets.items()}
        claimed = [interface for interface in configured.values() if interface]
        if not claimed:
            continue
        for key, interface in configured.items():
            if interface:
                del ethernets[key]
        if not ethernets:
            del network["ethernets"]
        header = (
            f"# sparkinfer.cluster moved {', '.join(claimed)} out of this file into {owner}: netplan merges the files\n"
            "# of /etc/netplan, and an interface configured twice keeps the addresses of both. The file as it was\n"
            "# is kept beside this one (NAME.yaml.PID.DATE~, which netplan does not read).\n"
        )
        claims.append({"path": path, "interfaces": claimed, "content": header + yaml.safe_dump(document, default_flow_style=False, sort_keys=False)})
    if problems:
        raise AnsibleFilterError(
            "; ".join(problems) + ". A fabric interface that another device uses, or that a pattern configures with other interfaces, "
            "cannot hold its own fabric address alone: take it out of that device or pattern, or leave nccl_network_fabric_addresses "
            "empty and configure the fabric yourself. Nothing was written."
        )
    return claims


def netplan_management_clash(answers, interfaces):
    """The fabric interfaces that carry the node's management network: its default routes' or the address Ansible
    reaches it at, from iproute2's JSON answers (`ip -j`)."""
    if isinstance(answers, str) or not isinstance(answers, list):
        raise AnsibleFilterError(f"netplan_management_clash: expected the answers of ip -j as a list, got {type(answers).__name__}")
    try:
        return management_clash([answer or "" for answer in answers], list(interfaces))
    except ManagementReadError as exc:
        raise AnsibleFilterError(f"netplan_management_clash: {exc}") from exc


class FilterModule:
    def filters(self):
        return {"netplan_fabric_claims": netplan_fabric_claims, "netplan_management_clash": netplan_management_clash}
