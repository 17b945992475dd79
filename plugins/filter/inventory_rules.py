# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What validate_inventory.yml judges of an inventory beside the roles' argument specifications
(module_utils/_inventory_rules.py)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._inventory_rules import inventory_problems as judge


def _strings(value) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def inventory_problems(names, known, groups):
    """One sentence per problem: a variable name of the collection's prefixes it does not know (with the name it was
    likely meant as), a head or worker outside sparkinfer_nodes."""
    if not _strings(names):
        raise AnsibleFilterError("inventory_problems: expected the variable names as a list of strings (hostvars[inventory_hostname] | list)")
    if not _strings(known):
        raise AnsibleFilterError("inventory_problems: expected the known names as a list of strings (lookup('sparkinfer.cluster.collection_variables'))")
    if not isinstance(groups, dict) or not all(_strings(hosts) for hosts in groups.values()):
        raise AnsibleFilterError("inventory_problems: expected the inventory's groups (groups), each a list of hosts")
    return judge(names, set(known), groups)


class FilterModule:
    def filters(self):
        return {"inventory_problems": inventory_problems}
