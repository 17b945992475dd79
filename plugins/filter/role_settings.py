# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a role's argument specification cannot say of its variables: nccl_network's (module_utils/_nccl_settings.py),
vllm_image's (_vllm_image_settings.py) and ray_cluster's (_ray_cluster_settings.py) tables of rules. vllm_serve's, which also settles the serve
settings, is filter/serve_settings.py."""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils import _nccl_settings, _ray_cluster_settings, _vllm_image_settings


def _judged(filter_name, table, settings, node):
    if not isinstance(settings, Mapping):
        raise AnsibleFilterError(f"{filter_name}: expected the variables as a mapping, got {type(settings).__name__}")
    return table.setting_problems(str(node), settings)


def nccl_network_setting_problems(settings, node):
    """One sentence per problem of nccl_network's variables on the node (those the mapping holds are judged)."""
    return _judged("nccl_network_setting_problems", _nccl_settings, settings, node)


def vllm_image_setting_problems(settings, node):
    """One sentence per problem of vllm_image's variables on the node (those the mapping holds are judged)."""
    return _judged("vllm_image_setting_problems", _vllm_image_settings, settings, node)


def ray_cluster_setting_problems(settings, node):
    """One sentence per problem of ray_cluster's variables on the node (those the mapping holds are judged)."""
    return _judged("ray_cluster_setting_problems", _ray_cluster_settings, settings, node)


class FilterModule:
    def filters(self):
        return {
            "nccl_network_setting_problems": nccl_network_setting_problems,
            "vllm_image_setting_problems": vllm_image_setting_problems,
            "ray_cluster_setting_problems": ray_cluster_setting_problems,
        }
