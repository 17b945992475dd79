# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: collection_variables
version_added: 0.1.0
short_description: Every variable name the collection reads
description:
  - >-
    Returns the names of the variables the collection reads, sorted; every option of every entry point of its roles'
    C(meta/argument_specs.yml), and the variables its playbooks read (C(sparkinfer_recipe), C(sparkinfer_targets), ...).
  - >-
    validate_inventory.yml compares an inventory's variables with them
    (P(sparkinfer.cluster.inventory_problems#filter)), so that a misspelt variable stops the run before any host changes
    instead of being ignored.
author:
  - sparkinfer.cluster developers (@sparkinfer)
"""

EXAMPLES = r"""
- name: Name the inventory's variables the collection does not know
  ansible.builtin.debug:
    msg: "{{ hostvars[inventory_hostname] | list | sparkinfer.cluster.inventory_problems(__known, groups) }}"
  vars:
    __known: "{{ lookup('sparkinfer.cluster.collection_variables') }}"
"""

RETURN = r"""
_raw:
  description: The variable names, sorted.
  type: list
  elements: str
"""

from pathlib import Path

import yaml
from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.sparkinfer.cluster.plugins.module_utils._inventory_rules import ROLE_PREFIXES, known_variables

ROLES = Path(__file__).resolve().parents[2] / "roles"


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        if terms:
            raise AnsibleLookupError("collection_variables takes no terms")
        specs = {}
        for prefix in ROLE_PREFIXES:
            path = ROLES / prefix.rstrip("_") / "meta" / "argument_specs.yml"
            try:
                specs[prefix] = yaml.safe_load(path.read_text(encoding="utf-8"))
            except (OSError, yaml.YAMLError) as error:
                raise AnsibleLookupError(f"collection_variables: cannot read {path}: {error}") from error
        return [sorted(known_variables(specs))]
