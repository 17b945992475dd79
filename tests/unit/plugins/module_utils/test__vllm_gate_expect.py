"""What the gate expects vLLM's log to say, layer over layer, and which source a contradiction names."""

from __future__ import annotations

from ansible_collections.sparkinfer.cluster.plugins.filter.recipe import vllm_recipe
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_gate_expect import gate_expectations

RECIPE = vllm_recipe("qwen3.5-122b-a10b-fp8")
# The architecture and quantization of the model's real config.json (fixtures/model_config/qwen3.5-122b-a10b-fp8.config.json).
MODEL = {"architecture": "Qwen3_5MoeForConditionalGeneration", "quantization": "fp8"}
SETTINGS = {"tensor_parallel_size": 2, "pipeline_parallel_size": 1}


def test_the_model_the_recipe_and_the_sizes_make_the_expectations_and_the_recipe_is_named():
    gate = gate_expectations(MODEL, RECIPE, SETTINGS, {}, {}, rdma=True)
    assert gate["expect"] == {**MODEL, **RECIPE["expect"], "tensor_parallel_size": 2, "pipeline_parallel_size": 1, "nccl_transport": "NET/IB"}
    assert gate["sources"] == dict.fromkeys(RECIPE["expect"], "recipe qwen3.5-122b-a10b-fp8")


def test_the_spec_s_loader_is_expected_and_named_and_the_inventory_wins_over_all():
    spec = {"model": "/m", "load_format": "fastsafetensors"}
    gate = gate_expectations(MODEL, {}, SETTINGS, spec, {}, rdma=False)
    assert (gate["expect"]["load_format"], gate["sources"]) == ("fastsafetensors", {"load_format": "the serve spec"})
    assert "nccl_transport" not in gate["expect"]
    given = gate_expectations(MODEL, RECIPE, SETTINGS, spec, {"load_format": "auto", "quantization": "awq_marlin"}, rdma=False)
    assert (given["expect"]["load_format"], given["expect"]["quantization"]) == ("auto", "awq_marlin")
    # What the inventory set is its own: no recipe or spec is named for it.
    assert "load_format" not in given["sources"] and "quantization" not in given["sources"]


def test_sizes_given_as_text_are_expected_as_numbers():
    gate = gate_expectations({}, {}, {"tensor_parallel_size": "2", "pipeline_parallel_size": "1"}, {}, {}, rdma=False)
    assert gate["expect"] == {"tensor_parallel_size": 2, "pipeline_parallel_size": 1}
