"""The launch inputs among vllm_serve's variables, and a node's record of them, as filters."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.launch_inputs import FilterModule, vllm_images_to_prune, vllm_launch_inputs, vllm_launch_inputs_of
from ansible_collections.sparkinfer.cluster.plugins.module_utils._launch_inputs import LAUNCH_INPUTS


def test_the_filters_are_registered():
    assert FilterModule().filters() == {
        "vllm_launch_inputs": vllm_launch_inputs,
        "vllm_launch_inputs_of": vllm_launch_inputs_of,
        "vllm_images_to_prune": vllm_images_to_prune,
    }


def test_the_inputs_are_taken_from_the_variables_and_nothing_else():
    variables = {name: f"value of {name}" for name in LAUNCH_INPUTS} | {"vllm_serve_api_key": "sk-secret", "vllm_serve_port": 8000}
    assert vllm_launch_inputs_of(variables) == {name: f"value of {name}" for name in LAUNCH_INPUTS}


def test_variables_without_an_input_are_refused_naming_it():
    variables = {name: None for name in LAUNCH_INPUTS if name != "vllm_serve_expect"}
    with pytest.raises(AnsibleFilterError, match=r"^vllm_launch_inputs_of: the variables lack vllm_serve_expect$"):
        vllm_launch_inputs_of(variables)
    with pytest.raises(AnsibleFilterError, match=r"expected vllm_serve's variables as a mapping, got list"):
        vllm_launch_inputs_of([])


def test_images_to_prune_takes_keep_as_the_role_gives_it_and_refuses_what_is_no_number():
    # A role default may reach the filter as text.
    assert vllm_images_to_prune(["a:1", "b:1"], "1", [], []) == {"remove": [], "images": ["a:1", "b:1"], "kept": {}}
    with pytest.raises(AnsibleFilterError, match=r"^vllm_images_to_prune: invalid literal for int\(\) with base 10: 'two'$"):
        vllm_images_to_prune(["a:1"], "two", [], [])
    with pytest.raises(AnsibleFilterError, match=r"^vllm_images_to_prune: vllm_serve_keep_images must be a whole number of 0 or more, got -1$"):
        vllm_images_to_prune(["a:1"], -1, [], [])
