"""The serve spec a rank runs: the settled settings of a real recipe, then what the role decides per rank."""

from __future__ import annotations

import pytest

from ansible_collections.sparkinfer.cluster.plugins.filter.recipe import vllm_recipe
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_serve_rank_spec import rank_spec
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_serve_settings import settle

RECIPE = vllm_recipe("qwen3.5-122b-a10b-fp8")
MODEL = "/opt/sparkinfer/models/Qwen3.5-122B-A10B-FP8"
# The role's defaults for what the spec reads, on a pair.
VARIABLES = {
    "vllm_serve_hosts": ["spark-a", "spark-b"],
    "vllm_serve_model": MODEL,
    "vllm_serve_served_model_name": "",
    "vllm_serve_executor": "mp",
    "vllm_serve_port": 8000,
    "vllm_serve_tls_certfile": "",
    "vllm_serve_api_guard_enabled": False,
    "vllm_serve_extra_args": [],
}
TLS = {"certfile": "/run/sparkinfer/tls/cert.pem", "keyfile": "/run/sparkinfer/tls/key.pem"}


def spec(recipe=None, head=True, **variables):
    recipe = RECIPE if recipe is None else recipe
    given = {**VARIABLES, **variables}
    settings, _sources = settle(recipe, given)
    rank = {"head": head, "api_host": "192.168.177.11", "tls_mounts": TLS, "middleware": "sparkinfer_api_guard.GuardEveryRoute"}
    return rank_spec(settings, recipe, given, rank)


def test_a_pair_serves_the_recipe_over_mp_on_one_rank_per_node():
    served = spec()
    assert (served["model"], served["tensor_parallel_size"], served["pipeline_parallel_size"]) == (MODEL, 2, 1)
    assert served["distributed_executor_backend"] == "mp"
    assert served["served_model_name"] == "Qwen3.5-122B-A10B-FP8"
    assert (served["host"], served["port"], served["ssl_certfile"], served["ssl_keyfile"]) == ("192.168.177.11", 8000, None, None)
    assert served["extra_args"] == ["--reasoning-parser", "qwen3", "--enable-auto-tool-choice", "--tool-call-parser", "qwen3_coder"]
    # How the image reads its configuration and its environment are the rank's, not vLLM flags.
    assert "env_profile" not in served and "extra_env" not in served


def test_one_rank_of_mp_needs_no_executor_and_ray_keeps_its_own():
    one = {"vllm_serve_hosts": ["spark-a"], "vllm_serve_tensor_parallel_size": 1}
    assert spec(**one)["distributed_executor_backend"] is None
    assert spec(**one, vllm_serve_executor="ray")["distributed_executor_backend"] == "ray"
    assert spec(**one, vllm_serve_pipeline_parallel_size=2)["distributed_executor_backend"] == "mp"


def test_the_served_name_is_the_variable_else_the_settings_else_the_models_directory():
    overrides = {"vllm_serve_spec_overrides": {"served_model_name": "qwen-122b"}}
    assert spec(vllm_serve_served_model_name="qwen", **overrides)["served_model_name"] == "qwen"
    assert spec(**overrides)["served_model_name"] == "qwen-122b"
    assert spec(recipe={})["served_model_name"] == "Qwen3.5-122B-A10B-FP8"


def test_the_head_alone_serves_tls_and_the_guard_comes_after_the_recipes_and_the_users_flags():
    tls = {"vllm_serve_tls_certfile": "/etc/sparkinfer/tls/cert.pem"}
    assert (spec(**tls)["ssl_certfile"], spec(**tls)["ssl_keyfile"]) == (TLS["certfile"], TLS["keyfile"])
    assert spec(head=False, **tls)["ssl_certfile"] is None
    guarded = spec(vllm_serve_api_guard_enabled=True, vllm_serve_extra_args=["--max-num-seqs", "4"])
    assert guarded["extra_args"][-4:] == ["--max-num-seqs", "4", "--middleware", "sparkinfer_api_guard.GuardEveryRoute"]


def test_values_the_variables_give_as_strings_are_typed():
    typed = spec(vllm_serve_gpu_memory_utilization="0.8", vllm_serve_enforce_eager="true", vllm_serve_port="8001")
    assert (typed["gpu_memory_utilization"], typed["enforce_eager"], typed["port"]) == (0.8, True, 8001)


def test_a_variable_the_spec_needs_is_named_when_missing():
    settings, _sources = settle(RECIPE, VARIABLES)
    with pytest.raises(KeyError, match="vllm_serve_executor"):
        rank_spec(settings, RECIPE, {k: v for k, v in VARIABLES.items() if k != "vllm_serve_executor"}, {})
