"""The serve filters: the module_utils results, keyword arguments as Jinja passes them, AnsibleFilterError on bad input."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.serve import (
    FilterModule,
    vllm_extra_env_problems,
    vllm_load_stall_timeout,
    vllm_memory_plan,
    vllm_serve_argv,
    vllm_serve_env,
    vllm_spec_expect,
    vllm_startup_free_memory,
)
from ansible_collections.sparkinfer.cluster.plugins.module_utils._memory_plan import memory_plan_message, plan_memory
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_serve_spec import build_argv, build_env

SPEC = {
    "model": "/models/Qwen3.5-122B-A10B-FP8",
    "tensor_parallel_size": 2,
    "distributed_executor_backend": "mp",
    "gpu_memory_utilization": 0.7,
    "api_key": "sk-test",
}
SPARKS = [
    {"name": "spark-1", "mem_available_kib": 125304832, "mem_total_kib": 127601452},
    {"name": "spark-2", "mem_available_kib": 125304832, "mem_total_kib": 127601452},
]


def test_the_spec_expect_filter_names_itself_on_a_bad_spec():
    assert vllm_spec_expect({"model": "/m", "speculative_config": {"method": "mtp"}}) == {"speculative_method": "mtp"}
    with pytest.raises(AnsibleFilterError, match=r"vllm_spec_expect: serve spec: speculative_config must be a mapping"):
        vllm_spec_expect({"model": "/m", "speculative_config": {"num_speculative_tokens": 3}})


def test_filters_are_registered():
    assert FilterModule().filters() == {
        "vllm_serve_argv": vllm_serve_argv,
        "vllm_serve_env": vllm_serve_env,
        "vllm_spec_expect": vllm_spec_expect,
        "vllm_memory_plan": vllm_memory_plan,
        "vllm_startup_free_memory": vllm_startup_free_memory,
        "vllm_extra_env_problems": vllm_extra_env_problems,
        "vllm_load_stall_timeout": vllm_load_stall_timeout,
    }


def test_argv_filter_takes_the_rank_as_keywords():
    rank = {"nnodes": 2, "node_rank": 1, "master_addr": "192.168.177.11"}
    assert vllm_serve_argv(SPEC, **rank) == build_argv(SPEC, rank)
    assert vllm_serve_argv(SPEC, nnodes=2, node_rank=1, master_addr="192.168.177.11")[-1] == "--headless"
    assert vllm_serve_argv(SPEC) == build_argv(SPEC)


def test_argv_filter_error_names_the_filter_and_key():
    with pytest.raises(AnsibleFilterError, match=r"vllm_serve_argv: serve spec: distributed_executor_backend must be one of ray, mp"):
        vllm_serve_argv({**SPEC, "distributed_executor_backend": "nccl"})
    with pytest.raises(AnsibleFilterError, match=r"vllm_serve_argv: rank context: headless is True on node_rank 0"):
        vllm_serve_argv(SPEC, nnodes=2, node_rank=0, master_addr="192.168.177.11", headless=True)


def test_env_filter():
    assert vllm_serve_env(SPEC) == {"VLLM_API_KEY": "sk-test"} == build_env(SPEC)
    assert vllm_serve_env(SPEC, "sagemaker")["SM_VLLM_TENSOR_PARALLEL_SIZE"] == "2"
    assert vllm_serve_env(SPEC, profile="vllm", nnodes=2, node_rank=1, master_addr="192.168.177.11") == {"VLLM_API_KEY": "sk-test"}
    with pytest.raises(AnsibleFilterError, match=r"vllm_serve_env: env profile sagemaker: no variable for nnodes"):
        vllm_serve_env(SPEC, "sagemaker", nnodes=2, master_addr="192.168.177.11")


def test_argv_filter_refuses_the_api_key_flag_however_spelled_without_showing_it():
    for extra in (["--api_key", "sk-leak"], ["--api_key=sk-leak"], ["--api-k=sk-leak"]):
        with pytest.raises(AnsibleFilterError, match=r"vllm_serve_argv: serve spec: extra_args holds --api[-_]k.*which the spec key api_key sets") as error:
            vllm_serve_argv({**SPEC, "extra_args": extra})
        assert "sk-leak" not in str(error.value)
    with pytest.raises(AnsibleFilterError, match=r"holds --tensor_parallel_size \(--tensor-parallel-size to vLLM's parser\)"):
        vllm_serve_argv({**SPEC, "extra_args": ["--tensor_parallel_size=4"]})


def test_argv_filter_refuses_a_model_vllm_would_read_as_a_flag():
    with pytest.raises(AnsibleFilterError, match=r"vllm_serve_argv: serve spec: model must not start with '-'.*got '--help'"):
        vllm_serve_argv({**SPEC, "model": "--help"})
    with pytest.raises(AnsibleFilterError, match=r"vllm_serve_env: serve spec: served_model_name must not start with '-'"):
        vllm_serve_env({**SPEC, "served_model_name": "-x"}, "lisa")


def test_env_filter_refuses_a_value_that_would_add_lines_to_the_env_file():
    with pytest.raises(AnsibleFilterError, match=r"vllm_serve_env: env profile vllm: VLLM_API_KEY \(spec key api_key\) holds a newline") as error:
        vllm_serve_env({**SPEC, "api_key": "sk-test\nNCCL_DEBUG=TRACE"})
    assert "NCCL_DEBUG" not in str(error.value)
    with pytest.raises(AnsibleFilterError, match=r"vllm_serve_env: env profile sagemaker: SM_VLLM_MODEL \(spec key model\) holds a newline"):
        vllm_serve_env({**SPEC, "model": "/m\x00"}, "sagemaker")


def test_memory_plan_filter_adds_the_message():
    plan = vllm_memory_plan(119_000_000_000, nodes=SPARKS[:1], gpu_memory_utilization=0.7)
    expected = plan_memory(119_000_000_000, SPARKS[:1], 0.7)
    assert plan["message"] == memory_plan_message(expected)
    assert {key: value for key, value in plan.items() if key != "message"} == expected
    assert plan["fits"] is False
    assert "serve it across 2 nodes like spark-1 with --tensor-parallel-size 2" in plan["message"]
    assert vllm_memory_plan(119_000_000_000, nodes=SPARKS, gpu_memory_utilization=0.7, tensor_parallel_size=2)["fits"] is True


def test_memory_plan_filter_startup_check_can_be_switched_off():
    assert vllm_memory_plan(119_000_000_000, nodes=SPARKS[:1], gpu_memory_utilization=0.96)["fits"] is False
    assert vllm_memory_plan(119_000_000_000, nodes=SPARKS[:1], gpu_memory_utilization=0.96, startup_free_gib=None)["fits"] is True


def test_memory_plan_filter_errors():
    with pytest.raises(AnsibleFilterError, match=r"vllm_memory_plan: memory plan: gpu_memory_utilization must be in \(0, 1\], got 1.5"):
        vllm_memory_plan(1, nodes=SPARKS, gpu_memory_utilization=1.5)
    with pytest.raises(AnsibleFilterError, match=r"vllm_memory_plan: memory plan: nodes must be a non-empty list"):
        vllm_memory_plan(1, gpu_memory_utilization=0.5)


# Weights read off real GB10 loads: Qwen3.5-122B-A10B-FP8 loads 2 x 58.23 GiB on two Sparks (its recipe); the Laguna
# log loaded 95.63 GiB on one (fixtures/vllm/public); the lab's tiny model is 860,680 bytes.
@pytest.mark.parametrize(
    ("weights_bytes", "ranks", "bound"),
    [(125_047_972_823, 2, 1193), (int(95.63 * 2**30), 1, 1959), (860_680, 2, 300), (0, 1, 300)],
    ids=["qwen3.5-122b-on-two", "laguna-on-one", "lab-tiny", "no-weights-known"],
)
def test_the_load_bound_is_a_ranks_share_of_the_weights_at_the_floor_rate_never_under_the_stall_bound(weights_bytes, ranks, bound):
    assert vllm_load_stall_timeout(weights_bytes, ranks=ranks, stall_timeout=300) == bound


@pytest.mark.parametrize(("weights_bytes", "ranks"), [(-1, 1), (1, 0), ("much", 1)])
def test_the_load_bound_refuses_sizes_and_ranks_it_cannot_use(weights_bytes, ranks):
    with pytest.raises(AnsibleFilterError, match="vllm_load_stall_timeout: "):
        vllm_load_stall_timeout(weights_bytes, ranks=ranks)


def test_the_start_up_free_memory_filter_refuses_readings_without_the_memory_figures():
    with pytest.raises(AnsibleFilterError, match="vllm_startup_free_memory: expected each node's gb10_facts by node name"):
        vllm_startup_free_memory({"spark-1": {"memory_total_kib": 1}}, 0.9, True)
