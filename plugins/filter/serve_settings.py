# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""vllm_serve's settled serve settings and the problems of its variables (module_utils/_vllm_serve_settings.py)."""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.recipe import recipe_names, vllm_recipe
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_serve_rank_spec import rank_spec
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_serve_settings import setting_problems, settle


def _mapping(name, value, what):
    if not isinstance(value, Mapping):
        raise AnsibleFilterError(f"{name}: expected {what} as a mapping, got {type(value).__name__}")
    return value


def vllm_serve_settings(variables, recipe):
    """The serve settings: each role variable that is set, over vllm_serve_spec_overrides, over the recipe's serve
    section (vllm_recipe's result, {} for none), over the role's fallbacks; the tensor parallel size else one per node."""
    settings, _sources = settle(_mapping("vllm_serve_settings", recipe, "the recipe"), _mapping("vllm_serve_settings", variables, "the variables"))
    return settings


def vllm_serve_rank_spec(settings, recipe, variables, rank):
    """The serve spec of a rank: the settled settings, then what the role decides (model, served name, sizes, executor,
    API address, the head's TLS files, the API guard)."""
    try:
        return rank_spec(
            _mapping("vllm_serve_rank_spec", settings, "the settings"),
            _mapping("vllm_serve_rank_spec", recipe, "the recipe"),
            _mapping("vllm_serve_rank_spec", variables, "the variables"),
            _mapping("vllm_serve_rank_spec", rank, "the rank"),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"vllm_serve_rank_spec: a value is missing or of the wrong type: {exc!r}") from exc


def named_recipe(variables, read=vllm_recipe):
    """The recipe the variables name (vllm_serve_recipe, else sparkinfer_recipe; {} for none) as read reads it, with the
    problem of a name no recipe has ([] when there is none)."""
    variable = "vllm_serve_recipe" if "vllm_serve_recipe" in variables else "sparkinfer_recipe"
    name = variables.get(variable, "")
    if name and name not in recipe_names():
        unknown = f"{variable} is {name!r}: no recipe is named {name!r}; the collection's recipes are {', '.join(recipe_names())}."
        return [unknown], read("", variable=variable)
    return [], read(name, variable=variable)


def vllm_serve_setting_problems(variables, node, recipe=None, defaults=None):
    """One sentence per problem of vllm_serve's variables on the node. Without a recipe, the one the variables name
    is read (named_recipe); an unknown name is a problem of its own. defaults: the values of variables the mapping lacks,
    as the role would default them (vllm_serve_hosts: the cluster's nodes)."""
    variables = ChainMap(_mapping("vllm_serve_setting_problems", variables, "the variables"), dict(defaults or {}))
    named = []
    if recipe is None:
        named, recipe = named_recipe(variables)
    return named + setting_problems(str(node), variables, _mapping("vllm_serve_setting_problems", recipe, "the recipe"))


class FilterModule:
    def filters(self):
        return {
            "vllm_serve_settings": vllm_serve_settings,
            "vllm_serve_rank_spec": vllm_serve_rank_spec,
            "vllm_serve_setting_problems": vllm_serve_setting_problems,
        }
