"""The memory plan: the seed's numbers (a 119 GB FP8 model on one and on two Sparks), boundaries, inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._gb10 import parse_meminfo
from ansible_collections.sparkinfer.cluster.plugins.module_utils._memory_plan import (
    DEFAULT_RESERVE_GIB,
    DEFAULT_STARTUP_FREE_GIB,
    GIB,
    MemoryPlanError,
    memory_plan_message,
    plan_memory,
    startup_free_message,
)

# A DGX Spark: MemTotal 127601452 KiB = 121.69 GiB (SPARK_FACTS §2.1); MemAvailable after boot, caches dropped, ~119.5 GiB.
SPARK_TOTAL_KIB = 127601452
SPARK_AVAILABLE_KIB = 125304832  # 119.5 GiB
# Qwen3.5-122B-A10B-FP8: ~119 GB of safetensors = 110.83 GiB.
SEED_WEIGHTS = 119_000_000_000
SMALL_WEIGHTS = 30_000_000_000  # 27.94 GiB


def spark(name, available_kib=SPARK_AVAILABLE_KIB):
    return {"name": name, "mem_available_kib": available_kib, "mem_total_kib": SPARK_TOTAL_KIB}


ONE = [spark("spark-1")]
TWO = [spark("spark-1"), spark("spark-2")]


def test_defaults_are_the_documented_ones():
    assert DEFAULT_RESERVE_GIB == 5.0
    assert DEFAULT_STARTUP_FREE_GIB == 101.5


# --- the seed -------------------------------------------------------------------------------------------


def test_seed_model_does_not_fit_one_spark_at_eugrs_utilization():
    # 0.7 x 121.69 = 85.18 GiB budget (below MemAvailable 119.5), - 110.83 weights - 5 reserve = -30.64 GiB of KV.
    plan = plan_memory(SEED_WEIGHTS, ONE, 0.7)
    assert plan["fits"] is False
    assert plan["weights_gib"] == 110.83
    (node,) = plan["nodes"]
    assert node == {
        "name": "spark-1",
        "mem_available_gib": 119.5,
        "mem_total_gib": 121.69,
        "budget_gib": 85.18,
        "budget_limited_by": "gpu_memory_utilization",
        "weights_share_gib": 110.83,
        "reserve_gib": 5.0,
        "kv_budget_gib": -30.64,
        "startup_check_passes": True,
        "fits": False,
    }
    assert "spark-1: budget 85.18 GiB (0.7 x 121.69 GiB total) - weights 110.83 GiB - reserve 5.00 GiB = KV -30.64 GiB" in plan["reason"]
    # One node given: none of them suffices, but two like it would.
    assert (plan["suggested_nodes"], plan["suggested_node_names"]) == (None, None)
    assert (plan["needed_nodes"], plan["needed_nodes_like"], plan["nodes_given"]) == (2, "spark-1", 1)
    assert plan["min_gpu_memory_utilization"] is None
    assert "Fix: serve it across 2 nodes like spark-1 with --tensor-parallel-size 2 (1 given)." in memory_plan_message(plan)


def test_seed_model_fits_no_kv_cache_on_one_spark_at_any_utilization():
    # The most vLLM's startup check lets it take is 0.83 x 121.69 = 101.0 GiB (CUDA reports ~101-102 GiB free):
    # 101.0 - 110.83 - 5 = -14.82 GiB. Above 0.83 vLLM refuses to start at all.
    at_ceiling = plan_memory(SEED_WEIGHTS, ONE, 0.83)
    assert at_ceiling["max_gpu_memory_utilization"] == 0.83
    assert (at_ceiling["nodes"][0]["budget_gib"], at_ceiling["kv_budget_gib"]) == (101.0, -14.82)
    for percent in range(1, 101):
        plan = plan_memory(SEED_WEIGHTS, ONE, percent / 100)
        assert plan["fits"] is False, percent
        # Two Sparks hold it from 0.5 up (60.84 - 55.41 - 5 > 0); below, more (and below ~0.05, no number of them).
        assert plan["needed_nodes"] == 2 or percent < 50, percent
    refused = plan_memory(SEED_WEIGHTS, ONE, 0.9)
    assert refused["nodes"][0]["startup_check_passes"] is False
    assert "vLLM's startup check refuses gpu_memory_utilization 0.9 (109.52 GiB wanted, CUDA reports ~101.50 GiB free)" in refused["reason"]
    assert "Fix: lower --gpu-memory-utilization to 0.83 or less (vLLM's startup check), and then serve it across 2 nodes like spark-1" in memory_plan_message(
        refused
    )


def test_without_the_startup_check_the_arithmetic_alone_would_let_it_on():
    # Why the startup check matters: on MemAvailable alone, 0.96 x 121.69 GiB - 110.83 - 5 = 1.0 GiB of KV "fits".
    assert plan_memory(SEED_WEIGHTS, ONE, 0.95, startup_free_gib=None)["fits"] is False
    plan = plan_memory(SEED_WEIGHTS, ONE, 0.96, startup_free_gib=None)
    assert (plan["fits"], plan["kv_budget_gib"], plan["max_gpu_memory_utilization"]) == (True, 1.0, None)
    assert plan_memory(SEED_WEIGHTS, ONE, 0.7, startup_free_gib=None)["min_gpu_memory_utilization"] == 0.96


def test_seed_model_fits_two_sparks_with_tensor_parallel_2():
    # eugr's recipe: TP 2, 0.7. Each node: 85.18 GiB budget - 55.41 GiB of weights - 5 reserve = 24.77 GiB of KV.
    plan = plan_memory(SEED_WEIGHTS, TWO, 0.7, tensor_parallel_size=2)
    assert plan["fits"] is True
    assert plan["reason"] is None
    assert (plan["nodes_used"], plan["node_names"]) == (2, ["spark-1", "spark-2"])
    assert (plan["weights_share_gib"], plan["kv_budget_gib"]) == (55.41, 24.77)
    assert [node["kv_budget_gib"] for node in plan["nodes"]] == [24.77, 24.77]
    assert (plan["suggested_nodes"], plan["suggested_node_names"], plan["needed_nodes"]) == (2, ["spark-1", "spark-2"], 2)
    assert plan["min_gpu_memory_utilization"] == 0.5
    assert memory_plan_message(plan) == (
        "The model fits 2 nodes (spark-1, spark-2) at gpu_memory_utilization 0.7: weights 110.83 GiB, 55.41 GiB per node, "
        "reserve 5.00 GiB per node, KV budget 24.77 GiB per node."
    )


def test_two_sparks_given_but_one_used_suggests_both():
    plan = plan_memory(SEED_WEIGHTS, TWO, 0.7, tensor_parallel_size=1)
    assert plan["fits"] is False
    assert (plan["suggested_nodes"], plan["suggested_node_names"]) == (2, ["spark-1", "spark-2"])
    assert "Fix: serve it across 2 nodes (spark-1, spark-2) with --tensor-parallel-size 2." in memory_plan_message(plan)


def test_node_count_is_the_parallel_size_by_default():
    assert plan_memory(SEED_WEIGHTS, TWO, 0.7)["tensor_parallel_size"] == 2
    pipelined = plan_memory(SEED_WEIGHTS, TWO, 0.7, pipeline_parallel_size=2)
    assert (pipelined["tensor_parallel_size"], pipelined["pipeline_parallel_size"], pipelined["fits"]) == (1, 2, True)


def test_a_30_gb_model_fits_one_spark():
    # 85.18 - 27.94 - 5 = 52.24 GiB of KV.
    plan = plan_memory(SMALL_WEIGHTS, ONE, 0.7)
    assert (plan["fits"], plan["weights_gib"], plan["kv_budget_gib"], plan["suggested_nodes"]) == (True, 27.94, 52.24, 1)
    # Given two, one is enough.
    assert plan_memory(SMALL_WEIGHTS, TWO, 0.7, tensor_parallel_size=1)["suggested_node_names"] == ["spark-1"]


# --- boundaries and arithmetic -----------------------------------------------------------------------------


def round_node(name="n", available_gib=100, total_gib=100):
    return {"name": name, "mem_available_kib": available_gib * 1024 * 1024, "mem_total_kib": total_gib * 1024 * 1024}


def test_kv_budget_of_exactly_zero_does_not_fit():
    # 0.5 x 100 GiB = 50 GiB budget; 45 GiB of weights + 5 GiB of reserve leave 0.
    exact = plan_memory(45 * GIB, [round_node()], 0.5, startup_free_gib=None)
    assert (exact["fits"], exact["kv_budget_gib"]) == (False, 0.0)
    assert "no room for a KV cache" in exact["reason"]
    one_byte = plan_memory(45 * GIB - 1, [round_node()], 0.5, startup_free_gib=None)
    assert (one_byte["fits"], one_byte["suggested_nodes"], one_byte["needed_nodes"]) == (True, 1, 1)
    # That byte holds one token of one byte.
    assert plan_memory(45 * GIB - 1, [round_node()], 0.5, kv_cache_bytes_per_token=1, startup_free_gib=None)["max_tokens"] == 1
    # Half a byte of KV is room too, when no request size is known to need more.
    assert plan_memory(45 * GIB - 0.5, [round_node()], 0.5, startup_free_gib=None)["fits"] is True


def test_budget_is_mem_available_when_that_is_lower():
    plan = plan_memory(10 * GIB, [round_node(available_gib=40)], 0.9, startup_free_gib=None)
    node = plan["nodes"][0]
    assert (node["budget_gib"], node["budget_limited_by"], node["kv_budget_gib"]) == (40.0, "mem_available", 25.0)
    short = plan_memory(36 * GIB, [round_node(available_gib=40)], 0.9, startup_free_gib=None)
    assert "budget 40.00 GiB (MemAvailable) - weights 36.00 GiB" in short["reason"]
    # Raising the utilization cannot help when MemAvailable is the limit.
    assert short["min_gpu_memory_utilization"] is None


def test_mem_available_stands_in_for_a_missing_total():
    plan = plan_memory(10 * GIB, [{"name": "n", "mem_available_kib": 50 * 1024 * 1024}], 0.5, startup_free_gib=None)
    assert (plan["nodes"][0]["mem_total_gib"], plan["nodes"][0]["budget_gib"]) == (50.0, 25.0)


def test_reserve_is_taken_per_node_and_may_be_zero():
    assert plan_memory(45 * GIB, [round_node()], 0.5, reserve_gib=0, startup_free_gib=None)["kv_budget_gib"] == 5.0
    assert plan_memory(40 * GIB, [round_node()], 0.5, reserve_gib=12, startup_free_gib=None)["kv_budget_gib"] == -2.0


def test_the_startup_check_matches_the_field():
    # 0.87 fails on a GB10 (MiaAI GLM-5.3 #47): 0.87 x 121.69 = 105.87 GiB > ~101-102 GiB free.
    assert plan_memory(SMALL_WEIGHTS, ONE, 0.87)["nodes"][0]["startup_check_passes"] is False
    assert plan_memory(SMALL_WEIGHTS, ONE, 0.87)["fits"] is False
    assert plan_memory(SMALL_WEIGHTS, ONE, 0.83)["fits"] is True
    message = memory_plan_message(plan_memory(SMALL_WEIGHTS, ONE, 0.87))
    assert message.endswith("Fix: lower --gpu-memory-utilization to 0.83 or less (vLLM's startup check).")


def test_kv_tokens_and_concurrency():
    # 24.77 GiB of KV on each of two nodes, 100 kB per token of the whole model (each node holds half of it).
    plan = plan_memory(SEED_WEIGHTS, TWO, 0.7, kv_cache_bytes_per_token=100_000, max_model_len=262144)
    kv_bytes = (0.7 * SPARK_TOTAL_KIB * 1024) - SEED_WEIGHTS / 2 - 5 * GIB
    assert plan["max_tokens"] == int(kv_bytes * 2 // 100_000) == 531920
    assert plan["max_concurrency"] == 2.03
    assert "(about 531,920 tokens, 2.03x concurrency at max_model_len 262144)" in memory_plan_message(plan)
    assert plan_memory(SEED_WEIGHTS, ONE, 0.7, kv_cache_bytes_per_token=100_000)["max_tokens"] == 0


def test_max_model_len_that_the_kv_budget_cannot_hold():
    plan = plan_memory(SEED_WEIGHTS, TWO, 0.7, kv_cache_bytes_per_token=200_000, max_model_len=524288)
    assert plan["fits"] is False
    assert "spark-1: KV budget 24.77 GiB < 48.83 GiB needed for one request of max_model_len 524288" in plan["reason"]
    message = memory_plan_message(plan)
    assert "lower --max-model-len to 265960 or less" in message
    assert "serve it across 3 nodes like spark-1 with --pipeline-parallel-size 3" in message
    assert plan["needed_nodes"] == 3


def test_suggestion_takes_the_nodes_with_room():
    busy = spark("spark-2", available_kib=20 * 1024 * 1024)  # a desktop session eating memory
    nodes = [spark("spark-1"), busy, spark("spark-3")]
    plan = plan_memory(SEED_WEIGHTS, nodes, 0.7, tensor_parallel_size=2)
    assert plan["fits"] is False
    assert plan["nodes"][1]["budget_limited_by"] == "mem_available"
    assert (plan["suggested_nodes"], plan["suggested_node_names"]) == (2, ["spark-1", "spark-3"])
    assert "serve it across 2 nodes (spark-1, spark-3) with --tensor-parallel-size 2" in memory_plan_message(plan)


def test_no_number_of_such_nodes_holds_it():
    tiny = [round_node(available_gib=4, total_gib=4)]
    plan = plan_memory(100 * GIB, tiny, 0.9, startup_free_gib=None)
    assert (plan["suggested_nodes"], plan["needed_nodes"]) == (None, None)
    assert "no number of nodes like these holds it" in memory_plan_message(plan)


# --- bad inputs ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"weights_bytes": 0}, r"weights_bytes must be a positive number, got int 0"),
        ({"weights_bytes": -1}, r"weights_bytes must be a positive number"),
        ({"weights_bytes": "119e9"}, r"weights_bytes must be a positive number, got str"),
        ({"weights_bytes": True}, r"weights_bytes must be a positive number, got bool"),
        ({"gpu_memory_utilization": 0}, r"gpu_memory_utilization must be a positive number"),
        ({"gpu_memory_utilization": 1.01}, r"gpu_memory_utilization must be in \(0, 1\], got 1.01"),
        ({"gpu_memory_utilization": None}, r"gpu_memory_utilization must be a positive number, got NoneType None"),
        ({"nodes": []}, r"nodes must be a non-empty list"),
        ({"nodes": "spark-1"}, r"nodes must be a non-empty list"),
        ({"nodes": ["spark-1"]}, r"nodes\[0\] must be a dictionary, got str"),
        ({"nodes": [{"mem_available_kib": 1}]}, r"nodes\[0\].name must be a non-empty string"),
        ({"nodes": [spark("a"), spark("a")]}, r"nodes\[1\].name 'a' is given twice"),
        ({"nodes": [spark("a", available_kib=0)]}, r"nodes\[0\].mem_available_kib \(a\) must be a positive integer"),
        ({"nodes": [spark("a", available_kib=-5)]}, r"nodes\[0\].mem_available_kib \(a\) must be a positive integer"),
        ({"nodes": [spark("a", available_kib=1.5)]}, r"mem_available_kib \(a\) must be a positive integer"),
        ({"nodes": [{**spark("a"), "mem_total_kib": 0}]}, r"nodes\[0\].mem_total_kib \(a\) must be a positive integer"),
        ({"nodes": [spark("a", available_kib=SPARK_TOTAL_KIB + 1)]}, r"nodes\[0\] \(a\): mem_available_kib exceeds mem_total_kib"),
        ({"nodes": [{**spark("a"), "mem_free_kib": 1}]}, r"unknown key 'mem_free_kib'; allowed keys: name, mem_available_kib, mem_total_kib"),
        ({"reserve_gib": -1}, r"reserve_gib must be a number >= 0, got int -1"),
        ({"kv_cache_bytes_per_token": 0}, r"kv_cache_bytes_per_token must be a positive number"),
        ({"max_model_len": 0}, r"max_model_len must be a positive integer"),
        ({"max_model_len": 1.5}, r"max_model_len must be a positive integer"),
        ({"startup_free_gib": 0}, r"startup_free_gib must be a positive number"),
        ({"tensor_parallel_size": 0}, r"tensor_parallel_size must be a positive integer"),
        ({"pipeline_parallel_size": -2}, r"pipeline_parallel_size must be a positive integer"),
        ({"tensor_parallel_size": 2, "pipeline_parallel_size": 2}, r"2 x 2 = 4 needs 4 nodes \(one GB10 GPU each\), 2 given"),
    ],
)
def test_bad_inputs_are_named(arguments, message):
    call = {"weights_bytes": SEED_WEIGHTS, "nodes": TWO, "gpu_memory_utilization": 0.7, **arguments}
    with pytest.raises(MemoryPlanError, match=message):
        plan_memory(**call)


def test_error_is_a_value_error():
    assert issubclass(MemoryPlanError, ValueError)


# --- numbers past the float range -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: plan_memory(10**400, ONE, 0.7), "weights_bytes"),
        (lambda: plan_memory(SEED_WEIGHTS, [{**spark("spark-1"), "mem_available_kib": 10**400}], 0.7), "nodes[0].mem_available_kib (spark-1)"),
        (lambda: plan_memory(SEED_WEIGHTS, [{**spark("spark-1"), "mem_total_kib": 10**400}], 0.7), "nodes[0].mem_total_kib (spark-1)"),
        (lambda: plan_memory(SEED_WEIGHTS, ONE, 0.7, kv_cache_bytes_per_token=10**400), "kv_cache_bytes_per_token"),
        (lambda: plan_memory(SEED_WEIGHTS, ONE, 0.7, max_model_len=10**400), "max_model_len"),
        (lambda: plan_memory(SEED_WEIGHTS, ONE, 0.7, reserve_gib=10**400), "reserve_gib"),
        (lambda: plan_memory(SEED_WEIGHTS, ONE, 0.7, startup_free_gib=10**400), "startup_free_gib"),
        (lambda: plan_memory(SEED_WEIGHTS, ONE, 0.7, tensor_parallel_size=10**400), "tensor_parallel_size"),
        (lambda: plan_memory(SEED_WEIGHTS, ONE, 10**400), "gpu_memory_utilization"),
    ],
)
def test_a_number_too_large_for_a_float_is_named_not_raised(call, named):
    with pytest.raises(MemoryPlanError) as error:
        call()
    message = str(error.value)
    assert message.startswith(f"memory plan: {named} must be below 2**63, got int 10000000000000000000... (401 characters)")


def test_a_finite_but_absurd_number_is_refused_before_its_products_overflow():
    # 1e300 KiB is a finite float, but in bytes it no longer is; the plan would print inf or raise.
    with pytest.raises(MemoryPlanError, match=r"nodes\[0\]\.mem_available_kib \(spark-1\) must be below 2\*\*63, got float 1e\+300"):
        plan_memory(SEED_WEIGHTS, [{"name": "spark-1", "mem_available_kib": 1e300}], 0.7)


def test_the_largest_number_allowed_still_plans():
    plan = plan_memory(2**63 - 1, ONE, 0.7)
    assert plan["fits"] is False
    assert plan["weights_bytes"] == 2**63


# --- vLLM's start-up check of free memory, right before the ranks start ---------------------------------


def _read(name):
    meminfo = parse_meminfo((Path(__file__).parent / "fixtures" / "gb10" / name).read_text(encoding="utf-8"))
    return {"memory_total_kib": meminfo["MemTotal"], "memory_free_kib": meminfo["MemFree"], "memory_cached_kib": meminfo["Cached"]}


# The lab host's real /proc/meminfo: MemTotal 24683584, MemFree 23015436 (93.2 %), Cached 1068752 KiB.
LAB_HOST = _read("meminfo-debian12-x86_64-lab-host.txt")


def test_every_node_with_its_share_free_passes_the_start_up_check():
    assert startup_free_message({"spark-1": LAB_HOST, "spark-2": LAB_HOST}, 0.93, True) == ""


def test_a_node_short_of_free_memory_is_named_with_its_figures_and_the_utilization_it_could_take():
    said = startup_free_message({"spark-1": LAB_HOST}, 0.99, True)
    assert said.startswith("spark-1 has less memory free than vLLM's start-up check asks for, so no rank was started: spark-1 has 21.9 GiB free")
    assert "(MemFree after the page-cache drop, with 1.0 GiB of page cache)" in said
    assert "vllm_serve_gpu_memory_utilization 0.99 of its 23.5 GiB asks for 23.3 GiB" in said
    assert said.endswith("a desktop session), or lower vllm_serve_gpu_memory_utilization to at most 0.93.")


def test_without_the_drop_the_fix_offers_it_and_every_short_node_is_named():
    said = startup_free_message({"spark-1": LAB_HOST, "spark-2": LAB_HOST}, 0.99, False)
    assert said.startswith("spark-1, spark-2 have less memory free than")
    assert "(MemFree with no page-cache drop," in said
    assert "set vllm_serve_drop_page_cache to true, or lower" in said


# --- whole plans and messages --------------------------------------------------------------------------


def test_a_node_the_startup_check_refuses_does_not_fit_though_its_kv_budget_would():
    # 0.87 x 121.69 = 105.87 GiB wanted, above the ~101.5 GiB CUDA reports free; the KV arithmetic alone leaves room.
    plan = plan_memory(SMALL_WEIGHTS, ONE, 0.87)
    assert plan["nodes"][0]["fits"] is False
    assert plan["nodes"][0]["kv_budget_gib"] > 0
    assert (plan["startup_free_gib"], plan["kv_cache_bytes_per_token"]) == (101.5, None)
    assert plan_memory(SMALL_WEIGHTS, ONE, 0.7, startup_free_gib=None)["startup_free_gib"] is None


def test_the_message_of_a_kv_budget_too_small_for_max_model_len_names_every_node_and_both_fixes():
    plan = plan_memory(SEED_WEIGHTS, TWO, 0.7, kv_cache_bytes_per_token=200_000, max_model_len=524288)
    assert [node["fits"] for node in plan["nodes"]] == [False, False]
    assert plan["kv_cache_bytes_per_token"] == 200_000
    short = "KV budget 24.77 GiB < 48.83 GiB needed for one request of max_model_len 524288"
    assert memory_plan_message(plan) == (
        "The model does not fit 2 nodes (spark-1, spark-2) at gpu_memory_utilization 0.7 (weights 110.83 GiB, 55.41 GiB per node, "
        f"reserve 5.00 GiB per node): spark-1: {short}; spark-2: {short}. Fix: lower --max-model-len to 265960 or less; or serve it "
        "across 3 nodes like spark-1 with --pipeline-parallel-size 3 (or a tensor x pipeline split whose product is 3) (2 given)."
    )


def test_the_nodes_given_are_not_suggested_when_only_a_third_would_spread_the_request_thin_enough():
    # 58.59 GiB of KV for one request of 524288 tokens: 29.30 GiB per node on two (above their 24.77), 19.53 on three.
    plan = plan_memory(SEED_WEIGHTS, TWO, 0.7, kv_cache_bytes_per_token=120_000, max_model_len=524288)
    assert (plan["fits"], plan["suggested_nodes"], plan["needed_nodes"]) == (False, None, 3)


def test_a_utilization_too_low_is_raised_to_the_least_that_fits():
    plan = plan_memory(SEED_WEIGHTS, TWO, 0.4, tensor_parallel_size=2)
    short = "budget 48.68 GiB (0.4 x 121.69 GiB total) - weights 55.41 GiB - reserve 5.00 GiB = KV -11.74 GiB, no room for a KV cache"
    assert memory_plan_message(plan) == (
        "The model does not fit 2 nodes (spark-1, spark-2) at gpu_memory_utilization 0.4 (weights 110.83 GiB, 55.41 GiB per node, "
        f"reserve 5.00 GiB per node): spark-1: {short}; spark-2: {short}. Fix: raise --gpu-memory-utilization to 0.5 on these nodes; "
        "or serve it across 3 nodes like spark-1 with --pipeline-parallel-size 3 (or a tensor x pipeline split whose product is 3) (2 given)."
    )


def test_one_other_node_is_suggested_in_the_singular():
    busy = spark("spark-1", available_kib=20 * 1024 * 1024)  # a desktop session eating memory
    plan = plan_memory(SMALL_WEIGHTS, [busy, spark("spark-2")], 0.7, tensor_parallel_size=1)
    assert memory_plan_message(plan) == (
        "The model does not fit 1 node (spark-1) at gpu_memory_utilization 0.7 (weights 27.94 GiB, 27.94 GiB per node, reserve 5.00 GiB "
        "per node): spark-1: budget 20.00 GiB (MemAvailable) - weights 27.94 GiB - reserve 5.00 GiB = KV -12.94 GiB, no room for a KV cache. "
        "Fix: serve it across 1 node (spark-2) with --tensor-parallel-size 1."
    )


def test_the_message_of_a_plan_with_a_token_count_but_no_max_model_len_has_no_concurrency():
    plan = plan_memory(SEED_WEIGHTS, TWO, 0.7, kv_cache_bytes_per_token=100_000)
    assert memory_plan_message(plan) == (
        "The model fits 2 nodes (spark-1, spark-2) at gpu_memory_utilization 0.7: weights 110.83 GiB, 55.41 GiB per node, "
        "reserve 5.00 GiB per node, KV budget 24.77 GiB per node (about 531,920 tokens)."
    )


def test_the_message_when_no_number_of_such_nodes_holds_it():
    plan = plan_memory(100 * GIB, [round_node(available_gib=4, total_gib=4)], 0.9, startup_free_gib=None)
    assert memory_plan_message(plan) == (
        "The model does not fit 1 node (n) at gpu_memory_utilization 0.9 (weights 100.00 GiB, 100.00 GiB per node, reserve 5.00 GiB per "
        "node): n: budget 3.60 GiB (0.9 x 4.00 GiB total) - weights 100.00 GiB - reserve 5.00 GiB = KV -101.40 GiB, no room for a KV cache. "
        "Fix: add nodes, free memory (MemAvailable) or serve a smaller quantization: no number of nodes like these holds it."
    )


# --- boundaries -----------------------------------------------------------------------------------------------


def test_mem_available_equal_to_the_utilizations_share_is_named_as_the_utilization():
    # 0.5 x 100 GiB = 50 GiB wanted, 50 GiB available.
    node = plan_memory(10 * GIB, [round_node(available_gib=50)], 0.5, startup_free_gib=None)["nodes"][0]
    assert (node["budget_gib"], node["budget_limited_by"]) == (50.0, "gpu_memory_utilization")


def test_the_startup_check_passes_a_utilization_that_wants_exactly_what_is_free():
    # 0.5 x 100 GiB = 50 GiB wanted, 50 GiB free at startup: passes, and 0.5 is the highest it allows.
    plan = plan_memory(10 * GIB, [round_node()], 0.5, startup_free_gib=50)
    assert (plan["nodes"][0]["startup_check_passes"], plan["fits"], plan["max_gpu_memory_utilization"]) == (True, True, 0.5)


def test_the_startup_ceiling_is_at_most_1_when_more_is_free_than_the_total():
    assert plan_memory(10 * GIB, [round_node()], 0.5, startup_free_gib=150)["max_gpu_memory_utilization"] == 1.0


def test_a_kv_budget_of_exactly_one_request_fits_and_the_floor_is_the_next_step_above():
    # 0.5 x 100 GiB - 40 GiB of weights - 5 reserve = 5 GiB of KV; 65536 tokens x 81920 bytes = 5 GiB: one request.
    plan = plan_memory(40 * GIB, [round_node()], 0.5, kv_cache_bytes_per_token=81920, max_model_len=65536, startup_free_gib=None)
    assert (plan["fits"], plan["suggested_nodes"], plan["max_tokens"], plan["max_concurrency"]) == (True, 1, 65536, 1.0)
    # 40 + 5 + 5 = 50 GiB needed of 100: 0.5 leaves no more than that, the floor is the next two-decimal step.
    assert plan["min_gpu_memory_utilization"] == 0.51


def test_no_utilization_fits_a_node_whose_mem_available_is_just_what_is_needed():
    # 45 GiB of weights + 5 of reserve = 50 GiB, all that is available.
    assert plan_memory(45 * GIB, [round_node(available_gib=50)], 0.4, startup_free_gib=None)["min_gpu_memory_utilization"] is None


def test_the_floor_may_be_a_utilization_of_1():
    # 94.5 GiB of weights + 5 of reserve = 99.5 GiB of the 100: only 1.0 holds it.
    assert plan_memory(94.5 * GIB, [round_node()], 0.5, startup_free_gib=None)["min_gpu_memory_utilization"] == 1.0


def test_no_floor_above_1_is_offered_for_a_need_a_byte_under_the_total():
    # 95 GiB less a byte of weights + 5 of reserve: a byte under the 100 GiB. The rounding takes a need within 1e-11 of a
    # step as on it, so the floor would be 1.01; a utilization above 1 is never offered (plan_memory refuses one).
    plan = plan_memory(95 * GIB - 1, [round_node()], 0.5, startup_free_gib=None)
    assert plan["min_gpu_memory_utilization"] is None


def test_nodes_short_of_mem_available_need_more_of_them():
    # Two Sparks with 60 GiB available each: 60 - 55.41 - 5 < 0, so not even both; three like them would hold it.
    nodes = [spark("spark-1", available_kib=60 * 1024 * 1024), spark("spark-2", available_kib=60 * 1024 * 1024)]
    plan = plan_memory(SEED_WEIGHTS, nodes, 0.7, tensor_parallel_size=2)
    assert (plan["fits"], plan["suggested_nodes"], plan["needed_nodes"]) == (False, None, 3)


def test_the_suggestion_keeps_the_inventorys_order_among_nodes_the_plan_holds_equal():
    # spark-1 has 105 GiB available, spark-2 119.5: both above the utilization's 85.18 GiB (at 0.7) and the ~101.5 GiB
    # the startup check allows (at 0.9); the first one used fails neither, so it stays the one suggested.
    nodes = [spark("spark-1", available_kib=105 * 1024 * 1024), spark("spark-2")]
    assert plan_memory(SMALL_WEIGHTS, nodes, 0.7, tensor_parallel_size=1, startup_free_gib=None)["suggested_node_names"] == ["spark-1"]
    assert plan_memory(SMALL_WEIGHTS, nodes, 0.9, tensor_parallel_size=1)["suggested_node_names"] == ["spark-1"]


def test_the_suggestion_heeds_the_startup_check():
    # At 0.96, MemAvailable alone would leave 0.99 GiB of KV on one Spark; the startup check's 101.5 GiB leaves none.
    plan = plan_memory(SEED_WEIGHTS, ONE, 0.96)
    assert (plan["suggested_nodes"], plan["needed_nodes"]) == (None, 2)


def test_one_node_is_the_least_needed():
    assert plan_memory(SMALL_WEIGHTS, ONE, 0.7)["needed_nodes"] == 1


def test_needed_nodes_counts_up_to_64():
    # Nodes like round_node() at 0.5 hold 45 GiB of weights each (50 GiB budget - 5 reserve), with KV > 0 above that.
    assert plan_memory(63 * 45 * GIB, [round_node()], 0.5, startup_free_gib=None)["needed_nodes"] == 64
    assert plan_memory(64 * 45 * GIB, [round_node()], 0.5, startup_free_gib=None)["needed_nodes"] is None


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"gpu_memory_utilization": {0.7}}, "memory plan: gpu_memory_utilization must be a positive number, got set {0.7}"),
        # A repr of 40 characters is shown whole; of 41, cut after its first 20.
        ({"weights_bytes": "x" * 38}, f"memory plan: weights_bytes must be a positive number, got str '{'x' * 38}'"),
        ({"weights_bytes": "x" * 39}, f"memory plan: weights_bytes must be a positive number, got str '{'x' * 19}... (41 characters)"),
        ({"weights_bytes": 2**63}, "memory plan: weights_bytes must be below 2**63, got int 9223372036854775808"),
        ({"nodes": [{**spark("a"), "name": ""}]}, "memory plan: nodes[0].name must be a non-empty string, got ''"),
    ],
)
def test_bad_inputs_are_named_in_full(arguments, message):
    call = {"weights_bytes": SEED_WEIGHTS, "nodes": TWO, "gpu_memory_utilization": 0.7, **arguments}
    with pytest.raises(MemoryPlanError) as raised:
        plan_memory(**call)
    assert str(raised.value) == message


def test_the_start_up_check_message_in_full():
    assert startup_free_message({"spark-1": LAB_HOST}, 0.99, True) == (
        "spark-1 has less memory free than vLLM's start-up check asks for, so no rank was started: spark-1 has 21.9 GiB free (MemFree "
        "after the page-cache drop, with 1.0 GiB of page cache), and vllm_serve_gpu_memory_utilization 0.99 of its 23.5 GiB asks for "
        '23.3 GiB: vLLM would stop with "Free memory on device ... on startup is less than desired GPU memory utilization". Stop what '
        "holds memory on that node (other containers: docker ps; a desktop session), or lower vllm_serve_gpu_memory_utilization to at "
        "most 0.93."
    )


def test_a_node_with_exactly_the_share_asked_for_free_passes_the_start_up_check():
    # The lab host with exactly half of its MemTotal (24683584 KiB) free, at 0.5.
    assert startup_free_message({"spark-1": {**LAB_HOST, "memory_free_kib": 12341792}}, 0.5, True) == ""


def test_the_floor_may_be_the_startup_ceiling_itself():
    # 44.5 GiB of weights + 5 of reserve = 49.5 GiB of 100: the floor is 0.5, which a startup check of 50 GiB free allows.
    assert plan_memory(44.5 * GIB, [round_node()], 0.4, startup_free_gib=50)["min_gpu_memory_utilization"] == 0.5


def test_no_shorter_max_model_len_is_offered_when_no_token_fits():
    # No room for a KV cache at all (about 0 tokens): a shorter context would not help.
    plan = plan_memory(SEED_WEIGHTS, ONE, 0.7, kv_cache_bytes_per_token=100_000, max_model_len=262144)
    assert memory_plan_message(plan) == (
        "The model does not fit 1 node (spark-1) at gpu_memory_utilization 0.7 (weights 110.83 GiB, 110.83 GiB per node, reserve 5.00 GiB "
        "per node): spark-1: budget 85.18 GiB (0.7 x 121.69 GiB total) - weights 110.83 GiB - reserve 5.00 GiB = KV -30.64 GiB, no room "
        "for a KV cache. Fix: serve it across 2 nodes like spark-1 with --tensor-parallel-size 2 (1 given)."
    )
