"""The collection's recipes: each one checked, what a recipe makes the role run, and what the checker refuses."""

from __future__ import annotations

import copy

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.recipe import FilterModule, load_recipe, recipe_names, vllm_recipe, vllm_recipe_fit
from ansible_collections.sparkinfer.cluster.plugins.module_utils._recipe import RecipeError, check_recipe, cluster_fit
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_serve_spec import build_argv

QWEN = "qwen3.5-122b-a10b-fp8"


def test_filters_are_registered():
    assert FilterModule().filters() == {"vllm_recipe": vllm_recipe, "vllm_recipe_fit": vllm_recipe_fit}


def test_the_collection_has_the_recipes_users_asked_for():
    assert recipe_names() == [
        "gpt-oss-120b",
        "nemotron-3-super-120b-a12b-nvfp4",
        "nemotron-3-ultra-550b-a55b-nvfp4",
        QWEN,
        "tiny-qwen3-moe",
    ]
    nodes = {name: vllm_recipe(name)["nodes"] for name in recipe_names()}
    assert nodes[QWEN] == 2 and nodes["gpt-oss-120b"] == 1 and 4 in nodes.values()
    assert any(vllm_recipe(name)["expect"]["quantization"].startswith("modelopt") for name in recipe_names() if "nvfp4" in name)


@pytest.mark.parametrize("name", recipe_names())
def test_every_recipe_passes_its_checks_and_has_the_documented_keys(name):
    recipe = vllm_recipe(name)
    assert {"model", "model_dir", "image", "nodes", "serve", "expect", "weights_bytes", "sources"} <= set(recipe)
    assert {"architecture", "quantization"} <= set(recipe["expect"])


def test_an_unknown_name_fails_listing_the_known_ones_and_the_variable():
    with pytest.raises(AnsibleFilterError) as raised:
        vllm_recipe("qwen3.5-122b", variable="sparkinfer_recipe")
    assert str(raised.value) == (
        "sparkinfer_recipe is 'qwen3.5-122b': no recipe is named 'qwen3.5-122b'; the collection's recipes are gpt-oss-120b, "
        "nemotron-3-super-120b-a12b-nvfp4, nemotron-3-ultra-550b-a55b-nvfp4, qwen3.5-122b-a10b-fp8, tiny-qwen3-moe"
    )


def test_an_empty_name_is_no_recipe():
    assert vllm_recipe("") == {}


def test_the_qwen_recipe_on_two_sparks_runs_what_its_sources_say():
    recipe = vllm_recipe(QWEN)
    assert recipe["model"] == "Qwen/Qwen3.5-122B-A10B-FP8"
    assert recipe["model_dir"] == "/opt/sparkinfer/models/Qwen3.5-122B-A10B-FP8"
    assert recipe["image"]["min_vllm_version"] == "0.17.0"
    assert recipe["expect"] == {"architecture": "Qwen3_5MoeForConditionalGeneration", "quantization": "fp8"}
    # What vllm_serve puts around the recipe's serve spec (tasks/launch.yml): the model path, the executor, the rank.
    spec = {**recipe["serve"], "model": "/opt/sparkinfer/models/Qwen3.5-122B-A10B-FP8", "distributed_executor_backend": "mp"}
    follower = build_argv(spec, {"nnodes": 2, "node_rank": 1, "master_addr": "192.168.177.11", "gpus_per_node": 1})
    assert follower == [
        "vllm",
        "serve",
        "/opt/sparkinfer/models/Qwen3.5-122B-A10B-FP8",
        "--tensor-parallel-size",
        "2",
        "--distributed-executor-backend",
        "mp",
        "--max-model-len",
        "262144",
        "--gpu-memory-utilization",
        "0.7",
        "--kv-cache-dtype",
        "fp8",
        "--reasoning-parser",
        "qwen3",
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "qwen3_coder",
        "--nnodes",
        "2",
        "--node-rank",
        "1",
        "--master-addr",
        "192.168.177.11",
        "--master-port",
        "29501",
        "--headless",
    ]


def test_the_qwen_recipe_on_one_spark_is_refused_by_the_memory_plan():
    fit = vllm_recipe_fit(QWEN, ["spark-1"])
    assert fit["fits"] is False
    assert fit["message"] == (
        "recipe qwen3.5-122b-a10b-fp8 is served on 2 Sparks (tensor x pipeline parallel size 2); the cluster has 1 (spark-1). "
        "Even with all of a Spark's memory free: The model does not fit 1 node (spark-1) at gpu_memory_utilization 0.7 (weights "
        "116.46 GiB, 116.46 GiB per node, reserve 5.00 GiB per node): spark-1: budget 85.18 GiB (0.7 x 121.69 GiB total) - weights "
        "116.46 GiB - reserve 5.00 GiB = KV -36.28 GiB, no room for a KV cache. Fix: serve it across 2 nodes like spark-1 with "
        "--tensor-parallel-size 2 (1 given). Serve it on 2 Sparks, or choose a recipe for 1."
    )


def test_a_cluster_of_the_recipes_size_fits_and_a_larger_one_is_told_to_split():
    assert vllm_recipe_fit(QWEN, ["spark-1", "spark-2"])["fits"] is True
    larger = vllm_recipe_fit(vllm_recipe(QWEN), ["a", "b", "c"])
    assert larger == {
        "fits": False,
        "message": "recipe qwen3.5-122b-a10b-fp8 is served on 2 Sparks (tensor x pipeline parallel size 2); the cluster has 3 (a, b, c): "
        "set sparkinfer_cluster_hosts to 2 of them, or group them into clusters of 2.",
    }


def test_a_recipe_whose_weights_fit_fewer_nodes_names_its_layout_only():
    # The tiny model fits anything: one node is refused for the recipe's two pipeline stages, with no memory plan to quote.
    fit = vllm_recipe_fit("tiny-qwen3-moe", ["spark-1"])
    assert fit["message"] == (
        "recipe tiny-qwen3-moe is served on 2 Sparks (tensor x pipeline parallel size 2); the cluster has 1 (spark-1). "
        "Serve it on 2 Sparks, or choose a recipe for 1."
    )


def test_a_name_no_recipe_has_fits_no_cluster_and_says_which_recipes_there_are():
    fit = vllm_recipe_fit("qwen-nope", ["spark-1", "spark-2"])
    assert fit == {
        "fits": False,
        "message": f"sparkinfer_recipe is 'qwen-nope': no recipe is named 'qwen-nope'; the collection's recipes are {', '.join(recipe_names())}.",
    }
    assert vllm_recipe_fit("qwen-nope", ["spark-1"], variable="recipe")["message"].startswith("recipe is 'qwen-nope'")


def test_fit_refuses_hosts_that_are_not_a_list_of_names():
    with pytest.raises(AnsibleFilterError, match=r"vllm_recipe_fit: the cluster's hosts must be a list of host names, got 'spark-1'"):
        vllm_recipe_fit(QWEN, "spark-1")


def broken(change) -> dict:
    recipe = copy.deepcopy(load_recipe(QWEN))
    change(recipe)
    return recipe


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.update(name="other"), "recipe qwen3.5-122b-a10b-fp8 says its name is 'other'"),
        (lambda r: r.pop("weights_bytes"), "recipe qwen3.5-122b-a10b-fp8 lacks weights_bytes"),
        (lambda r: r.update(flavour="x"), "recipe qwen3.5-122b-a10b-fp8 has unknown key(s) flavour"),
        (lambda r: r.update(model="Qwen/Qwen 3.5"), "model must be a model id such as Qwen/Qwen3.5-122B-A10B-FP8"),
        (lambda r: r["image"].update(name="nvcr.io/nvidia/vllm:26.03 py3"), "image.name must be an image reference"),
        (lambda r: r["image"].update(min_vllm_version="latest"), "image.min_vllm_version must be a release such as 0.17.0"),
        (
            lambda r: r["image"].update(name=r["image"]["name"] + "@sha256:" + "4" * 64),
            "image.name must be an image reference (name:tag; a pin is image.digest)",
        ),
        (lambda r: r["image"].update(digest="4413e0f2"), "image.digest must be a registry digest, sha256: and 64 hexadecimal digits"),
        (lambda r: r["image"].update(digest="sha256:" + "4" * 64), "no source for image.digest"),
        (lambda r: r.update(nodes=0), "nodes must be an integer >= 1, got 0"),
        (lambda r: r["serve"].update(port=8001), "serve sets port, which the vllm_serve role sets"),
        (lambda r: r["serve"].update(max_model_len="long"), "serve spec: max_model_len must be an integer >= 1, got str 'long'"),
        (lambda r: r["serve"].update(extra_args=["--tensor-parallel-size=4"]), "extra_args holds --tensor-parallel-size"),
        (lambda r: r["serve"].pop("tensor_parallel_size"), "serve.tensor_parallel_size is required"),
        (lambda r: r["serve"].update(pipeline_parallel_size=2), "tensor x pipeline x data parallel size is 4, but the recipe is for 2 nodes"),
        # Fewer ranks than nodes would leave a Spark idle, as more would ask for one the cluster lacks.
        (lambda r: r["serve"].update(tensor_parallel_size=1), "tensor x pipeline x data parallel size is 1, but the recipe is for 2 nodes"),
        (lambda r: r["serve"].update(env_profile="docker"), "serve.env_profile must be one of vllm, sagemaker, lisa, got 'docker'"),
        (lambda r: r["serve"].update(extra_env={"A": "1\nB=2"}), "serve.extra_env must map variable names to one-line strings"),
        (lambda r: r["expect"].update(architectures="X"), "expect has unknown key(s) architectures"),
        (lambda r: r["expect"].pop("quantization"), "expect.quantization is required"),
        (lambda r: r["expect"].update(tensor_parallel_size=[2]), "expect.tensor_parallel_size must be a string, an integer or null"),
        (lambda r: r["sources"].pop("serve.kv_cache_dtype"), "no source for serve.kv_cache_dtype"),
        (lambda r: r["sources"].update({"serve.load_format": "eugr"}), "sources names serve.load_format, which the recipe does not set"),
        (lambda r: r["sources"].update(model=""), "sources.model must be a non-empty string"),
    ],
)
def test_the_checker_refuses_a_recipe_that_cannot_be_used_as_it_is(change, message):
    with pytest.raises(RecipeError) as raised:
        check_recipe(QWEN, broken(change))
    assert message in str(raised.value)


def test_a_section_source_covers_its_settings():
    def one_source_for_serve(recipe):
        for key in list(recipe["sources"]):
            if key.startswith("serve."):
                del recipe["sources"][key]
        recipe["sources"]["serve"] = "eugr recipes/qwen3.5-122b-fp8.yaml"

    assert check_recipe(QWEN, broken(one_source_for_serve))["serve"]["kv_cache_dtype"] == "fp8"


@pytest.mark.parametrize("name", recipe_names())
def test_every_recipe_as_its_file_reads_passes_the_checker_unchanged(name):
    # load_recipe's copy is the file's content: checked again here, not from the filter's cache.
    assert check_recipe(name, load_recipe(name)) == load_recipe(name)


def test_a_recipe_may_weigh_a_single_byte():
    # The lower bound of weights_bytes (1), as nodes' is met by gpt-oss-120b's one node.
    assert check_recipe(QWEN, broken(lambda r: r.update(weights_bytes=1)))["weights_bytes"] == 1


def test_a_one_line_environment_value_with_any_letter_is_accepted():
    def arch_list(recipe):
        # A value with an upper-case X in it, and a source for the setting.
        recipe["serve"]["extra_env"] = {"TORCH_CUDA_ARCH_LIST": "12.1+PTX"}
        recipe["sources"]["serve.extra_env"] = "a test's own setting"

    assert check_recipe(QWEN, broken(arch_list))["serve"]["extra_env"] == {"TORCH_CUDA_ARCH_LIST": "12.1+PTX"}


def test_a_recipe_that_is_not_a_dictionary_is_refused():
    with pytest.raises(RecipeError) as raised:
        check_recipe(QWEN, ["Qwen/Qwen3.5-122B-A10B-FP8"])
    assert str(raised.value) == "recipe qwen3.5-122b-a10b-fp8 must be a dictionary, got list"


def test_a_name_that_is_not_lower_case_is_refused_saying_what_a_name_may_hold():
    with pytest.raises(RecipeError) as raised:
        check_recipe("Qwen3.5", broken(lambda r: r.update(name="Qwen3.5")))
    assert str(raised.value) == "recipe Qwen3.5: name must be lower-case letters, digits, . and -, got 'Qwen3.5'"


Q = "recipe qwen3.5-122b-a10b-fp8"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda r: r.update(flavour="x", colour="y"),
            f"{Q} has unknown key(s) colour, flavour; allowed: name, description, model, image, nodes, weights_bytes, serve, expect, sources",
        ),
        (lambda r: [r.pop("weights_bytes"), r.pop("expect")], f"{Q} lacks weights_bytes, expect"),
        (lambda r: r.update(description=""), f"{Q}: description must be a non-empty string, got ''"),
        (lambda r: r.update(image="nvcr.io/nvidia/vllm:26.03-py3"), f"{Q}: image must be a dictionary, got str"),
        (lambda r: r["image"].update(tag="26.03-py3"), f"{Q}: image has unknown key(s) tag; allowed: name, min_vllm_version, digest"),
        (lambda r: r.update(weights_bytes=0), f"{Q}: weights_bytes must be an integer >= 1, got 0"),
        (lambda r: r.update(serve=["--tensor-parallel-size", "2"]), f"{Q}: serve must be a dictionary, got list"),
        (
            lambda r: r["serve"].update(port=8001, host="0.0.0.0"),
            f"{Q}: serve sets host, port, which the vllm_serve role sets (its own variables); leave them out",
        ),
        (
            lambda r: r["serve"].update(data_parallel_size=2),
            f"{Q}: serve: tensor x pipeline x data parallel size is 4, but the recipe is for 2 nodes of one GB10 each",
        ),
        (lambda r: r["serve"].update(extra_env=["A=1"]), f"{Q}: serve.extra_env must be a dictionary, got list"),
        (lambda r: r["serve"].update(extra_env={"1A": "x"}), f"{Q}: serve.extra_env must map variable names to one-line strings, got '1A': 'x'"),
        (lambda r: r["serve"].update(extra_env={1: "x"}), f"{Q}: serve.extra_env must map variable names to one-line strings, got 1: 'x'"),
        (
            lambda r: r["expect"].pop("architecture"),
            f"{Q}: expect.architecture is required (what vLLM's log must show; quantization null for none)",
        ),
        (lambda r: r.update(sources="vllm-project/recipes"), f"{Q}: sources must be a dictionary, got str"),
        (
            lambda r: [r["sources"].pop("serve.max_model_len"), r["sources"].pop("serve.kv_cache_dtype")],
            f"{Q}: no source for serve.max_model_len, serve.kv_cache_dtype (sources maps each choice, or its section, to where it comes from)",
        ),
        (
            lambda r: r["sources"].update({"serve.load_format": "eugr", "serve.enforce_eager": "eugr"}),
            f"{Q}: sources names serve.enforce_eager, serve.load_format, which the recipe does not set",
        ),
    ],
)
def test_the_checkers_refusal_names_the_recipe_and_every_offending_key(change, message):
    with pytest.raises(RecipeError) as raised:
        check_recipe(QWEN, broken(change))
    assert str(raised.value) == message


def test_a_cluster_of_the_recipes_size_is_told_it_fits_in_the_singular_or_plural():
    assert cluster_fit(load_recipe(QWEN), ["spark-1", "spark-2"]) == {"fits": True, "message": f"{Q} is for 2 nodes: the cluster has 2."}
    assert cluster_fit(load_recipe("gpt-oss-120b"), ["spark-1"]) == {"fits": True, "message": "recipe gpt-oss-120b is for 1 node: the cluster has 1."}


def test_a_one_spark_recipe_on_two_is_told_to_take_one_of_them():
    assert cluster_fit(load_recipe("gpt-oss-120b"), ["spark-1", "spark-2"]) == {
        "fits": False,
        "message": "recipe gpt-oss-120b is served on 1 Spark (tensor x pipeline parallel size 1); the cluster has 2 (spark-1, spark-2): "
        "set sparkinfer_cluster_hosts to 1 of them, or group them into clusters of 1.",
    }


def test_a_cluster_without_hosts_gets_no_memory_plan():
    assert cluster_fit(load_recipe(QWEN), []) == {
        "fits": False,
        "message": f"{Q} is served on 2 Sparks (tensor x pipeline parallel size 2); the cluster has 0 (). Serve it on 2 Sparks, or choose a recipe for 0.",
    }


def test_the_memory_plan_on_fewer_sparks_spreads_the_weights_over_all_of_them_at_the_recipes_utilization():
    # Nemotron 3 Ultra (331 GB of weights, gpu_memory_utilization 0.8) on two of its four Sparks: 154.13 GiB each.
    fit = cluster_fit(load_recipe("nemotron-3-ultra-550b-a55b-nvfp4"), ["spark-1", "spark-2"])
    short = "budget 97.35 GiB (0.8 x 121.69 GiB total) - weights 154.13 GiB - reserve 5.00 GiB = KV -61.78 GiB, no room for a KV cache"
    assert fit == {
        "fits": False,
        "message": "recipe nemotron-3-ultra-550b-a55b-nvfp4 is served on 4 Sparks (tensor x pipeline parallel size 4); the cluster has 2 "
        "(spark-1, spark-2). Even with all of a Spark's memory free: The model does not fit 2 nodes (spark-1, spark-2) at "
        "gpu_memory_utilization 0.8 (weights 308.27 GiB, 154.13 GiB per node, reserve 5.00 GiB per node): "
        f"spark-1: {short}; spark-2: {short}. Fix: serve it across 4 nodes like spark-1 with --tensor-parallel-size 4 (2 given). "
        "Serve it on 4 Sparks, or choose a recipe for 2.",
    }


def test_weights_the_memory_plan_cannot_take_are_refused_naming_the_recipe():
    # A weight past the memory plan's range (2**63 bytes), which the checker's integer test lets through.
    with pytest.raises(RecipeError) as raised:
        cluster_fit(broken(lambda r: r.update(weights_bytes=1 << 63)), ["spark-1"])
    assert str(raised.value) == f"{Q}: memory plan: weights_bytes must be below 2**63, got int 9223372036854775808"
