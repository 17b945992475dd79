# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection's serving recipes (recipes/<name>.yml), by name, and whether a cluster can serve one."""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._recipe import RecipeError, check_recipe, cluster_fit

# The collection's root: plugins/filter/recipe.py -> ../..
RECIPES_DIR = Path(__file__).resolve().parents[2] / "recipes"
# Where the roles put a recipe's model on the nodes by default (gb10_host_model_dir): its id's last part under it.
MODELS_DIR = "/opt/sparkinfer/models"


def recipe_names():
    """The names of the collection's recipes, sorted."""
    return sorted(path.stem for path in RECIPES_DIR.glob("*.yml"))


# A role's variables are templated again at every use, and each use of a recipe's setting calls the filter: a recipe is
# read and checked once per process and file version.
@functools.lru_cache(maxsize=64)
def _checked(name, modified_ns):
    with open(RECIPES_DIR / f"{name}.yml", encoding="utf-8") as handle:
        return check_recipe(name, yaml.safe_load(handle))


def load_recipe(name):
    """One recipe, read and checked; raises RecipeError (unknown name, or what is wrong with it)."""
    known = recipe_names()
    if not isinstance(name, str) or name not in known:
        raise RecipeError(f"no recipe is named {name!r}; the collection's recipes are {', '.join(known)}")
    return copy.deepcopy(_checked(name, (RECIPES_DIR / f"{name}.yml").stat().st_mtime_ns))


def vllm_recipe(name, variable=None):
    """The recipe of that name, as a dictionary (model, image, nodes, serve, expect, weights_bytes, sources ...), with
    model_dir, where the roles put its model on the nodes by default.

    An empty name is no recipe: {}. variable names the inventory variable the name came from, for the error.
    """
    if name == "":
        return {}
    try:
        recipe = load_recipe(name)
    except RecipeError as exc:
        raise AnsibleFilterError(f"{variable} is {name!r}: {exc}" if variable else f"vllm_recipe: {exc}") from exc
    return {**recipe, "model_dir": f"{MODELS_DIR}/{recipe['model'].split('/')[-1]}"}


def vllm_recipe_fit(recipe, hosts, variable="sparkinfer_recipe"):
    """``{fits, message}``: whether a cluster of these hosts (head first) can serve the recipe (a name or vllm_recipe's result).

    A name no recipe has fits no cluster: the message names the variable it came from and the recipes there are."""
    if isinstance(recipe, str) and recipe not in recipe_names():
        return {"fits": False, "message": f"{variable} is {recipe!r}: no recipe is named {recipe!r}; the collection's recipes are {', '.join(recipe_names())}."}
    try:
        if isinstance(recipe, str):
            checked = load_recipe(recipe)
        else:
            # vllm_recipe's result: the recipe and the model_dir it adds.
            checked = check_recipe(str(recipe.get("name")), {key: value for key, value in recipe.items() if key != "model_dir"})
        if not isinstance(hosts, list) or not all(isinstance(host, str) for host in hosts):
            raise RecipeError(f"the cluster's hosts must be a list of host names, got {hosts!r}")
        return cluster_fit(checked, hosts)
    except (RecipeError, AttributeError) as exc:
        raise AnsibleFilterError(f"vllm_recipe_fit: {exc}") from exc


class FilterModule:
    def filters(self):
        return {"vllm_recipe": vllm_recipe, "vllm_recipe_fit": vllm_recipe_fit}
