"""The collection's recipes: each one checked, what a recipe makes the role run, and what the checker refuses."""

from __future__ import annotations

import copy

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.recipe import FilterModule, load_recipe, recipe_names, vllm_recipe, vllm_recipe_fit
from ansible_collections.sparkinfer.cluster.plugins.module_utils._recipe import RecipeError, check_recipe
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
