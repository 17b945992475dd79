"""The filters over vllm_serve's settings: what the role settles its serve spec with, and what validate_inventory.yml
judges of an inventory's values (the recipe read by its name, the cluster's nodes as the role defaults them)."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.recipe import vllm_recipe
from ansible_collections.sparkinfer.cluster.plugins.filter.serve_settings import (
    FilterModule,
    vllm_serve_rank_spec,
    vllm_serve_setting_problems,
    vllm_serve_settings,
)


def test_the_filters_are_registered():
    assert FilterModule().filters() == {
        "vllm_serve_settings": vllm_serve_settings,
        "vllm_serve_rank_spec": vllm_serve_rank_spec,
        "vllm_serve_setting_problems": vllm_serve_setting_problems,
    }


def test_the_settings_over_a_recipe():
    settings = vllm_serve_settings({"vllm_serve_hosts": ["spark-a", "spark-b"], "vllm_serve_max_model_len": 65536}, vllm_recipe("qwen3.5-122b-a10b-fp8"))
    assert (settings["tensor_parallel_size"], settings["max_model_len"], settings["kv_cache_dtype"]) == (2, 65536, "fp8")


def test_the_recipe_the_inventory_names_is_read_and_the_cluster_given_as_defaults():
    inventory = {"sparkinfer_recipe": "qwen3.5-122b-a10b-fp8"}
    assert vllm_serve_setting_problems(inventory, "spark-a", defaults={"vllm_serve_hosts": ["spark-a", "spark-b"]}) == []
    said = vllm_serve_setting_problems(inventory, "spark-a", defaults={"vllm_serve_hosts": ["spark-a"]})
    assert said[0].startswith("recipe qwen3.5-122b-a10b-fp8 is served on 2 Sparks")
    # What the inventory sets wins over the defaults.
    assert vllm_serve_setting_problems({**inventory, "vllm_serve_hosts": ["spark-a", "spark-b"]}, "spark-a", defaults={"vllm_serve_hosts": ["spark-a"]}) == []


def test_a_recipe_name_no_recipe_has_is_said_with_the_variable_and_the_recipes_there_are():
    said = vllm_serve_setting_problems({"sparkinfer_recipe": "qwen-nope"}, "spark-a")
    assert said[0].startswith("sparkinfer_recipe is 'qwen-nope': no recipe is named 'qwen-nope'; the collection's recipes are gpt-oss-120b, ")
    said = vllm_serve_setting_problems({"sparkinfer_recipe": "gpt-oss-120b", "vllm_serve_recipe": "nope"}, "spark-a")
    assert said[0].startswith("vllm_serve_recipe is 'nope': no recipe is named 'nope'")


def test_what_is_not_a_mapping_is_refused_by_name():
    with pytest.raises(AnsibleFilterError, match="vllm_serve_setting_problems: expected the variables as a mapping, got list"):
        vllm_serve_setting_problems([], "spark-a")
    with pytest.raises(AnsibleFilterError, match="vllm_serve_settings: expected the recipe as a mapping, got str"):
        vllm_serve_settings({}, "qwen")
