"""The serve spec table and its two forms: the argv of one rank, and the environment of an image."""

from __future__ import annotations

import re

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_serve_spec import (
    ENV_PROFILES,
    RANK_SETTINGS,
    SPEC_SETTINGS,
    ServeSpecError,
    build_argv,
    build_env,
    lever_expectations,
)

MODEL = "/models/Qwen3.5-122B-A10B-FP8"
HEAD_IP = "192.168.177.11"

# eugr's two-Spark recipe for Qwen3.5-122B-A10B-FP8 (SPARK_FACTS §2.1), served with the mp executor.
SEED_SPEC = {
    "model": MODEL,
    "served_model_name": "qwen3.5-122b",
    "tensor_parallel_size": 2,
    "distributed_executor_backend": "mp",
    "gpu_memory_utilization": 0.7,
    "max_model_len": 262144,
    "kv_cache_dtype": "fp8",
    "load_format": "fastsafetensors",
    "port": 8000,
    "api_key": "sk-not-in-argv",
}


def two_ranks(spec=None, **rank):
    spec = spec or SEED_SPEC
    context = {"nnodes": 2, "master_addr": HEAD_IP, **rank}
    return build_argv(spec, {**context, "node_rank": 0}), build_argv(spec, {**context, "node_rank": 1})


# --- argv -------------------------------------------------------------------------------------------


def test_single_node_argv_in_table_order():
    spec = {
        "extra_args": ["--reasoning-parser", "qwen3", "--max-num-batched-tokens", 8192],
        "language_model_only": True,
        "enable_expert_parallel": True,
        "moe_backend": "marlin",
        "attention_backend": "FLASH_ATTN",
        "trust_remote_code": True,
        "host": "0.0.0.0",
        "ssl_keyfile": "/run/sparkinfer/tls/key.pem",
        "ssl_certfile": "/run/sparkinfer/tls/cert.pem",
        "enforce_eager": True,
        "max_num_seqs": 4,
        "data_parallel_size": 1,
        "pipeline_parallel_size": 1,
        **SEED_SPEC,
    }
    assert build_argv(spec) == [
        "vllm",
        "serve",
        MODEL,
        "--served-model-name",
        "qwen3.5-122b",
        "--tensor-parallel-size",
        "2",
        "--pipeline-parallel-size",
        "1",
        "--data-parallel-size",
        "1",
        "--distributed-executor-backend",
        "mp",
        "--max-model-len",
        "262144",
        "--gpu-memory-utilization",
        "0.7",
        "--kv-cache-dtype",
        "fp8",
        "--max-num-seqs",
        "4",
        "--enforce-eager",
        "--host",
        "0.0.0.0",
        "--port",
        "8000",
        "--ssl-certfile",
        "/run/sparkinfer/tls/cert.pem",
        "--ssl-keyfile",
        "/run/sparkinfer/tls/key.pem",
        "--trust-remote-code",
        "--load-format",
        "fastsafetensors",
        "--attention-backend",
        "FLASH_ATTN",
        "--moe-backend",
        "marlin",
        "--enable-expert-parallel",
        "--language-model-only",
        "--reasoning-parser",
        "qwen3",
        "--max-num-batched-tokens",
        "8192",
    ]


def test_minimal_spec_is_the_model_alone():
    assert build_argv({"model": "/models/tiny"}) == ["vllm", "serve", "/models/tiny"]


def test_false_switches_and_null_values_are_left_out():
    spec = {"model": "/m", "enforce_eager": False, "trust_remote_code": False, "kv_cache_dtype": None, "extra_args": []}
    assert build_argv(spec) == ["vllm", "serve", "/m"]


def test_the_api_key_is_never_in_argv():
    for argv in (build_argv(SEED_SPEC), *two_ranks()):
        assert "sk-not-in-argv" not in argv
        assert "--api-key" not in argv


@pytest.mark.parametrize(("value", "text"), [(0.7, "0.7"), (0.92, "0.92"), (1, "1"), (1.0, "1.0")])
def test_numbers_print_as_written(value, text):
    assert build_argv({"model": "/m", "gpu_memory_utilization": value})[-1] == text


def test_mp_ranks_differ_only_in_node_rank_and_headless():
    rank0, rank1 = two_ranks()
    assert rank0[-8:] == ["--nnodes", "2", "--node-rank", "0", "--master-addr", HEAD_IP, "--master-port", "29501"]
    assert rank1[-9:] == ["--nnodes", "2", "--node-rank", "1", "--master-addr", HEAD_IP, "--master-port", "29501", "--headless"]
    # Everything but the node-rank value and the trailing --headless is the same, item for item.
    assert rank1[-1] == "--headless"
    differing = [index for index, (left, right) in enumerate(zip(rank0, rank1[:-1])) if left != right]
    assert len(rank1) == len(rank0) + 1
    assert [rank0[index - 1] for index in differing] == ["--node-rank"]
    assert [(rank0[index], rank1[index]) for index in differing] == [("0", "1")]


def test_every_rank_of_four_gets_the_same_serve_flags():
    spec = {**SEED_SPEC, "tensor_parallel_size": 4}
    argvs = [build_argv(spec, {"nnodes": 4, "node_rank": rank, "master_addr": HEAD_IP, "gpus_per_node": 1}) for rank in range(4)]
    serve_flags = {tuple(argv[: argv.index("--nnodes")]) for argv in argvs}
    assert len(serve_flags) == 1
    assert ["--headless" in argv for argv in argvs] == [False, True, True, True]


def test_master_port_and_explicit_headless_are_taken():
    rank0, rank1 = two_ranks(master_port=25000, headless=None)
    assert rank0[-1] == "25000"
    assert rank1[-2:] == ["25000", "--headless"]
    follower = two_ranks()[1]
    assert follower == build_argv(SEED_SPEC, {"nnodes": 2, "node_rank": 1, "master_addr": HEAD_IP, "headless": True})


def test_ray_executor_has_no_node_flags():
    spec = {**SEED_SPEC, "distributed_executor_backend": "ray"}
    argv = build_argv(spec, {"nnodes": 2, "node_rank": 0, "gpus_per_node": 1})
    assert argv[argv.index("--distributed-executor-backend") + 1] == "ray"
    assert not {"--nnodes", "--node-rank", "--master-addr", "--master-port", "--headless"} & set(argv)
    assert argv == build_argv(spec)


def test_one_node_gets_no_rank_flags_whatever_the_context():
    assert build_argv(SEED_SPEC, {"nnodes": 1, "master_addr": HEAD_IP, "master_port": 1234}) == build_argv(SEED_SPEC)


# --- validation -------------------------------------------------------------------------------------


def test_unknown_key_is_named_with_the_allowed_keys():
    with pytest.raises(ServeSpecError, match=r"unknown key 'tensor_paralel_size' \(did you mean tensor_parallel_size\?\); allowed keys: model, "):
        build_argv({**SEED_SPEC, "tensor_paralel_size": 2})


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("tensor_parallel_size", "2", r"tensor_parallel_size must be an integer >= 1, got str '2'"),
        ("tensor_parallel_size", 0, r"tensor_parallel_size must be an integer >= 1, got int 0"),
        ("pipeline_parallel_size", True, r"pipeline_parallel_size must be an integer >= 1, got bool True"),
        ("max_model_len", 1.5, r"max_model_len must be an integer >= 1, got float 1.5"),
        ("gpu_memory_utilization", 0, r"gpu_memory_utilization must be a number in \(0, 1\], got int 0"),
        ("gpu_memory_utilization", 1.2, r"gpu_memory_utilization must be a number in \(0, 1\], got float 1.2"),
        ("gpu_memory_utilization", "0.7", r"gpu_memory_utilization must be a number in \(0, 1\], got str '0.7'"),
        ("distributed_executor_backend", "nccl", r"distributed_executor_backend must be one of ray, mp, got str 'nccl'"),
        ("enforce_eager", "yes", r"enforce_eager must be true or false, got str 'yes'"),
        ("port", 70000, r"port must be a port number 1-65535, got int 70000"),
        ("served_model_name", "", r"served_model_name must be a non-empty string"),
        ("model", 42, r"model must be a non-empty string, got int 42"),
        ("extra_args", "--foo bar", r"extra_args must be a list of strings or numbers, got str"),
        ("extra_args", ["--foo", None], r"extra_args must be a list of strings or numbers"),
        ("extra_args", ["--foo", True], r"extra_args must be a list of strings or numbers"),
    ],
)
def test_bad_types_are_named_with_what_the_key_takes(key, value, message):
    with pytest.raises(ServeSpecError, match=message):
        build_argv({**SEED_SPEC, key: value})


def test_model_is_required():
    with pytest.raises(ServeSpecError, match="model is required"):
        build_argv({"tensor_parallel_size": 1})


def test_spec_must_be_a_dictionary():
    with pytest.raises(ServeSpecError, match="serve spec must be a dictionary, got list"):
        build_argv(["vllm", "serve"])


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        (["--tensor-parallel-size", "4"], "tensor_parallel_size"),
        (["--tensor-parallel-size=4"], "tensor_parallel_size"),
        (["-tp", "4"], "tensor_parallel_size"),
        (["--api-key", "k"], "api_key"),
        (["--nnodes", "2"], "nnodes"),
        (["--headless"], "headless"),
        (["--model", "/other"], "model"),
        (["--enforce-eager"], "enforce_eager"),
        (["--ssl-keyfile", "/key.pem"], "ssl_keyfile"),
    ],
)
def test_extra_args_cannot_carry_what_a_key_sets(extra, key):
    with pytest.raises(ServeSpecError, match=f"which the spec key {key} sets"):
        build_argv({**SEED_SPEC, "extra_args": extra})


# vLLM's FlexibleArgumentParser turns _ into - in a long option's name (`--api_key` is `--api-key`), argparse splits
# `--flag=value` and `-tp=4`, and expands an unambiguous prefix of a long option (`--api-k` is `--api-key`).
@pytest.mark.parametrize(
    ("extra", "key"),
    [
        (["--api_key", "sk-secret"], "api_key"),
        (["--api_key=sk-secret"], "api_key"),
        (["--api-key=sk-secret"], "api_key"),
        (["--tensor_parallel_size=4"], "tensor_parallel_size"),
        (["--tensor_parallel_size", "4"], "tensor_parallel_size"),
        (["-tp=4"], "tensor_parallel_size"),
        (["--node_rank", "1"], "node_rank"),
        (["--served_model_name", "other"], "served_model_name"),
        (["--api-k", "sk-secret"], "api_key"),
        (["--api_ke=sk-secret"], "api_key"),
        (["--tensor", "4"], "tensor_parallel_size"),
        (["--max-model", "4096"], "max_model_len"),
    ],
)
def test_extra_args_spelled_another_way_are_refused_too(extra, key):
    with pytest.raises(ServeSpecError, match=f"which the spec key {key} sets") as error:
        build_argv({**SEED_SPEC, "extra_args": extra})
    # The flag is named as given and as vLLM reads it, never its value: that may be the API key.
    assert "sk-secret" not in str(error.value)
    assert extra[0].split("=", 1)[0] in str(error.value)
    with pytest.raises(ServeSpecError, match=f"which the spec key {key} sets"):
        build_env({"model": "/m", "extra_args": extra}, "sagemaker")


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--hf-token", "hf_PLANTED"], "--hf-token"),
        (["--hf-token=hf_PLANTED"], "--hf-token"),
        (["--hf_token", "hf_PLANTED"], "--hf_token \\(--hf-token to vLLM's parser\\)"),
        (["--hf-tok", "hf_PLANTED"], "--hf-tok \\(--hf-token to vLLM's parser\\)"),
        (["--hf-token"], "--hf-token"),
    ],
)
def test_extra_args_may_not_carry_the_hugging_face_token_and_the_error_names_the_variable_not_the_value(extra, named):
    with pytest.raises(ServeSpecError, match=rf"extra_args holds {named}, a secret on the command line.*as HF_TOKEN instead") as raised:
        build_argv({**SEED_SPEC, "extra_args": extra})
    assert "hf_PLANTED" not in str(raised.value)


@pytest.mark.parametrize("extra", [["--hf-overrides", '{"max_position_embeddings": 8}'], ["--hf-config-path", "/models/x"]])
def test_the_other_hf_options_pass(extra):
    assert extra[0] in build_argv({**SEED_SPEC, "extra_args": extra})


def test_extra_args_prefix_of_several_managed_flags_names_them_all():
    with pytest.raises(
        ServeSpecError, match=r"extra_args holds --h \(a prefix of --host, --headless\), which the spec keys host, headless set; set those keys"
    ):
        build_argv({**SEED_SPEC, "extra_args": ["--h", "x"]})


@pytest.mark.parametrize(
    "extra",
    [
        ["--reasoning-parser", "qwen3"],
        ["--reasoning_parser=qwen3"],
        ["--max-num-batched-tokens", 8192],
        ["--data-parallel-size-local", "1"],
        ["--seed", "-1"],
        ["--", "-x"],
        ["-O3"],
        ["--compilation-config", '{"cudagraph_mode": "piecewise"}'],
    ],
)
def test_extra_args_of_other_options_pass_unchanged(extra):
    assert build_argv({"model": "/m", "extra_args": extra}) == ["vllm", "serve", "/m", *map(str, extra)]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("model", "--help"),
        ("model", "-h"),
        ("served_model_name", "--api-key"),
        ("served_model_name", "-x"),
        ("host", "--port"),
        ("kv_cache_dtype", "-fp8"),
    ],
)
def test_a_value_that_vllm_would_read_as_a_flag_is_refused(key, value):
    message = rf"{key} must not start with '-' \(vllm serve would read it as an option\), got '{value}'"
    with pytest.raises(ServeSpecError, match=message):
        build_argv({**SEED_SPEC, key: value})
    with pytest.raises(ServeSpecError, match=message):
        build_env({**SEED_SPEC, key: value}, "sagemaker")


def test_a_rank_address_that_vllm_would_read_as_a_flag_is_refused():
    with pytest.raises(ServeSpecError, match=r"rank context: master_addr must not start with '-'"):
        build_argv(SEED_SPEC, {"nnodes": 2, "node_rank": 1, "master_addr": "--headless"})


def test_an_api_key_may_start_with_a_dash():
    # Never on the command line, so a leading - is only a character of the key.
    assert build_env({"model": "/m", "api_key": "-sk-dash"}) == {"VLLM_API_KEY": "-sk-dash"}


@pytest.mark.parametrize(
    ("rank", "message"),
    [
        ({"nnodes": 2, "node_rank": 0, "headless": True, "master_addr": HEAD_IP}, r"headless is True on node_rank 0: rank 0 serves the API"),
        ({"nnodes": 2, "node_rank": 1, "headless": False, "master_addr": HEAD_IP}, r"follower ranks \(node_rank > 0\) must be headless"),
        ({"nnodes": 1, "headless": True}, r"headless is for follower ranks"),
        ({"nnodes": 2, "node_rank": 2, "master_addr": HEAD_IP}, r"node_rank must be in 0..1 \(nnodes 2\), got 2"),
        ({"nnodes": 2, "node_rank": -1}, r"node_rank must be an integer >= 0, got int -1"),
        ({"nnodes": 2, "node_rank": 1}, r"master_addr .* is required with distributed_executor_backend mp"),
        ({"nnodes": 2, "master_addr": HEAD_IP, "gpus_per_node": 2}, r"= 2 must equal nnodes x gpus_per_node = 2 x 2 = 4"),
        ({"nnodes": 3, "master_addr": HEAD_IP}, r"tensor_parallel_size x pipeline_parallel_size = 2 must be a multiple of nnodes \(3\)"),
        ({"nnodes": 2, "master_addr": HEAD_IP, "node_rank": 0, "rank": 1}, r"unknown key 'rank'.*allowed keys: nnodes, node_rank"),
        ({"nnodes": 2, "master_port": 0, "master_addr": HEAD_IP}, r"master_port must be a port number 1-65535"),
    ],
)
def test_bad_rank_contexts_are_refused(rank, message):
    with pytest.raises(ServeSpecError, match=message):
        build_argv(SEED_SPEC, rank)


def test_gpus_per_node_matching_the_parallel_sizes_passes():
    spec = {**SEED_SPEC, "tensor_parallel_size": 1, "pipeline_parallel_size": 2}
    assert "--headless" in build_argv(spec, {"nnodes": 2, "node_rank": 1, "master_addr": HEAD_IP, "gpus_per_node": 1})
    single = {"model": "/m", "tensor_parallel_size": 2}
    with pytest.raises(ServeSpecError, match=r"2 x 1 x 1 = 2 must equal nnodes x gpus_per_node = 1 x 1 = 1"):
        build_argv(single, {"gpus_per_node": 1})


def test_multi_node_needs_an_executor():
    spec = {key: value for key, value in SEED_SPEC.items() if key != "distributed_executor_backend"}
    with pytest.raises(ServeSpecError, match=r"distributed_executor_backend must be one of ray, mp when nnodes is 2"):
        build_argv(spec, {"nnodes": 2, "master_addr": HEAD_IP})


def test_ray_runs_on_the_head_only():
    spec = {**SEED_SPEC, "distributed_executor_backend": "ray"}
    with pytest.raises(ServeSpecError, match=r"vllm serve runs on the Ray head only .*got node_rank 1"):
        build_argv(spec, {"nnodes": 2, "node_rank": 1})
    with pytest.raises(ServeSpecError, match=r"got node_rank 0, headless True"):
        build_argv(spec, {"nnodes": 2, "headless": True})


def test_data_parallel_across_mp_nodes_is_refused():
    spec = {**SEED_SPEC, "tensor_parallel_size": 1, "data_parallel_size": 2}
    with pytest.raises(ServeSpecError, match=r"data_parallel_size > 1 with distributed_executor_backend mp across nodes"):
        build_argv(spec, {"nnodes": 2, "master_addr": HEAD_IP})


def test_error_is_a_value_error():
    assert issubclass(ServeSpecError, ValueError)


# --- the table ----------------------------------------------------------------------------------------


def test_table_covers_the_issue_keys_once():
    keys = [setting.key for setting in SPEC_SETTINGS]
    assert len(keys) == len(set(keys))
    assert set(keys) == {
        "model",
        "served_model_name",
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "data_parallel_size",
        "distributed_executor_backend",
        "max_model_len",
        "gpu_memory_utilization",
        "kv_cache_dtype",
        "max_num_seqs",
        "enforce_eager",
        "host",
        "port",
        "ssl_certfile",
        "ssl_keyfile",
        "api_key",
        "trust_remote_code",
        "load_format",
        "attention_backend",
        "moe_backend",
        "speculative_config",
        "enable_expert_parallel",
        "language_model_only",
        "extra_args",
    }


def test_flags_are_unique_and_options_have_one():
    settings = SPEC_SETTINGS + RANK_SETTINGS
    flags = [setting.flag for setting in settings if setting.flag]
    assert len(flags) == len(set(flags))
    for setting in settings:
        assert (setting.flag is not None) == (setting.cli in ("option", "switch")), setting.key
        assert (setting.kind == "bool") == (setting.cli == "switch"), setting.key


def test_env_columns_name_known_profiles_and_valid_variables():
    for setting in SPEC_SETTINGS + RANK_SETTINGS:
        for profile, name in setting.env.items():
            assert profile in ENV_PROFILES, (setting.key, profile)
            assert re.match(r"^[A-Z_][A-Z0-9_]*$", name), (setting.key, name)


def test_sagemaker_column_follows_its_entrypoint_rule():
    # sagemaker_entrypoint.sh: SM_VLLM_<NAME> -> --<name lower-cased, _ -> ->; the model goes in --model.
    for setting in SPEC_SETTINGS:
        name = setting.env.get("sagemaker")
        if setting.key == "api_key":
            assert name == "VLLM_API_KEY"
        elif setting.cli in ("option", "switch", "positional"):
            flag = setting.flag or "--model"
            assert name == "SM_VLLM_" + flag[2:].upper().replace("-", "_"), setting.key


def test_api_key_goes_to_vllm_api_key_everywhere():
    api_key = next(setting for setting in SPEC_SETTINGS if setting.key == "api_key")
    assert api_key.cli == "never"
    assert set(api_key.env.values()) == {"VLLM_API_KEY"}
    assert set(api_key.env) == set(ENV_PROFILES)


# --- env ------------------------------------------------------------------------------------------------


def test_vllm_profile_is_the_api_key_alone():
    assert build_env(SEED_SPEC) == {"VLLM_API_KEY": "sk-not-in-argv"}
    assert build_env({"model": "/m"}) == {}
    # The argv carries the rest, so a multi-node rank is fine here.
    assert build_env(SEED_SPEC, "vllm", {"nnodes": 2, "node_rank": 1, "master_addr": HEAD_IP}) == {"VLLM_API_KEY": "sk-not-in-argv"}


def test_sagemaker_profile_expresses_the_whole_spec():
    spec = {**SEED_SPEC, "enforce_eager": True, "trust_remote_code": False}
    assert build_env(spec, "sagemaker") == {
        "SM_VLLM_MODEL": MODEL,
        "SM_VLLM_SERVED_MODEL_NAME": "qwen3.5-122b",
        "SM_VLLM_TENSOR_PARALLEL_SIZE": "2",
        "SM_VLLM_DISTRIBUTED_EXECUTOR_BACKEND": "mp",
        "SM_VLLM_MAX_MODEL_LEN": "262144",
        "SM_VLLM_GPU_MEMORY_UTILIZATION": "0.7",
        "SM_VLLM_KV_CACHE_DTYPE": "fp8",
        "SM_VLLM_ENFORCE_EAGER": "",
        "SM_VLLM_PORT": "8000",
        "VLLM_API_KEY": "sk-not-in-argv",
        "SM_VLLM_LOAD_FORMAT": "fastsafetensors",
    }


def test_env_images_serve_one_node_only():
    with pytest.raises(ServeSpecError, match=r"env profile sagemaker: no variable for nnodes; the image reads SM_VLLM_MODEL \(model\), "):
        build_env(SEED_SPEC, "sagemaker", {"nnodes": 2, "master_addr": HEAD_IP})
    ray = {**SEED_SPEC, "distributed_executor_backend": "ray"}
    assert build_env(ray, "sagemaker", {"nnodes": 2})["SM_VLLM_DISTRIBUTED_EXECUTOR_BACKEND"] == "ray"


def test_lisa_profile_and_what_it_cannot_express():
    spec = {"model": "/models/m", "served_model_name": "m", "tensor_parallel_size": 1, "max_model_len": 8192, "trust_remote_code": True}
    assert build_env(spec, "lisa") == {
        "LOCAL_MODEL_PATH": "/models/m",
        "MODEL_NAME": "m",
        "VLLM_TENSOR_PARALLEL_SIZE": "1",
        "VLLM_MAX_MODEL_LEN": "8192",
        "VLLM_TRUST_REMOTE_CODE": "true",
    }
    with pytest.raises(ServeSpecError, match=r"env profile lisa: no variable for port; the image reads LOCAL_MODEL_PATH \(model\)"):
        build_env({**spec, "port": 8000}, "lisa")
    with pytest.raises(ServeSpecError, match="no variable for extra_args"):
        build_env({**spec, "extra_args": ["--seed", 1]}, "lisa")
    # A false switch and an empty list ask for nothing, so nothing is missing.
    assert build_env({**spec, "enforce_eager": False, "extra_args": []}, "lisa") == build_env(spec, "lisa")


def test_custom_profile():
    profile = {
        "variables": {"model": "MODEL_PATH", "enforce_eager": "EAGER", "extra_args": "EXTRA", "api_key": "KEY"},
        "true_value": "1",
        "false_value": "0",
    }
    spec = {"model": "/m", "enforce_eager": False, "extra_args": ["--compilation-config", '{"cudagraph_mode": "piecewise"}'], "api_key": "k"}
    assert build_env(spec, profile) == {"MODEL_PATH": "/m", "EAGER": "0", "EXTRA": '--compilation-config \'{"cudagraph_mode": "piecewise"}\'', "KEY": "k"}
    with pytest.raises(ServeSpecError, match="no variable for port"):
        build_env({**spec, "port": 1}, profile)
    partial = {"variables": {"model": "MODEL_PATH"}, "complete": False}
    assert build_env({"model": "/m", "port": 1}, partial) == {"MODEL_PATH": "/m"}
    with pytest.raises(ServeSpecError, match="no variable for api_key"):
        build_env({"model": "/m", "api_key": "k"}, partial)


@pytest.mark.parametrize(
    ("profile", "message"),
    [
        ("runpod", r"unknown profile 'runpod'; known profiles: vllm, sagemaker, lisa"),
        (["vllm"], r"env profile must be a profile name or a dictionary, got list"),
        ({"variables": {}}, r"variables must be a non-empty dictionary"),
        ({"variables": {"modle": "M"}}, r"variables names unknown key 'modle'"),
        ({"variables": {"model": "1BAD"}}, r"variables.model must be an environment variable name"),
        ({"variables": {"model": "M"}, "true": "1"}, r"unknown key 'true'; allowed keys: variables, true_value, false_value, complete"),
        ({"variables": {"model": "M"}, "true_value": 1}, r"true_value must be a string or null, got int 1"),
        ({"variables": {"model": "M"}, "complete": "yes"}, r"complete must be true or false"),
    ],
)
def test_bad_profiles_are_refused(profile, message):
    with pytest.raises(ServeSpecError, match=message):
        build_env({"model": "/m"}, profile)


@pytest.mark.parametrize(
    ("spec", "profile", "variable", "key"),
    [
        ({"model": "/m", "api_key": "sk\nNCCL_IB_DISABLE=1"}, "vllm", "VLLM_API_KEY", "api_key"),
        ({"model": "/m", "api_key": "sk\rX=1"}, "vllm", "VLLM_API_KEY", "api_key"),
        ({"model": "/m", "api_key": "sk\x00"}, "vllm", "VLLM_API_KEY", "api_key"),
        ({"model": "/m\nLD_PRELOAD=/tmp/x.so"}, "sagemaker", "SM_VLLM_MODEL", "model"),
        ({"model": "/m", "served_model_name": "a\nb=c"}, "lisa", "MODEL_NAME", "served_model_name"),
        (
            {"model": "/m", "extra_args": ["--chat-template", "{{ x }}\nY=1"]},
            {"variables": {"model": "MODEL_PATH", "extra_args": "EXTRA"}},
            "EXTRA",
            "extra_args",
        ),
    ],
)
def test_env_values_with_a_line_break_or_nul_are_refused(spec, profile, variable, key):
    name = profile if isinstance(profile, str) else "custom"
    message = rf"env profile {name}: {variable} \(spec key {key}\) holds a newline, carriage return or NUL"
    with pytest.raises(ServeSpecError, match=message) as error:
        build_env(spec, profile)
    # The value is never shown: it may be the API key.
    assert "sk" not in str(error.value)
    assert "LD_PRELOAD" not in str(error.value)
    # The argv form carries no environment file: a line break there is only a character of one argument.
    if key != "api_key":
        assert build_argv(spec)


def test_env_validates_the_spec_like_argv():
    with pytest.raises(ServeSpecError, match="unknown key 'prot'"):
        build_env({"model": "/m", "prot": 8000}, "sagemaker")


def test_speculative_decoding_is_a_setting_carried_as_vllm_s_json():
    # The flag as vllm-project/recipes runs Nemotron 3 Super on a GB10: --speculative-config '{"method":"mtp","num_speculative_tokens":3}'.
    spec = {"model": "/m", "speculative_config": {"method": "mtp", "num_speculative_tokens": 3}}
    assert build_argv(spec)[3:] == ["--speculative-config", '{"method":"mtp","num_speculative_tokens":3}']


@pytest.mark.parametrize("value", [{"num_speculative_tokens": 3}, {"method": ""}, {"method": 1}, "mtp", ["mtp"]])
def test_a_speculative_config_without_a_method_is_refused_by_name(value):
    with pytest.raises(ServeSpecError, match="speculative_config must be a mapping with a non-empty string method"):
        build_argv({"model": "/m", "speculative_config": value})


def test_the_lever_expectations_are_what_the_spec_asks_and_nothing_it_leaves_to_vllm():
    spec = {"model": "/m", "load_format": "fastsafetensors", "speculative_config": {"method": "mtp", "num_speculative_tokens": 3}}
    assert lever_expectations(spec) == {"load_format": "fastsafetensors", "speculative_method": "mtp"}
    assert lever_expectations({"model": "/m"}) == {}
