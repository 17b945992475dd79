"""vllm_serve's settings: one precedence (the role's variable, vllm_serve_spec_overrides, the recipe, the role's fallback)
and one table of rules on its variables, on the collection's real recipes and the mistakes a user makes; vllm_serve's
preflight and validate_inventory.yml judge by the same rules."""

from __future__ import annotations

import pytest

from ansible_collections.sparkinfer.cluster.plugins.filter.recipe import vllm_recipe
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_serve_settings import setting_problems, settle

QWEN = vllm_recipe("qwen3.5-122b-a10b-fp8")
PAIR = ["spark-a", "spark-b"]
# The role's defaults (roles/vllm_serve/defaults/main.yml) on the worked pair, as the preflight passes them.
DEFAULTS = {
    "vllm_serve_hosts": PAIR,
    "vllm_serve_head_host": "spark-a",
    "vllm_serve_gpus_per_node": 1,
    "vllm_serve_tensor_parallel_size": None,
    "vllm_serve_pipeline_parallel_size": None,
    "vllm_serve_max_model_len": None,
    "vllm_serve_gpu_memory_utilization": None,
    "vllm_serve_kv_cache_dtype": None,
    "vllm_serve_enforce_eager": None,
    "vllm_serve_env_profile": None,
    "vllm_serve_spec_overrides": {},
    "vllm_serve_extra_env": {},
    "vllm_serve_log_max_size": "100m",
    "vllm_serve_log_max_files": 3,
    "vllm_serve_api_guard_enabled": True,
    "vllm_serve_api_open_paths": ["/health", "/metrics"],
    "vllm_serve_tls_certfile": "",
    "vllm_serve_tls_keyfile": "",
    "vllm_serve_tls_ca_file": "",
    "vllm_serve_api_key": "",
    "vllm_serve_ray_address": "",
}


def problems(recipe=None, **changed):
    return setting_problems("spark-a", {**DEFAULTS, **changed}, QWEN if recipe is None else recipe)


def test_the_worked_pair_with_its_recipe_and_the_defaults_has_no_problem():
    assert problems() == []
    assert problems(recipe={}) == []


def test_a_role_variable_wins_over_the_overrides_which_win_over_the_recipe_and_each_says_where_it_came_from():
    settings, sources = settle(
        QWEN,
        {**DEFAULTS, "vllm_serve_spec_overrides": {"max_model_len": 131072, "kv_cache_dtype": "auto"}, "vllm_serve_kv_cache_dtype": "fp8_e4m3"},
    )
    assert (settings["max_model_len"], sources["max_model_len"]) == (131072, "vllm_serve_spec_overrides")
    assert (settings["kv_cache_dtype"], sources["kv_cache_dtype"]) == ("fp8_e4m3", "vllm_serve_kv_cache_dtype")
    assert (settings["tensor_parallel_size"], sources["tensor_parallel_size"]) == (2, "recipe qwen3.5-122b-a10b-fp8")
    assert (settings["pipeline_parallel_size"], sources["pipeline_parallel_size"]) == (1, "the role's fallback")
    # The recipe's flags stay in the settings: the launch adds the role's after them.
    assert settings["extra_args"][:2] == ["--reasoning-parser", "qwen3"]


def test_without_a_recipe_or_a_size_the_tensor_parallel_size_is_one_rank_per_node():
    settings, sources = settle({}, {**DEFAULTS, "vllm_serve_hosts": ["spark-a", "spark-b", "spark-c"]})
    assert settings["tensor_parallel_size"] == 3
    assert sources["tensor_parallel_size"] == "one rank per node of vllm_serve_hosts"
    assert settings["gpu_memory_utilization"] == 0.7


def test_values_given_as_text_on_the_command_line_are_taken_as_the_argument_specification_types_them():
    settings = settle({}, {**DEFAULTS, "vllm_serve_gpu_memory_utilization": "0.8", "vllm_serve_max_model_len": "4096", "vllm_serve_enforce_eager": "yes"})[0]
    assert (settings["gpu_memory_utilization"], settings["max_model_len"], settings["enforce_eager"]) == (0.8, 4096, True)
    assert problems(vllm_serve_gpu_memory_utilization="0.8") == []


def test_a_gpu_memory_utilization_over_one_is_named_by_the_variable_that_set_it():
    # The mistake: caught in play 6 by the memory plan, after the image and model copies.
    assert problems(vllm_serve_gpu_memory_utilization=1.5) == [
        "vllm_serve_gpu_memory_utilization is 1.5: gpu_memory_utilization (--gpu-memory-utilization) must be a number in (0, 1]."
    ]
    assert problems(vllm_serve_spec_overrides={"gpu_memory_utilization": 0}) == [
        "gpu_memory_utilization is 0 (from vllm_serve_spec_overrides): gpu_memory_utilization (--gpu-memory-utilization) must be a number in (0, 1]."
    ]
    assert problems(vllm_serve_max_model_len=0) == ["vllm_serve_max_model_len is 0: max_model_len (--max-model-len) must be an integer >= 1."]


def test_a_role_variable_of_another_type_is_left_to_the_argument_specification_an_overrides_value_is_not():
    # validate_argument_spec names vllm_serve_tensor_parallel_size 'two' (drill 7): said once, not twice.
    assert problems(vllm_serve_tensor_parallel_size="two", vllm_serve_enforce_eager="sometimes") == []
    assert problems(vllm_serve_spec_overrides={"max_model_len": "4k"}) == [
        "max_model_len is '4k' (from vllm_serve_spec_overrides): max_model_len (--max-model-len) must be an integer >= 1."
    ]


def test_an_override_that_is_no_serve_setting_or_that_the_role_sets_is_named():
    said = problems(vllm_serve_spec_overrides={"port": 9000, "max_model_length": 4096})
    assert said[0] == "vllm_serve_spec_overrides sets port, which the role sets from vllm_serve_port: set that variable instead."
    assert said[1].startswith(
        "vllm_serve_spec_overrides has 'max_model_length', which is no serve setting (did you mean max_model_len?); the settings are model, "
    )


def test_sizes_that_do_not_multiply_to_the_gpus_are_named_with_where_each_came_from():
    assert problems(recipe={}, vllm_serve_tensor_parallel_size=2, vllm_serve_pipeline_parallel_size=2) == [
        "the tensor x pipeline x data parallel size is 2 x 2 x 1 = 4 (tensor_parallel_size from vllm_serve_tensor_parallel_size, "
        "pipeline_parallel_size from vllm_serve_pipeline_parallel_size), but vllm_serve_hosts has 2 nodes of 1 GPU (vllm_serve_gpus_per_node): "
        "vLLM places one rank on each GPU. Set the sizes to multiply to the GPUs, or the hosts."
    ]
    assert problems(recipe={}, vllm_serve_tensor_parallel_size=4, vllm_serve_gpus_per_node=2) == []


def test_a_recipe_on_fewer_sparks_than_it_is_served_on_says_why_by_the_memory_plan():
    said = problems(vllm_serve_hosts=["spark-a"], vllm_serve_head_host="spark-a")
    assert len(said) == 1
    assert said[0].startswith(
        "recipe qwen3.5-122b-a10b-fp8 is served on 2 Sparks (tensor x pipeline parallel size 2); the cluster has 1 (spark-a). "
        "Even with all of a Spark's memory free: The model does not fit"
    )
    assert said[0].endswith("Serve it on 2 Sparks, or choose a recipe for 1.")


def test_an_env_profile_must_be_one_the_collection_knows_and_keeps_the_api_guard_off():
    assert problems(recipe={}, vllm_serve_env_profile="sagemakr", vllm_serve_api_guard_enabled=False) == [
        "vllm_serve_env_profile is 'sagemakr': give one of vllm, sagemaker, lisa, or null for vLLM's command line."
    ]
    said = problems(recipe={}, vllm_serve_env_profile="sagemaker")
    assert said == [
        "vllm_serve_api_guard_enabled (the API key on every route) needs vLLM's command line for its --middleware, and the env profile "
        "sagemaker (from vllm_serve_env_profile) configures the image by its environment: set vllm_serve_api_guard_enabled to false to "
        "serve that image with vLLM's own guard, which covers /v1, /v2, /inference and /cohere only."
    ]


def test_the_head_must_be_one_of_the_hosts():
    assert problems(vllm_serve_head_host="spark-c") == ["vllm_serve_head_host is spark-c, which is not in vllm_serve_hosts (spark-a, spark-b)."]


@pytest.mark.parametrize(
    ("size", "files", "said"),
    [
        ("100mb", 3, ["vllm_serve_log_max_size is '100mb': Docker's json-file max-size is a positive integer with k, m or g, such as 100m."]),
        ("0m", 3, ["vllm_serve_log_max_size is '0m': Docker's json-file max-size is a positive integer with k, m or g, such as 100m."]),
        ("1g", 0, ["vllm_serve_log_max_files is 0: Docker keeps at least 1 log file."]),
        ("10K", 1, []),
    ],
)
def test_dockers_log_limits_are_what_its_json_file_driver_takes(size, files, said):
    assert problems(vllm_serve_log_max_size=size, vllm_serve_log_max_files=files) == said


def test_open_paths_are_plain_absolute_url_paths():
    assert problems(vllm_serve_api_open_paths=["/health", "metrics", "/a b"]) == [
        "vllm_serve_api_open_paths holds 'metrics', '/a b': give absolute URL paths of letters, digits and /._~- only, such as /health."
    ]


def test_tls_files_come_in_pairs_and_as_paths_docker_can_mount():
    assert problems(vllm_serve_tls_certfile="/etc/ssl/api.pem") == [
        "set both vllm_serve_tls_certfile and vllm_serve_tls_keyfile to serve HTTPS, or neither for HTTP."
    ]
    assert problems(vllm_serve_tls_ca_file="/etc/ssl/ca.pem") == [
        "vllm_serve_tls_ca_file is set but vllm_serve_tls_certfile is not: the CA file only verifies the API's TLS certificate."
    ]
    assert problems(vllm_serve_tls_certfile="/etc/ssl/api cert.pem", vllm_serve_tls_keyfile="/etc/ssl/api.key") == [
        "the TLS files must be absolute paths of letters, digits and /._+- (they are mounted into the container): '/etc/ssl/api cert.pem'."
    ]
    assert problems(vllm_serve_tls_certfile="/etc/ssl/api.pem", vllm_serve_tls_keyfile="/etc/ssl/api.key", vllm_serve_tls_ca_file="/etc/ssl/ca.pem") == []


def test_what_reaches_a_ranks_environment_file_holds_no_line_break_and_no_secret_is_quoted():
    said = problems(vllm_serve_api_key="s3cret\nVLLM_X=1", vllm_serve_ray_address="10.0.0.1:6379\r", vllm_serve_extra_env={"HF_TOKEN": "hf_x\ny"})
    assert said == [
        "vllm_serve_api_key has a line break, which would add variables to each rank's environment file.",
        "vllm_serve_ray_address has a line break, which would add variables to each rank's environment file.",
        'vllm_serve_extra_env has a line break in the value of "HF_TOKEN".',
    ]
    assert not any("s3cret" in sentence or "hf_x" in sentence for sentence in said)


def test_a_variable_the_inventory_does_not_set_leaves_its_rules_unjudged():
    # validate_inventory.yml passes what the inventory sets: the role's defaults are not there.
    assert setting_problems("spark-a", {}, {}) == []
    assert setting_problems("spark-a", {"vllm_serve_gpu_memory_utilization": 1.5}, {}) == [
        "vllm_serve_gpu_memory_utilization is 1.5: gpu_memory_utilization (--gpu-memory-utilization) must be a number in (0, 1]."
    ]
