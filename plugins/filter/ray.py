# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The `ray start` arguments of a Ray cluster's head or worker, on fixed ports, and the ports its firewall guards."""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_cluster_settings import firewall_ports, start_spec
from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_start import RayStartError, ray_start_args


def ray_start_argv(spec, head_address=None):
    """``["start", "--block", ...]``: the head's without head_address, a worker's joining head_address with it."""
    try:
        return ray_start_args(spec, head_address)
    except RayStartError as exc:
        raise AnsibleFilterError(f"ray_start_argv: {exc}") from exc


def _variables(name, settings):
    """ray_cluster's variables, refused naming the filter when they are not a mapping."""
    if not isinstance(settings, Mapping):
        raise AnsibleFilterError(f"{name}: expected ray_cluster's variables as a mapping, got {type(settings).__name__}")
    return settings


def ray_cluster_start_spec(settings):
    """The `ray start` spec ray_start_argv takes, from ray_cluster's variables by their full names."""
    try:
        return start_spec(_variables("ray_cluster_start_spec", settings))
    except KeyError as exc:
        raise AnsibleFilterError(f"ray_cluster_start_spec: the variables lack {exc}") from exc


def ray_cluster_firewall_ports(settings):
    """The ports of ray_cluster's two chains: "cluster" (the nodes only) and "metrics" (the nodes and the scrapers)."""
    try:
        return firewall_ports(_variables("ray_cluster_firewall_ports", settings))
    except (KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"ray_cluster_firewall_ports: a port variable is missing or no number: {exc}") from exc


class FilterModule:
    def filters(self):
        return {
            "ray_start_argv": ray_start_argv,
            "ray_cluster_start_spec": ray_cluster_start_spec,
            "ray_cluster_firewall_ports": ray_cluster_firewall_ports,
        }
