# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Everything validate_inventory.yml judges of an inventory, for every node at once, before any host changes: each role's
argument specification, the names the collection does not know (module_utils/_inventory_rules.py), the groups, and the
rules of nccl_network's, vllm_image's, ray_cluster's and vllm_serve's variables (module_utils/_nccl_settings.py,
_vllm_image_settings.py, _ray_cluster_settings.py, _vllm_serve_settings.py).

One call for the whole inventory: a task per node (and a validate_argument_spec per role) cost Ansible about 0.14 s a
node, 35 s for 256 nodes (bench/validate_inventory.py prints the figures).
"""

from __future__ import annotations

import functools
from collections import ChainMap
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import yaml
from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.sparkinfer.cluster.plugins.filter.recipe import vllm_recipe
from ansible_collections.sparkinfer.cluster.plugins.filter.serve_settings import named_recipe, vllm_serve_setting_problems
from ansible_collections.sparkinfer.cluster.plugins.module_utils._inventory_rules import (
    ROLE_PREFIXES,
    known_variables,
    outside_nodes,
    unknown_message,
    unknown_variables,
)
from ansible_collections.sparkinfer.cluster.plugins.module_utils._nccl_settings import setting_problems as nccl_network_problems
from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_cluster_settings import setting_problems as ray_cluster_problems
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_image_settings import setting_problems as vllm_image_problems

# The collection's root: plugins/filter/inventory_rules.py -> ../..
ROLES_DIR = Path(__file__).resolve().parents[2] / "roles"


# Each role's argument specification, by role name.
SPEC_PATHS = {prefix.rstrip("_"): ROLES_DIR / prefix.rstrip("_") / "meta" / "argument_specs.yml" for prefix in ROLE_PREFIXES}


@functools.lru_cache(maxsize=8)
def _role_specs(modified_ns: tuple[int, ...]) -> dict[str, dict]:
    specs = {}
    for role, path in SPEC_PATHS.items():
        try:
            specs[role] = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as error:
            raise AnsibleFilterError(f"inventory_findings: cannot read {path}: {error}") from error
    return specs


def role_specs() -> dict[str, dict]:
    """Each role's parsed meta/argument_specs.yml, by role name; read once per process and file version."""
    return _role_specs(tuple(path.stat().st_mtime_ns if path.exists() else 0 for path in SPEC_PATHS.values()))


def _plain(value):
    """A templated value as plain Python data: Ansible's lazy containers carry their templating context, which the
    validator's deep copy of the values would copy too (about 0.1 s a node)."""
    if isinstance(value, Mapping):
        return {_plain(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind(value)
    return value


def _argument_errors(specs: Mapping[str, dict], variables: Mapping) -> list[str]:
    """What each role's argument specification (its main entry point) says of the values the node sets, as the role's own
    check would say it when the role starts."""
    errors = []
    for role, spec in specs.items():
        options = spec["argument_specs"]["main"].get("options") or {}
        given = {name: _plain(variables[name]) for name in options if name in variables}
        if given:
            result = ArgumentSpecValidator(options).validate(given, validate_role_argument_spec=True)
            errors += [f"{role}: {message}." for message in result.error_messages]
    return errors


def plain_defaults(spec: Mapping) -> dict:
    """The defaults of a role's main entry point that are values, not templates (Ray's ports, say): what a rule judging
    several variables at once takes for those the inventory leaves to the role."""
    options = spec["argument_specs"]["main"].get("options") or {}
    return {
        name: option["default"]
        for name, option in options.items()
        if "default" in option and not (isinstance(option["default"], str) and "{{" in option["default"])
    }


@dataclass(frozen=True)
class _Judge:
    """What judging a node takes, settled once for the whole inventory."""

    hosts: list[str]
    specs: Mapping[str, dict]
    known: set[str]
    # Each role's defaults that are values, for the rules that judge several variables at once.
    defaults: Mapping[str, dict]
    # Each recipe read once for the whole inventory, not once per node (vllm_recipe deep-copies what it returns).
    read_recipe: Callable

    def _with_defaults(self, role: str, variables: Mapping, cluster: dict) -> ChainMap:
        """The node's variables over the cluster's hosts and the role's plain defaults."""
        return ChainMap(cast(MutableMapping, variables), cluster, self.defaults[role])

    def problems(self, node: str, variables: Mapping) -> list[str]:
        # The hosts variables default, as in the roles, to the cluster's nodes, else the play's.
        cluster_hosts = variables.get("sparkinfer_cluster_hosts", self.hosts)
        recipe_problems, recipe = named_recipe(variables, self.read_recipe)
        return [
            *_argument_errors(self.specs, variables),
            *unknown_message(unknown_variables(list(variables), self.known)),
            *nccl_network_problems(node, variables),
            *vllm_image_problems(node, self._with_defaults("vllm_image", variables, {"vllm_image_cluster_hosts": cluster_hosts})),
            *ray_cluster_problems(node, self._with_defaults("ray_cluster", variables, {"ray_cluster_hosts": cluster_hosts})),
            *recipe_problems,
            *vllm_serve_setting_problems(variables, node, recipe=recipe, defaults={"vllm_serve_hosts": cluster_hosts}),
        ]


def _judged_nodes(filter_name: str, hostvars, hosts, groups) -> dict[str, list[str]]:
    if not isinstance(hosts, list) or not all(isinstance(host, str) for host in hosts):
        raise AnsibleFilterError(f"{filter_name}: expected the nodes as a list of host names (ansible_play_hosts_all)")
    if not isinstance(groups, Mapping) or not all(isinstance(members, list) for members in groups.values()):
        raise AnsibleFilterError(f"{filter_name}: expected the inventory's groups (groups), each a list of hosts")
    specs = role_specs()
    defaults = {role: plain_defaults(specs[role]) for role in ("vllm_image", "ray_cluster")}
    judge = _Judge(hosts, specs, known_variables(specs), defaults, functools.lru_cache(maxsize=None)(vllm_recipe))
    problems = {}
    for node in hosts:
        variables = hostvars[node]
        if not isinstance(variables, Mapping):
            raise AnsibleFilterError(f"{filter_name}: expected hostvars, whose {node} is a mapping of its variables")
        problems[node] = judge.problems(node, variables)
    return problems


def inventory_findings(hostvars, hosts, groups):
    """One sentence per problem, each naming its node: for every node of hosts, the roles' argument specifications, the
    collection's names, nccl_network's, vllm_image's, ray_cluster's and vllm_serve's rules on the values the inventory
    sets; then the groups."""
    judged = _judged_nodes("inventory_findings", hostvars, hosts, groups)
    return [f"{node}: {problem}" for node, problems in judged.items() for problem in problems] + outside_nodes(groups)


def inventory_node_problems(hostvars, hosts, groups):
    """The same rules as inventory_findings, node by node: each node of hosts with its problems ([] for none), as the
    doctor reports them on a live cluster."""
    return _judged_nodes("inventory_node_problems", hostvars, hosts, groups)


class FilterModule:
    def filters(self):
        return {"inventory_findings": inventory_findings, "inventory_node_problems": inventory_node_problems}
