# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What nccl_network's argument specification cannot say of its variables (module_utils/_nccl_settings.py)."""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._nccl_settings import setting_problems


def nccl_network_setting_problems(settings, node):
    """One sentence per problem of nccl_network's variables on the node (those the mapping holds are judged)."""
    if not isinstance(settings, Mapping):
        raise AnsibleFilterError(f"nccl_network_setting_problems: expected the variables as a mapping, got {type(settings).__name__}")
    return setting_problems(str(node), settings)


class FilterModule:
    def filters(self):
        return {"nccl_network_setting_problems": nccl_network_setting_problems}
