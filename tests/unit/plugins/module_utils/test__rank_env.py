"""What vllm_serve_extra_env may put into a rank's environment file (_rank_env.py)."""

from __future__ import annotations

import pytest

from ansible_collections.sparkinfer.cluster.plugins.filter.serve import vllm_extra_env_problems
from ansible_collections.sparkinfer.cluster.plugins.module_utils._rank_env import ROLE_SET, extra_env_problems


def test_ordinary_variables_pass():
    assert extra_env_problems({"VLLM_CPU_KVCACHE_SPACE": "1", "HF_TOKEN": "hf_x", "PYTHONPATH": "/opt/x", "NCCL_DEBUG": "WARN", "N": 3}) == []


@pytest.mark.parametrize("name", sorted(ROLE_SET))
def test_a_name_the_role_sets_is_refused_naming_what_to_set_instead(name):
    [problem] = extra_env_problems({name: "sk-PLANTED"})
    assert problem.startswith(f"vllm_serve_extra_env sets {name}, which the role sets itself: set ")
    assert "PLANTED" not in problem


def test_the_api_key_names_its_variable():
    assert extra_env_problems({"VLLM_API_KEY": "sk-x"}) == [
        "vllm_serve_extra_env sets VLLM_API_KEY, which the role sets itself: set vllm_serve_api_key (or the key file vllm_serve_api_key_file) instead"
    ]


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ({"A=B": "x"}, 'vllm_serve_extra_env has the variable name "A=B" (holds = or a line break)'),
        ({"A\nB": "x"}, 'vllm_serve_extra_env has the variable name "A\\nB" (holds = or a line break)'),
        ({"TOKEN": "x\nVLLM_API_KEY=y"}, 'vllm_serve_extra_env has a line break in the value of "TOKEN"'),
        ({"TOKEN": "x\ry"}, 'vllm_serve_extra_env has a line break in the value of "TOKEN"'),
        ({"TOKEN": "x\x00y"}, 'vllm_serve_extra_env has a line break in the value of "TOKEN"'),
    ],
)
def test_a_line_break_or_an_equals_sign_in_a_name_is_refused_without_the_value(extra, problem):
    assert extra_env_problems(extra) == [problem]


def test_not_a_dictionary():
    assert vllm_extra_env_problems(["A=1"]) == ["vllm_serve_extra_env must be a dictionary of names to values, got list"]
