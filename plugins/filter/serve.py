# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller-side planning for vllm_serve: a serve spec to argv or env, and the memory plan before launch."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._memory_plan import (
    DEFAULT_RESERVE_GIB,
    DEFAULT_STARTUP_FREE_GIB,
    MemoryPlanError,
    memory_plan_message,
    plan_memory,
    startup_free_message,
)
from ansible_collections.sparkinfer.cluster.plugins.module_utils._rank_env import extra_env_problems
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_serve_spec import ServeSpecError, build_argv, build_env, lever_expectations
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_wait import load_stall_bound


def _rank(**given):
    """The rank context from the filter's keywords; an omitted (None) one takes its default."""
    return {key: value for key, value in given.items() if value is not None}


def vllm_serve_argv(spec, *, nnodes=None, node_rank=None, master_addr=None, master_port=None, headless=None, gpus_per_node=None):
    """The ``vllm serve MODEL --flag value ...`` argv of one rank (never the API key)."""
    try:
        return build_argv(
            spec, _rank(nnodes=nnodes, node_rank=node_rank, master_addr=master_addr, master_port=master_port, headless=headless, gpus_per_node=gpus_per_node)
        )
    except ServeSpecError as exc:
        raise AnsibleFilterError(f"vllm_serve_argv: {exc}") from exc


def vllm_serve_env(spec, profile="vllm", *, nnodes=None, node_rank=None, master_addr=None, master_port=None, headless=None, gpus_per_node=None):
    """The environment variables an image reads for this spec (profile ``vllm``: what vLLM itself reads)."""
    try:
        return build_env(
            spec,
            profile,
            _rank(nnodes=nnodes, node_rank=node_rank, master_addr=master_addr, master_port=master_port, headless=headless, gpus_per_node=gpus_per_node),
        )
    except ServeSpecError as exc:
        raise AnsibleFilterError(f"vllm_serve_env: {exc}") from exc


def vllm_spec_expect(spec):
    """What the gate expects vLLM's log to say of the spec's loader and speculative decoding (load_format, speculative_method)."""
    try:
        return lever_expectations(spec)
    except ServeSpecError as exc:
        raise AnsibleFilterError(f"vllm_spec_expect: {exc}") from exc


def vllm_memory_plan(
    weights_bytes,
    *,
    nodes=None,
    gpu_memory_utilization=None,
    tensor_parallel_size=None,
    pipeline_parallel_size=None,
    reserve_gib=DEFAULT_RESERVE_GIB,
    kv_cache_bytes_per_token=None,
    max_model_len=None,
    startup_free_gib=DEFAULT_STARTUP_FREE_GIB,
):
    """The memory plan of a model across nodes, with ``message`` (what fits, or why not and the fix)."""
    try:
        plan = plan_memory(
            weights_bytes,
            nodes,
            gpu_memory_utilization,
            tensor_parallel_size=tensor_parallel_size,
            pipeline_parallel_size=pipeline_parallel_size,
            reserve_gib=reserve_gib,
            kv_cache_bytes_per_token=kv_cache_bytes_per_token,
            max_model_len=max_model_len,
            startup_free_gib=startup_free_gib,
        )
    except MemoryPlanError as exc:
        raise AnsibleFilterError(f"vllm_memory_plan: {exc}") from exc
    plan["message"] = memory_plan_message(plan)
    return plan


def vllm_startup_free_memory(readings, gpu_memory_utilization, page_cache_dropped):
    """'' when every node has the memory free vLLM's start-up check asks for, else why no rank was started and the fix."""
    try:
        return startup_free_message(readings, float(gpu_memory_utilization), bool(page_cache_dropped))
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"vllm_startup_free_memory: expected each node's gb10_facts by node name: {exc!r}") from exc


def vllm_extra_env_problems(extra_env, variable="vllm_serve_extra_env"):
    """Each problem of the extra variables of a rank's environment file, naming the variable, never a value."""
    return extra_env_problems(extra_env, variable)


def vllm_load_stall_timeout(weights_bytes, *, ranks=1, stall_timeout=300):
    """Seconds of silence loading a rank's share of the weights may take (vllm_wait's load_stall_timeout)."""
    try:
        return load_stall_bound(int(weights_bytes), int(ranks), float(stall_timeout))
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"vllm_load_stall_timeout: {exc}") from exc


class FilterModule:
    def filters(self):
        return {
            "vllm_serve_argv": vllm_serve_argv,
            "vllm_serve_env": vllm_serve_env,
            "vllm_spec_expect": vllm_spec_expect,
            "vllm_memory_plan": vllm_memory_plan,
            "vllm_startup_free_memory": vllm_startup_free_memory,
            "vllm_extra_env_problems": vllm_extra_env_problems,
            "vllm_load_stall_timeout": vllm_load_stall_timeout,
        }
